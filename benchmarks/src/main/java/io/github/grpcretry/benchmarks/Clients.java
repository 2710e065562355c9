package io.github.grpcretry.benchmarks;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ForwardingInterceptors;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/** Builds the client channel of each variant with plain grpc-java builders, as the starter's configurer does. */
final class Clients {

    private Clients() {
    }

    /** A channel and, for the interceptor engine, the engine on it. */
    record Client(ManagedChannel channel, RetryingClientInterceptor engine) implements AutoCloseable {
        @Override
        public void close() throws InterruptedException {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static ManagedChannelBuilder<?> builder(EchoServer server, Transport transport) {
        return transport == Transport.IN_PROCESS
                ? InProcessChannelBuilder.forName(server.inProcessName())
                : NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext();
    }

    static Client open(Variant variant, EchoServer server, Transport transport) {
        ChannelRetryConfig config = BenchConfig.channel();
        ManagedChannelBuilder<?> b = builder(server, transport);
        RetryingClientInterceptor engine = null;
        switch (variant) {
            case BARE, R4J -> {
                // grpc-java's defaults: no service config (transparent retry only)
            }
            case NATIVE -> b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true))
                    .enableRetry()
                    .maxRetryAttempts(config.maxAttemptsCap())
                    .maxHedgedAttempts(config.maxAttemptsCap())
                    .retryBufferSize(config.retryBufferSize())
                    .perRpcBufferLimit(config.perRpcBufferLimit());
            case INTERCEPTOR -> {
                engine = RetryingClientInterceptor.builder(config)
                        .throttle(new RetryThrottle(config.serviceConfig().retryThrottling()))
                        .budget(new RetryBudget(config.budget()))
                        .eventListener(RetryEventListener.NOOP)
                        .build();
                // as the starter renders it: no retry, no names-only entries
                b.defaultServiceConfig(config.serviceConfig().withoutRetry().toServiceConfigMap(false)).intercept(engine);
            }
            case FORWARDING -> b.intercept(ForwardingInterceptors.forwarding());
            case TRACED -> b.intercept(ForwardingInterceptors.traced());
            default -> throw new IllegalArgumentException(variant.name());
        }
        return new Client(b.build(), engine);
    }
}
