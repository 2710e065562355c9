package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.ClientInterceptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A scripted in-process server, a retry scheduler and the interceptor-engine clients a test opens on
 * them, one per test: registered with {@code @RegisterExtension} on an instance field, it is made with
 * the test instance and closed after each test, when it closes the clients and checks that no request
 * bytes stay buffered and no timers stay scheduled.
 */
final class EngineHarness implements AfterEachCallback, AutoCloseable {

    final ScriptedServer server;
    final RetryScheduler scheduler;
    private final List<Engines.Client> clients = new ArrayList<>();

    private EngineHarness(String name) throws IOException {
        server = ScriptedServer.start(name + "-" + System.nanoTime());
        scheduler = RetryScheduler.create(1, "test-" + name);
    }

    static EngineHarness of(String name) {
        try {
            return new EngineHarness(name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) throws InterruptedException {
        close();
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
            assertThat(EngineTestAccess.bufferPool(c.interceptor()).used()).as("bytes held after the test").isZero();
        }
        assertThat(scheduler.outstandingTimers()).as("timers outstanding after the test").isZero();
        scheduler.close();
        server.close();
    }
}
