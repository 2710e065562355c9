package io.github.grpcretry.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.EngineTestAccess;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.reliability.Fixtures.Client;
import io.github.grpcretry.reliability.Fixtures.Engine;
import io.github.grpcretry.testing.LiveObjects;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.SimpleCalls;
import io.github.grpcretry.testing.SimpleCalls.Handle;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The rig of the transport-fault tests ({@link FaultToleranceTest}, {@link HedgingFaultToleranceTest}),
 * registered with {@code @RegisterExtension}: per test a scheduler on two timer threads, the clients
 * and servers the test made, and after the test the checks that nothing is left: no timer outstanding,
 * no request byte held, every call and attempt ended, everything closed, and no engine object the
 * test made reachable after GC. Its static helpers start calls tagged with an {@code x-call-id} and
 * count their arrivals on the {@link ScriptedServer}s.
 */
final class FaultRig implements BeforeEachCallback, AfterEachCallback {

    private final String name;
    private final List<Client> clients = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private LiveObjects live;
    private ScheduledThreadPoolExecutor timers;
    private ExecutorService work;
    private RetryScheduler scheduler;

    FaultRig(String name) {
        this.name = name;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        live = new LiveObjects();
        timers = live.timers(2, name);
        work = Executors.newCachedThreadPool();
        scheduler = RetryScheduler.of(timers, work);
    }

    /** A Netty channel to {@code target} under {@code config} and engine {@code kind}, checked and closed after the test. */
    Client netty(Engine kind, String target, ChannelRetryConfig config) {
        Client c = Fixtures.netty(kind, target, config, scheduler, live);
        clients.add(c);
        return c;
    }

    /** Closes {@code c} after the test (servers, proxies). */
    <T extends AutoCloseable> T closeAfter(T c) {
        closeables.add(c);
        return c;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        try {
            Fixtures.waitFor("no timer outstanding", 5000, () -> EngineTestAccess.outstandingTimers(scheduler) == 0);
            for (Client c : clients) {
                assertThat(c.bufferedBytes()).as("bytes held after the test").isZero();
                Fixtures.waitFor("every wrapped call ended", 5000,
                        () -> c.events().callsEnded.get() == c.events().callsStarted.get());
                Fixtures.waitFor("every attempt ended", 5000,
                        () -> c.events().attemptsEnded.get() == c.events().attemptsStarted.get());
            }
        } finally {
            for (Client c : clients) {
                c.close();
            }
            for (AutoCloseable c : closeables) {
                c.close();
            }
            timers.shutdownNow();
            work.shutdownNow();
        }
        clients.clear();
        closeables.clear();
        assertThat(live.survivorsAfterGc(20_000)).as("engine objects reachable after the test " + live.tracked())
                .isEmpty();
    }

    /** A Netty {@link ScriptedServer} on {@code port}, once the previous server's listener has let it go. */
    static ScriptedServer startOnPort(int port) throws Exception {
        IOException last = null;
        for (int i = 0; i < 100; i++) {
            try {
                return ScriptedServer.startNetty(port);
            } catch (IOException e) {
                last = e;
                Thread.sleep(20); // polls the port coming free, bounded by 100 tries
            }
        }
        throw new AssertionError("could not bind port " + port + " again", last);
    }

    /**
     * Starts call {@code id} on {@code c}. With grpc-java's engine the call waits for ready: its
     * backoff is drawn from [0, b) (A6's full jitter), so all its retries can fall within grpc-java's
     * 1 s reconnect backoff after a failed connection, when a call that does not wait fails at once;
     * the interceptor engine's backoffs (b x U(0.8, 1.2), 200 ms doubling) span that backoff.
     */
    static Handle call(Client c, MethodDescriptor<SimpleRequest, SimpleResponse> m, String id,
            CallOptions options) {
        return call(c.channel(), m, id, c.kind() == Engine.NATIVE ? options.withWaitForReady() : options);
    }

    static Handle call(io.grpc.Channel channel, MethodDescriptor<SimpleRequest, SimpleResponse> m, String id,
            CallOptions options) {
        return SimpleCalls.run(channel, m, options, id, SimpleCalls.messages(id, m.getType().clientSendsOneMessage()
                ? 1 : 3, 0));
    }

    static CallOptions deadline(long seconds) {
        return CallOptions.DEFAULT.withDeadlineAfter(seconds, TimeUnit.SECONDS);
    }

    /** The arrivals of call {@code id} on {@code servers}. */
    static List<ScriptedServer.Arrival> arrivalsOf(String id, ScriptedServer... servers) {
        List<ScriptedServer.Arrival> out = new ArrayList<>();
        for (ScriptedServer s : servers) {
            for (ScriptedServer.Arrival a : s.arrivals()) {
                if (id.equals(a.header("x-call-id"))) {
                    out.add(a);
                }
            }
        }
        return out;
    }

    static int arrivals(String id, ScriptedServer... servers) {
        return arrivalsOf(id, servers).size();
    }

    /** One OK call on each client (the connection made before the fault). */
    static void warmUp(Client... clients) throws InterruptedException {
        for (Client c : clients) {
            Handle h = call(c, SimpleCalls.UNARY, "warm-" + System.nanoTime(), deadline(10));
            assertThat(h.listener.awaitClose(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        }
    }
}
