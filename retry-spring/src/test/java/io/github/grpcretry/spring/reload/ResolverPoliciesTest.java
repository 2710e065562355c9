package io.github.grpcretry.spring.reload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.channel.StreamResumptions;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.EquivalentAddressGroup;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessSocketAddress;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A name resolver's retry policies run by the interceptor engine ({@link PolicySources},
 * {@link ReloadableChannels#resolverServiceConfig}) on a real in-process channel whose resolver answers when
 * the test says: calls made before its first answer wait for it and run its policy; a call whose deadline
 * passes first fails with DEADLINE_EXCEEDED, a cancelled one closes CANCELLED; the channel's own entry wins
 * for its names; a reload of the channel's own configuration keeps the resolver's policies; an {@code xds:}
 * target gets one WARN per channel.
 */
class ResolverPoliciesTest {

    static final String CHANNEL = "inv";
    static final String SERVICE = SimpleServiceGrpc.SERVICE_NAME;

    ScriptedServer server;
    HeldResolverProvider resolver;
    ManagedChannel channel;
    ReloadableChannels channels;
    final List<String> warnings = new CopyOnWriteArrayList<>();
    final RetryLimiterRegistry limiters = new RetryLimiterRegistry();

    @BeforeEach
    void start() throws Exception {
        server = ScriptedServer.start("resolver-policies-" + System.nanoTime());
        server.script(a -> ScriptedServer.Action.fail(Status.Code.UNAVAILABLE));
        resolver = new HeldResolverProvider("held-" + System.nanoTime(), new InProcessSocketAddress(server.inProcessName()));
        NameResolverRegistry.getDefaultRegistry().register(resolver);
    }

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        NameResolverRegistry.getDefaultRegistry().deregister(resolver);
        server.close();
    }

    static RetryPolicy retry(int maxAttempts) {
        return new RetryPolicy(maxAttempts, Duration.ofMillis(1), Duration.ofMillis(2), 2, EnumSet.of(Status.Code.UNAVAILABLE),
                null);
    }

    static ChannelRetryConfig own(ServiceConfig sc) {
        return ChannelRetryConfig.of(CHANNEL, sc);
    }

    /** A channel with {@code sc} and an attempt cap of {@code cap}, every other setting at its default. */
    static ChannelRetryConfig capped(ServiceConfig sc, int cap) {
        return ChannelRetryConfig.of(CHANNEL, sc).withMaxAttemptsCap(cap);
    }

    static ChannelRetryConfigs only(ChannelRetryConfig config) {
        return ReloadableChannelsTest.only(config);
    }

    /** A service config map as a resolver supplies it: {@code maxAttempts} for the whole service. */
    static Map<String, ?> resolverConfig(int maxAttempts) {
        return Map.of("methodConfig", List.of(Map.of(
                "name", List.of(Map.of("service", SERVICE)),
                "retryPolicy", Map.of("maxAttempts", (double) maxAttempts, "initialBackoff", "0.001s",
                        "maxBackoff", "0.002s", "backoffMultiplier", 2.0, "retryableStatusCodes", List.of("UNAVAILABLE")))));
    }

    /** Builds the channel as a Boot line does with the interceptor engine: caps, the resolver watched, the engine. */
    void build(ChannelRetryConfig ownConfig) {
        channels = new ReloadableChannels(only(ownConfig), ChannelSetup.Engine.INTERCEPTOR, limiters);
        PolicySources sources = new PolicySources(ChannelSetup.Engine.INTERCEPTOR, c -> Set.of(), warnings::add, channels);
        InProcessChannelBuilder builder = InProcessChannelBuilder.forTarget(resolver.scheme + ":///svc");
        channels.built(CHANNEL);
        ChannelSetup.capUnderlyingRetries(builder);
        assertThat(sources.install(builder, CHANNEL, () -> channels.ownConfig(CHANNEL))).isTrue();
        builder.intercept(channels.interceptor(CHANNEL, (config, previous) -> List.of(ChannelSetup.engineInterceptor(config,
                ChannelSetup.Engine.INTERCEPTOR, limiters, RetryEventListener.NOOP, null, List.of(), null, null, previous,
                null, StreamResumptions.NONE))));
        channel = builder.build();
    }

    CompletableFuture<Status> unary(CallOptions options) {
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(SimpleServiceGrpc.getUnaryRpcMethod(), options);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.request(1);
        call.sendMessage(SimpleRequest.getDefaultInstance());
        call.halfClose();
        return closed;
    }

    @Test
    void callsMadeBeforeTheFirstAnswerWaitForItAndRunTheResolversPolicy() throws Exception {
        build(own(ServiceConfig.EMPTY));
        CompletableFuture<Status> early = unary(CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS));
        resolver.awaitStarted();
        assertThat(early).isNotDone();
        resolver.answer(resolverConfig(5));
        assertThat(early.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).as("the resolver's 5 attempts, made by the engine").isEqualTo(5);
        assertThat(server.arrivals()).extracting(a -> a.previousAttempts).containsExactly(null, 1, 2, 3, 4);
    }

    @Test
    void aCallWhoseDeadlinePassesBeforeTheFirstAnswerFailsWithDeadlineExceeded() throws Exception {
        build(own(ServiceConfig.EMPTY));
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> SimpleServiceGrpc
                .newBlockingStub(channel).withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                .unaryRpc(SimpleRequest.getDefaultInstance()));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(server.arrivalCount()).isZero();
    }

    @Test
    void aCallCancelledBeforeTheFirstAnswerClosesCancelled() throws Exception {
        build(own(ServiceConfig.EMPTY));
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(SimpleServiceGrpc.getUnaryRpcMethod(),
                CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.cancel("the application gave up", null);
        assertThat(closed.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(server.arrivalCount()).isZero();
    }

    @Test
    void theChannelsEntryWinsForItsNamesAndAReloadKeepsTheResolversPolicies() throws Exception {
        MethodName unary = MethodName.of(SERVICE, "UnaryRpc");
        ServiceConfig ownSc = new ServiceConfig(List.of(new MethodConfig(List.of(unary), null, null, null, null, retry(2),
                null)), null);
        build(own(ownSc));
        CompletableFuture<Status> first = unary(CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS));
        resolver.answer(resolverConfig(4));
        assertThat(first.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).as("UnaryRpc: the channel's own 2").isEqualTo(2);
        assertThat(channels.forChannel(CHANNEL).serviceConfig().find(SERVICE, "ServerStreamingRpc").retryPolicy()
                .maxAttempts()).as("the service's other methods: the resolver's 4").isEqualTo(4);
        assertThat(channels.ownConfig(CHANNEL).serviceConfig()).isEqualTo(ownSc);

        ServiceConfig reloaded = new ServiceConfig(ownSc.methodConfigs(), new RetryThrottlingPolicy(10, 0.1));
        ReloadableChannels.Result result = channels.reload(() -> only(own(reloaded)),
                List.of("grpc.retry.clients.inv.service-config.retry-throttling.max-tokens"));
        assertThat(result.channels().get(CHANNEL).outcome()).isEqualTo(ReloadableChannels.Outcome.APPLIED);
        ServiceConfig runs = channels.forChannel(CHANNEL).serviceConfig();
        assertThat(runs.retryThrottling()).isEqualTo(new RetryThrottlingPolicy(10, 0.1));
        assertThat(runs.find(SERVICE, "ServerStreamingRpc").retryPolicy().maxAttempts()).isEqualTo(4);
        assertThat(runs.find(SERVICE, "UnaryRpc").retryPolicy().maxAttempts()).isEqualTo(2);

        resolver.answerWithoutConfig();
        assertThat(channels.forChannel(CHANNEL).serviceConfig()).as("an answer without a config: the channel's own")
                .isEqualTo(reloaded);
    }

    @Test
    void layeredKeepsTheChannelsNamesAndThrottlingAndCapsTheResolversAttempts() {
        MethodName unary = MethodName.of(SERVICE, "UnaryRpc");
        MethodName wholeService = MethodName.of(SERVICE, null);
        ChannelRetryConfig ownConfig = capped( new ServiceConfig(List.of(new MethodConfig(
                List.of(unary), null, Duration.ofSeconds(1), null, null, null, null)), null), 3);
        ServiceConfig fromResolver = new ServiceConfig(List.of(
                new MethodConfig(List.of(unary, wholeService), null, null, null, null, retry(5), null)),
                new RetryThrottlingPolicy(7, 0.5));

        ServiceConfig layered = PolicySources.layered(ownConfig, fromResolver).serviceConfig();
        // the channel's entry for UnaryRpc wins although it has no policy; the rest of the service: the resolver's, capped at 3
        assertThat(layered.find(SERVICE, "UnaryRpc").retryPolicy()).isNull();
        assertThat(layered.find(SERVICE, "BidiStreamingRpc").names()).containsExactly(wholeService);
        assertThat(layered.find(SERVICE, "BidiStreamingRpc").retryPolicy().maxAttempts()).isEqualTo(3);
        assertThat(layered.retryThrottling()).as("the channel has none").isEqualTo(new RetryThrottlingPolicy(7, 0.5));

        ChannelRetryConfig throttled = capped( new ServiceConfig(ownConfig.serviceConfig()
                .methodConfigs(), new RetryThrottlingPolicy(20, 0.1)), 3);
        assertThat(PolicySources.layered(throttled, fromResolver).serviceConfig().retryThrottling())
                .isEqualTo(new RetryThrottlingPolicy(20, 0.1));
        assertThat(PolicySources.layered(ownConfig, null)).isSameAs(ownConfig);
    }

    @Test
    void anXdsTargetGetsOneWarnPerChannelWithTheInterceptorEngine() {
        PolicySources interceptor = new PolicySources(ChannelSetup.Engine.INTERCEPTOR, c -> Set.of(), warnings::add);
        interceptor.install(InProcessChannelBuilder.forTarget("xds:///inventory"), "inventory", () -> own(ServiceConfig.EMPTY));
        interceptor.install(InProcessChannelBuilder.forTarget("xds:///inventory"), "inventory", () -> own(ServiceConfig.EMPTY));
        interceptor.install(InProcessChannelBuilder.forTarget("dns:///inventory"), "other", () -> own(ServiceConfig.EMPTY));
        assertThat(warnings).singleElement().asString()
                .startsWith("Channel inventory (xds:///inventory): the retry and hedging policies of its xDS routes")
                .contains("grpc.retry.engine=native");

        warnings.clear();
        new PolicySources(ChannelSetup.Engine.NATIVE, c -> Set.of(), warnings::add)
                .install(InProcessChannelBuilder.forTarget("xds:///inventory"), "inventory", () -> own(ServiceConfig.EMPTY));
        assertThat(warnings).as("the native engine runs the routes' policies").isEmpty();
    }

    /**
     * A resolver for one scheme that answers (with the in-process address and a service config, or none) only
     * when the test calls {@link #answer}, on the channel's synchronization context.
     */
    static final class HeldResolverProvider extends NameResolverProvider {

        final String scheme;
        private final SocketAddress address;
        private final CompletableFuture<Held> started = new CompletableFuture<>();

        private record Held(NameResolver.Listener2 listener, NameResolver.Args args) {
        }

        HeldResolverProvider(String scheme, SocketAddress address) {
            this.scheme = scheme;
            this.address = address;
        }

        Held awaitStarted() throws Exception {
            return started.get(10, TimeUnit.SECONDS);
        }

        /** Answers with {@code serviceConfig}; returns once the channel's listener took it. */
        void answer(Map<String, ?> serviceConfig) throws Exception {
            deliver(serviceConfig);
        }

        void answerWithoutConfig() throws Exception {
            deliver(null);
        }

        private void deliver(Map<String, ?> serviceConfig) throws Exception {
            Held held = awaitStarted();
            CompletableFuture<Void> taken = new CompletableFuture<>();
            held.args().getSynchronizationContext().execute(() -> {
                NameResolver.ResolutionResult.Builder result = NameResolver.ResolutionResult.newBuilder()
                        .setAddresses(List.of(new EquivalentAddressGroup(address)));
                if (serviceConfig != null) {
                    result.setServiceConfig(held.args().getServiceConfigParser().parseServiceConfig(serviceConfig));
                }
                held.listener().onResult2(result.build());
                taken.complete(null);
            });
            taken.get(10, TimeUnit.SECONDS);
        }

        @Override
        public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
            if (!scheme.equals(targetUri.getScheme())) {
                return null;
            }
            return new NameResolver() {
                @Override
                public String getServiceAuthority() {
                    return "localhost";
                }

                @Override
                public void start(Listener2 listener) {
                    started.complete(new Held(listener, args));
                }

                @Override
                public void shutdown() {
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
            return List.of(InProcessSocketAddress.class);
        }
    }
}
