package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.testing.ScriptedServer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The servers of a side-by-side test class (one in-process, one Netty on loopback) and the interceptor
 * engine's scheduler, shared by the class's tests: registered with {@code @RegisterExtension} on a
 * static field, started before the class's tests and closed after them, when no timer may be left.
 */
final class SideBySideServers implements BeforeAllCallback, AfterAllCallback {

    private final String name;
    private ScriptedServer inProcess;
    private ScriptedServer netty;
    private RetryScheduler scheduler;

    SideBySideServers(String name) {
        this.name = name;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        inProcess = ScriptedServer.start(name);
        netty = ScriptedServer.startNetty();
        scheduler = RetryScheduler.create(1, name);
    }

    ScriptedServer server(Transport t) {
        return t == Transport.IN_PROCESS ? inProcess : netty;
    }

    RetryScheduler scheduler() {
        return scheduler;
    }

    @Override
    public void afterAll(ExtensionContext context) {
        inProcess.close();
        netty.close();
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).as("timers outstanding after " + name).isZero();
        scheduler.close();
    }
}
