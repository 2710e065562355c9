package io.github.grpcretry.testing;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

/**
 * A name resolver, as DNS with TXT records or a discovery resolver is one, that answers with one address
 * and a service config of its own, parsed with the parser grpc-java (or whoever wraps it) hands the
 * resolver. Registered in grpc-java's default registry for one scheme while open. {@link #update} hands every
 * started resolver a new service config, as a DNS resolver does when the TXT record changed.
 */
public final class ServiceConfigResolverProvider extends AnsweringResolverProvider {

    private final InetSocketAddress address;
    private volatile Map<String, ?> serviceConfig;

    private ServiceConfigResolverProvider(String scheme, InetSocketAddress address, Map<String, ?> serviceConfig) {
        super(scheme);
        this.address = address;
        this.serviceConfig = serviceConfig;
    }

    /** Registers a resolver for {@code scheme}: every target of that scheme resolves to 127.0.0.1:{@code port}. */
    public static ServiceConfigResolverProvider register(String scheme, int port, Map<String, ?> serviceConfig) {
        ServiceConfigResolverProvider p = new ServiceConfigResolverProvider(scheme,
                new InetSocketAddress("127.0.0.1", port), serviceConfig);
        p.register();
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
        answerAgain();
    }

    @Override
    protected NameResolver.ResolutionResult answer(NameResolver.Args args) {
        NameResolver.ResolutionResult.Builder result = NameResolver.ResolutionResult.newBuilder()
                .setAddresses(List.of(new EquivalentAddressGroup(address)));
        Map<String, ?> current = serviceConfig;
        if (current != null) {
            result.setServiceConfig(args.getServiceConfigParser().parseServiceConfig(current));
        }
        return result.build();
    }
}
