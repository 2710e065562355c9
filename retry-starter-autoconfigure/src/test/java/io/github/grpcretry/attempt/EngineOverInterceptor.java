package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * A scripted in-process server and a channel whose interceptor engine has a test's interceptor
 * below it (the interceptor sees every attempt's channel call). Closing it checks that no buffered
 * bytes and no timers are left.
 */
final class EngineOverInterceptor implements AutoCloseable {

    final ScriptedServer server;
    final RetryScheduler scheduler;
    final RetryingClientInterceptor engine;
    final ManagedChannel channel;

    EngineOverInterceptor(String name, RetryPolicy policy, ClientInterceptor below) throws IOException {
        server = ScriptedServer.start(name + "-" + System.nanoTime());
        scheduler = RetryScheduler.create(1, "test-" + name);
        ChannelRetryConfig config = Configs.channel(Configs.service(policy, null));
        engine = RetryingClientInterceptor.builder(config).scheduler(scheduler).build();
        channel = Engines.builder(server, Engines.Transport.IN_PROCESS)
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false))
                .intercept(below) // the last one added runs first: the engine, then this one
                .intercept(engine)
                .build();
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
        assertThat(engine.bufferPool().used()).as("bytes held after the test").isZero();
        assertThat(scheduler.outstandingTimers()).as("timers outstanding after the test").isZero();
        scheduler.close();
        server.close();
    }
}
