package io.github.grpcretry.reliability;

import io.github.grpcretry.attempt.EngineTestAccess;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.internal.commit.RetryBufferPool;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.CountingEvents;
import io.github.grpcretry.testing.LiveObjects;
import io.github.grpcretry.testing.SimpleCalls;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Channels of the interceptor engine and the configurations the reliability tests share. */
final class Fixtures {

    static final String SERVICE = "grpc.testing.SimpleService";

    private Fixtures() {
    }

    static RetryPolicy policy(int maxAttempts, long initialMs, long maxMs, Duration perAttempt, Status.Code... codes) {
        return new RetryPolicy(maxAttempts, Duration.ofMillis(initialMs), Duration.ofMillis(maxMs), 2.0,
                Set.of(codes), perAttempt);
    }

    /**
     * The whole service retried with {@code policy}, except the methods named in {@code withoutRetry}
     * (bare names, e.g. "UnaryRpc"): entries of their own without a retry policy, i.e. non-idempotent.
     */
    static ServiceConfig service(RetryPolicy policy, RetryThrottlingPolicy throttling, String... withoutRetry) {
        List<MethodConfig> entries = new ArrayList<>();
        entries.add(new MethodConfig(List.of(MethodName.of(SERVICE, null)), null, null, null, null, policy, null));
        for (String m : withoutRetry) {
            entries.add(new MethodConfig(List.of(MethodName.of(SERVICE, m)), null, null, null, null, null, null));
        }
        return new ServiceConfig(entries, throttling);
    }

    /**
     * The whole service hedged with {@code hedging}, except the methods named in {@code withoutPolicy}
     * (bare names): entries of their own without a policy, i.e. non-idempotent.
     */
    static ServiceConfig hedgedService(HedgingPolicy hedging, String... withoutPolicy) {
        List<MethodConfig> entries = new ArrayList<>();
        entries.add(new MethodConfig(List.of(MethodName.of(SERVICE, null)), null, null, null, null, null, hedging));
        for (String m : withoutPolicy) {
            entries.add(new MethodConfig(List.of(MethodName.of(SERVICE, m)), null, null, null, null, null, null));
        }
        return new ServiceConfig(entries, null);
    }

    static HedgingPolicy hedging(int maxAttempts, long delayMs, Status.Code... nonFatal) {
        return new HedgingPolicy(maxAttempts, Duration.ofMillis(delayMs), Set.of(nonFatal));
    }

    static ChannelRetryConfig channelConfig(String name, ServiceConfig sc, long perRpcLimit, long retryBufferSize) {
        int cap = ChannelRetryConfig.DEFAULT_MAX_ATTEMPTS_CAP;
        return ChannelRetryConfig.of(name, sc.capped(cap)).withMaxAttemptsCap(cap).withBuffers(perRpcLimit, retryBufferSize);
    }

    static ChannelRetryConfig channelConfig(String name, ServiceConfig sc) {
        return channelConfig(name, sc, ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT,
                ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE);
    }

    /** Who retries: the starter's interceptor engine, or grpc-java's own ({@code grpc.retry.engine}). */
    enum Engine { INTERCEPTOR, NATIVE }

    /**
     * A channel through one engine, with its events and each call's attempts: for the interceptor
     * engine counted below it; for the native engine ({@code engine} null) counted as grpc-java's
     * streams, transparent retries aside ({@link SimpleCalls.AttemptCounter#ofStreams()}), with the
     * events of {@link RetryingClientInterceptor#nativeAttempts}.
     */
    record Client(ManagedChannel channel, RetryingClientInterceptor engine, CountingEvents events,
            SimpleCalls.AttemptCounter attempts, Engine kind) implements AutoCloseable {

        RetryBufferPool bufferPool() {
            return EngineTestAccess.bufferPool(engine);
        }

        /** Request bytes the interceptor engine holds for replay (grpc-java's own buffer is not visible: 0). */
        long bufferedBytes() {
            return engine == null ? 0 : EngineTestAccess.bufferPool(engine).used();
        }

        @Override
        public void close() throws InterruptedException {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static Client netty(String target, ChannelRetryConfig config, RetryScheduler scheduler) {
        return client(NettyChannelBuilder.forTarget(target).usePlaintext(), config, scheduler);
    }

    static Client inProcess(String name, ChannelRetryConfig config, RetryScheduler scheduler) {
        return client(InProcessChannelBuilder.forName(name), config, scheduler);
    }

    static Client client(ManagedChannelBuilder<?> builder, ChannelRetryConfig config, RetryScheduler scheduler) {
        return client(Engine.INTERCEPTOR, builder, config, scheduler, null);
    }

    static Client netty(Engine kind, String target, ChannelRetryConfig config, RetryScheduler scheduler) {
        return netty(kind, target, config, scheduler, null);
    }

    static Client netty(Engine kind, String target, ChannelRetryConfig config, RetryScheduler scheduler,
            LiveObjects live) {
        return client(kind, NettyChannelBuilder.forTarget(target).usePlaintext(), config, scheduler, live);
    }

    /**
     * A channel of {@code kind}: the interceptor engine on {@code scheduler}, or grpc-java's own
     * engine configured as the starter does with {@code engine: native} (the service config with its
     * policies, {@code enableRetry}, the channel's caps and buffer limits) and observed by
     * {@link RetryingClientInterceptor#nativeAttempts}. With {@code live}, its trackers go above and below the engine.
     */
    static Client client(Engine kind, ManagedChannelBuilder<?> builder, ChannelRetryConfig config,
            RetryScheduler scheduler, LiveObjects live) {
        CountingEvents events = new CountingEvents();
        RetryingClientInterceptor engine = null;
        SimpleCalls.AttemptCounter attempts;
        ClientInterceptor retrying;
        if (kind == Engine.INTERCEPTOR) {
            attempts = new SimpleCalls.AttemptCounter();
            engine = RetryingClientInterceptor.builder(config)
                    .eventListener(events)
                    .scheduler(scheduler)
                    .build();
            retrying = engine;
            builder.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false));
        } else {
            attempts = SimpleCalls.AttemptCounter.ofStreams();
            retrying = RetryingClientInterceptor.nativeAttempts(config.channel(), config.channel(), events);
            builder.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true))
                    .enableRetry()
                    .maxRetryAttempts(config.maxAttemptsCap())
                    .maxHedgedAttempts(config.maxAttemptsCap())
                    .retryBufferSize(config.retryBufferSize())
                    .perRpcBufferLimit(config.perRpcBufferLimit());
        }
        // the interceptor given last runs first: [above], the engine, [below], the counter
        List<ClientInterceptor> chain = new ArrayList<>();
        chain.add(attempts);
        if (live != null) {
            chain.add(live.below());
        }
        chain.add(retrying);
        if (live != null) {
            chain.add(live.above());
        }
        ManagedChannel ch = builder.intercept(chain).build();
        return new Client(ch, engine, events, attempts, kind);
    }

    /** A loopback port nothing listens on (it was free a moment ago). */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    static void waitFor(String what, long timeoutMillis, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + timeoutMillis + " ms: " + what);
            }
            Thread.sleep(2); // polls the condition (the event waited for), not a synchronisation point
        }
    }
}
