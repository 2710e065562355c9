package io.github.grpcretry.reliability;

import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.commit.RetryBufferPool;
import io.github.grpcretry.metrics.NativeAttemptInterceptor;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.CountingEvents;
import io.github.grpcretry.testing.SimpleCalls;
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
        return new ChannelRetryConfig(name, sc.capped(cap), cap, perRpcLimit, retryBufferSize, null, null, null);
    }

    static ChannelRetryConfig channelConfig(String name, ServiceConfig sc) {
        return channelConfig(name, sc, ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT,
                ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE);
    }

    /** A channel through the interceptor engine, with its events and an attempt counter below the engine. */
    record Client(ManagedChannel channel, RetryingClientInterceptor engine, CountingEvents events,
            SimpleCalls.AttemptCounter attempts) implements AutoCloseable {

        RetryBufferPool bufferPool() {
            return engine.bufferPool();
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
        CountingEvents events = new CountingEvents();
        SimpleCalls.AttemptCounter attempts = new SimpleCalls.AttemptCounter();
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config)
                .eventListener(events)
                .scheduler(scheduler)
                .build();
        ManagedChannel ch = builder
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false))
                .intercept(attempts, engine) // the engine (given last) runs first: the counter sees attempts
                .build();
        return new Client(ch, engine, events, attempts);
    }

    /**
     * A channel of grpc-java's own engine ({@code native}): the service config with its retry
     * policies, observed by {@link NativeAttemptInterceptor} (which counts grpc-java's attempts,
     * transparent retries aside).
     */
    record NativeClient(ManagedChannel channel, CountingEvents events) implements AutoCloseable {
        @Override
        public void close() throws InterruptedException {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static NativeClient nativeNetty(String target, ChannelRetryConfig config) {
        CountingEvents events = new CountingEvents();
        ManagedChannel ch = NettyChannelBuilder.forTarget(target).usePlaintext()
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true))
                .enableRetry()
                .maxRetryAttempts(config.maxAttemptsCap())
                .maxHedgedAttempts(config.maxAttemptsCap())
                .retryBufferSize(config.retryBufferSize())
                .perRpcBufferLimit(config.perRpcBufferLimit())
                .intercept(new NativeAttemptInterceptor(config.channel(), events))
                .build();
        return new NativeClient(ch, events);
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
