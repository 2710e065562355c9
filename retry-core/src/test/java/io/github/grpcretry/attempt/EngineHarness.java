package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.ClientInterceptor;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A scripted in-process server, a retry scheduler and the interceptor-engine clients a test opens on
 * them. Closing it closes the clients and checks that no request bytes stay buffered and no timers
 * stay scheduled.
 */
final class EngineHarness implements AutoCloseable {

    final ScriptedServer server;
    final RetryScheduler scheduler;
    private final List<Engines.Client> clients = new ArrayList<>();

    EngineHarness(String name) throws IOException {
        server = ScriptedServer.start(name + "-" + System.nanoTime());
        scheduler = RetryScheduler.create(1, "test-" + name);
    }

    /** An interceptor-engine client over {@code below} (interceptors that see every attempt's call). */
    Engines.Client client(ChannelRetryConfig config, ClientInterceptor... below) {
        Engines.Client c = Engines.interceptorClient(server, Engines.Transport.IN_PROCESS, config, scheduler, below);
        clients.add(c);
        return c;
    }

    @Override
    public void close() throws InterruptedException {
        for (Engines.Client c : clients) {
            c.close();
            assertThat(c.interceptor().bufferPool().used()).as("bytes held after the test").isZero();
        }
        assertThat(scheduler.outstandingTimers()).as("timers outstanding after the test").isZero();
        scheduler.close();
        server.close();
    }
}
