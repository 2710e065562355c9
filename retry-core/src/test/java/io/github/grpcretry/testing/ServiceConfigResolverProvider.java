package io.github.grpcretry.testing;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * A name resolver, as DNS with TXT records or a discovery resolver is one, that answers with one address
 * and a service config of its own, parsed with the parser grpc-java (or whoever wraps it) hands the
 * resolver. Registered in grpc-java's default registry for one scheme while open. {@link #update} hands every
 * started resolver a new service config, as a DNS resolver does when the TXT record changed.
 */
public final class ServiceConfigResolverProvider extends NameResolverProvider implements AutoCloseable {

    private final String scheme;
    private final InetSocketAddress address;
    private volatile Map<String, ?> serviceConfig;
    /** Each started resolver's answer (the current service config), then what to run once the listener took it. */
    private final List<java.util.function.Consumer<Runnable>> started = new java.util.concurrent.CopyOnWriteArrayList<>();

    private ServiceConfigResolverProvider(String scheme, InetSocketAddress address, Map<String, ?> serviceConfig) {
        this.scheme = scheme;
        this.address = address;
        this.serviceConfig = serviceConfig;
    }

    /** Registers a resolver for {@code scheme}: every target of that scheme resolves to 127.0.0.1:{@code port}. */
    public static ServiceConfigResolverProvider register(String scheme, int port, Map<String, ?> serviceConfig) {
        ServiceConfigResolverProvider p = new ServiceConfigResolverProvider(scheme,
                new InetSocketAddress("127.0.0.1", port), serviceConfig);
        NameResolverRegistry.getDefaultRegistry().register(p);
        return p;
    }

    /**
     * A service config whose only method entry names {@code service} with a retry policy of
     * {@code maxAttempts} on UNAVAILABLE, backoff 1ms..2ms (numbers as a JSON parser gives them).
     */
    public static Map<String, ?> retryPolicy(String service, int maxAttempts) {
        return Map.of("methodConfig", List.of(Map.of(
                "name", List.of(Map.of("service", service)),
                "retryPolicy", Map.of("maxAttempts", (double) maxAttempts, "initialBackoff", "0.001s",
                        "maxBackoff", "0.002s", "backoffMultiplier", 2.0, "retryableStatusCodes", List.of("UNAVAILABLE")))));
    }

    /**
     * Every resolver started so far answers again, now with {@code next} as its service config (null: an
     * answer without one); returns once each channel's listener has taken the answer.
     */
    public void update(Map<String, ?> next) throws InterruptedException {
        serviceConfig = next;
        java.util.concurrent.CountDownLatch taken = new java.util.concurrent.CountDownLatch(started.size());
        for (java.util.function.Consumer<Runnable> answer : started) {
            answer.accept(taken::countDown);
        }
        if (!taken.await(10, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new AssertionError("the channels did not take the new service config within 10 s");
        }
    }

    /** The target a channel names to be resolved by this resolver. */
    public String target() {
        return scheme + ":///service";
    }

    @Override
    public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
        if (!scheme.equals(targetUri.getScheme())) {
            return null;
        }
        return new NameResolver() {
            private volatile java.util.function.Consumer<Runnable> answer;

            @Override
            public String getServiceAuthority() {
                return "localhost";
            }

            @Override
            public void start(Listener2 listener) {
                answer = then -> args.getSynchronizationContext().execute(() -> {
                    ResolutionResult.Builder result = ResolutionResult.newBuilder()
                            .setAddresses(List.of(new EquivalentAddressGroup(address)));
                    Map<String, ?> current = serviceConfig;
                    if (current != null) {
                        result.setServiceConfig(args.getServiceConfigParser().parseServiceConfig(current));
                    }
                    listener.onResult2(result.build());
                    then.run();
                });
                started.add(answer);
                answer.accept(() -> { });
            }

            @Override
            public void shutdown() {
                started.remove(answer);
            }
        };
    }

    @Override
    public String getDefaultScheme() {
        return scheme;
    }

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 5;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }

    @Override
    public void close() {
        NameResolverRegistry.getDefaultRegistry().deregister(this);
    }
}
