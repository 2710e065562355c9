package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/** Channels for the two engines (docs/design.md §0), built with plain grpc-java builders. */
final class Engines {

    enum Engine { NATIVE, INTERCEPTOR }

    enum Transport { IN_PROCESS, NETTY }

    /**
     * Set by {@link LongStreamUsageSideBySideTest} for its run: our engine's channels get a generous
     * {@code streams.idle-timeout} (it never fires in a scenario) and a {@link StreamResumption} of the
     * server-streaming method (no scenario breaks a stream past its commit with a status the policy retries), so
     * every scenario also checks that neither changes what an application sees.
     */
    static volatile boolean longStreams;
    static final java.time.Duration GENEROUS_IDLE = java.time.Duration.ofSeconds(60);

    /** Sets {@link #longStreams} for the test class it extends ({@code @ExtendWith}), and clears it after. */
    static final class LongStreams implements org.junit.jupiter.api.extension.BeforeAllCallback,
            org.junit.jupiter.api.extension.AfterAllCallback {
        @Override
        public void beforeAll(org.junit.jupiter.api.extension.ExtensionContext context) {
            longStreams = true;
        }

        @Override
        public void afterAll(org.junit.jupiter.api.extension.ExtensionContext context) {
            longStreams = false;
        }
    }

    private Engines() {
    }

    /** A channel and, for the interceptor engine, its interceptor. */
    record Client(Engine engine, ManagedChannel channel, RetryingClientInterceptor interceptor, RecordingEvents events)
            implements AutoCloseable {

        @Override
        public void close() throws InterruptedException {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static ManagedChannelBuilder<?> builder(ScriptedServer server, Transport transport) {
        return transport == Transport.IN_PROCESS
                ? InProcessChannelBuilder.forName(server.inProcessName())
                : NettyChannelBuilder.forTarget(server.target()).usePlaintext();
    }

    /** grpc-java's own engine: the service config with retry, throttling and the channel's limits. */
    static Client nativeClient(ScriptedServer server, Transport transport, ChannelRetryConfig config) {
        return nativeClient(server, transport, config, null);
    }

    /** As above, on {@code timers} (null = the transport's own): the executor grpc-java schedules backoffs on. */
    static Client nativeClient(ScriptedServer server, Transport transport, ChannelRetryConfig config,
            NativeTimers timers) {
        ManagedChannelBuilder<?> b;
        if (timers == null) {
            b = builder(server, transport);
        } else if (transport == Transport.IN_PROCESS) {
            b = InProcessChannelBuilder.forName(server.inProcessName()).scheduledExecutorService(timers.forInProcess());
        } else {
            b = NettyChannelBuilder.forTarget(server.target()).usePlaintext().eventLoopGroup(timers.forNetty())
                    .channelType(io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel.class);
        }
        return nativeClient(b, config);
    }

    /** grpc-java's own engine on a channel {@code b} builds (any server, transport and executors). */
    static Client nativeClient(ManagedChannelBuilder<?> b, ChannelRetryConfig config) {
        ManagedChannel ch = b
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true))
                .enableRetry()
                .maxRetryAttempts(config.maxAttemptsCap())
                .maxHedgedAttempts(config.maxAttemptsCap())
                .retryBufferSize(config.retryBufferSize())
                .perRpcBufferLimit(config.perRpcBufferLimit())
                .build();
        return new Client(Engine.NATIVE, ch, null, null);
    }

    /** Our engine: the service config without retry, plus the interceptor. */
    static Client interceptorClient(ScriptedServer server, Transport transport, ChannelRetryConfig config,
            RetryScheduler scheduler) {
        return interceptorClient(server, transport, config, scheduler, new ClientInterceptor[0]);
    }

    /** Our engine over {@code below} (interceptors that see every attempt's channel call). */
    static Client interceptorClient(ScriptedServer server, Transport transport, ChannelRetryConfig given,
            RetryScheduler scheduler, ClientInterceptor... below) {
        return interceptorClient(builder(server, transport), given, scheduler, below);
    }

    /** Our engine over {@code below} on a channel {@code b} builds (any server and transport). */
    static Client interceptorClient(ManagedChannelBuilder<?> b, ChannelRetryConfig given, RetryScheduler scheduler,
            ClientInterceptor... below) {
        ChannelRetryConfig config = longStreams ? given.withStreams(new ChannelRetryConfig.Streams(GENEROUS_IDLE, 3))
                : given;
        RecordingEvents events = new RecordingEvents();
        RetryThrottle throttle = config.serviceConfig().retryThrottling() == null
                ? null : new RetryThrottle(config.serviceConfig().retryThrottling());
        RetryBudget budget = config.budget() == null ? null : new RetryBudget(config.budget());
        RetryingClientInterceptor interceptor = RetryingClientInterceptor.builder(config)
                .throttle(throttle)
                .budget(budget)
                .eventListener(events)
                .scheduler(scheduler)
                .streamResumptions(longStreams ? java.util.List.of(new LongStreamRig.SameRequestResumption())
                        : java.util.List.of())
                .build();
        ManagedChannel ch = b
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false))
                .intercept(below) // the interceptor added last runs first: the engine, then these
                .intercept(interceptor)
                .build();
        return new Client(Engine.INTERCEPTOR, ch, interceptor, events);
    }

    static Client client(Engine engine, ScriptedServer server, Transport transport, ChannelRetryConfig config,
            RetryScheduler scheduler) {
        return engine == Engine.NATIVE ? nativeClient(server, transport, config)
                : interceptorClient(server, transport, config, scheduler);
    }
}
