package io.github.grpcretry.reliability;

import static io.github.grpcretry.reliability.FaultRig.arrivals;
import static io.github.grpcretry.reliability.FaultRig.call;
import static io.github.grpcretry.reliability.FaultRig.deadline;
import static io.github.grpcretry.reliability.FaultRig.startOnPort;
import static io.github.grpcretry.reliability.FaultRig.warmUp;
import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.reliability.Fixtures.Client;
import io.github.grpcretry.reliability.Fixtures.Engine;
import io.github.grpcretry.testing.FaultProxy;
import io.github.grpcretry.testing.LiveObjects;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.SimpleCalls;
import io.github.grpcretry.testing.SimpleCalls.Handle;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Transport faults over Netty loopback, under the retry policy: a server killed mid-call and
 * restarted on its port, a graceful shutdown (GOAWAY) during traffic, connection refused, and a
 * fault proxy that resets, delays and truncates connections. Each fault asserts what the policy
 * promises: a retried method ends OK (or, when the call had already committed, with the transport's
 * status), max attempts hold, and a method without a retry policy (non-idempotent) is never sent
 * twice, counted both below the engine and on the server. Every call keeps the call contract and
 * every OK response matches its request; afterwards no timer and no buffered byte is left, and no
 * engine object (call, attempt, listener, stream tracer factory, timer task; see {@link LiveObjects})
 * is still reachable after GC.
 *
 * <p>The crash, GOAWAY, reset and truncation faults run under both engines: the interceptor engine
 * and grpc-java's own ({@code native}, observed by the starter's {@code NativeAttemptInterceptor},
 * its attempts counted as grpc-java's streams). Refused connections and the per-attempt timeout are
 * the interceptor engine's here (the native engine's refused calls are in
 * {@link HedgingFaultToleranceTest}; it never applies a per-attempt timeout).
 */
class FaultToleranceTest {

    /** Retried methods: 5 attempts, 200 ms doubling to 2 s (spans grpc-java's 1 s reconnect backoff). */
    private static final RetryPolicy RETRY = Fixtures.policy(5, 200, 2000, null, Status.Code.UNAVAILABLE);
    /** Non-idempotent methods of the "n" channels. */
    private static final String[] NON_IDEMPOTENT = {"UnaryRpc", "BidiStreamingRpc"};

    @RegisterExtension
    final FaultRig rig = new FaultRig("faults");

    private Client retrying(Engine engine, String target) {
        return rig.netty(engine, target, Fixtures.channelConfig("r", Fixtures.service(RETRY, null)));
    }

    private Client nonIdempotent(Engine engine, String target) {
        return rig.netty(engine, target, Fixtures.channelConfig("n",
                Fixtures.service(RETRY, null, NON_IDEMPOTENT)));
    }

    // ------------------------------------------------------------------ server killed and restarted

    /**
     * A crash: the server's connections die without a word (RST, no HTTP/2 frames), the process is
     * gone, and a new one starts on the same port. The server sits behind a {@link FaultProxy} that
     * plays its host's TCP stack, so the connections can be killed before the gRPC server would
     * send RST_STREAMs of its own.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void serverKilledMidCallAndRestartedOnTheSamePort(Engine engine) throws Exception {
        ScriptedServer first = ScriptedServer.startNetty();
        rig.closeAfter(first);
        int port = first.port();
        FaultProxy host = FaultProxy.start(port);
        rig.closeAfter(host);
        Client r = retrying(engine, host.target());
        Client n = nonIdempotent(engine, host.target());
        warmUp(r, n);
        first.script(a -> Action.ok().delay(30_000)); // hold every call until the kill
        List<Handle> retried = new ArrayList<>();
        List<Handle> once = new ArrayList<>();
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : SimpleCalls.ALL) {
            for (int i = 0; i < 2; i++) {
                retried.add(call(r, m, "kill-r-" + m.getBareMethodName() + "-" + i, deadline(20)));
            }
        }
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : List.of(SimpleCalls.UNARY, SimpleCalls.BIDI)) {
            for (int i = 0; i < 2; i++) {
                once.add(call(n, m, "kill-n-" + m.getBareMethodName() + "-" + i, deadline(20)));
            }
        }
        int total = retried.size() + once.size();
        Fixtures.waitFor("every call in flight on the server", 10_000, () -> first.arrivalCount() >= 2 + total);
        // the bidi calls are committed by their echoes once these reached the client
        for (Handle h : retried) {
            if (h.method.getType() == MethodDescriptor.MethodType.BIDI_STREAMING) {
                Fixtures.waitFor(h.id + " echoes received", 10_000, () -> h.listener.messages().size() == 3);
            }
        }

        assertThat(host.resetAll()).isEqualTo(2); // the process dies: its connections are reset
        first.close();
        ScriptedServer second = startOnPort(port);
        rig.closeAfter(second);
        second.script(a -> Action.ok());

        Map<Status.Code, Integer> codes = new EnumMap<>(Status.Code.class);
        for (Handle h : retried) {
            Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
            h.listener.assertContract();
            codes.merge(s.getCode(), 1, Integer::sum);
            if (h.method.getType() == MethodDescriptor.MethodType.BIDI_STREAMING) {
                // the echoes committed the call before the kill: the policy promises no retry
                assertThat(s.getCode()).as(h.id).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(h.listener.headersCount()).as(h.id + " committed").isEqualTo(1);
                assertThat(r.attempts().attempts(h.id)).as(h.id).isEqualTo(1);
            } else {
                assertThat(s.getCode()).as(h.id + ": " + s).isEqualTo(Status.Code.OK);
                assertThat(r.attempts().attempts(h.id)).as(h.id).isBetween(2, 5);
                assertThat(arrivals(h.id, second)).as(h.id + " answered by the restarted server").isEqualTo(1);
            }
        }
        for (Handle h : once) {
            Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
            h.listener.assertContract();
            codes.merge(s.getCode(), 1, Integer::sum);
            assertThat(s.getCode()).as(h.id + ": " + s).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(n.attempts().attempts(h.id)).as(h.id + " attempts").isEqualTo(1);
            assertThat(arrivals(h.id, first, second)).as(h.id + " arrivals").isEqualTo(1);
        }
        Figures.record("faults " + engine, "server killed mid-call (connections reset, process gone) and restarted on its port: "
                + total + " calls in flight, outcomes " + codes + " (UNAVAILABLE = committed bidi + non-idempotent)");

        // gRPC's own forced shutdown cancels the streams (RST_STREAM CANCEL): CANCELLED is not in the
        // retryable codes, so the policy promises no retry
        second.script(a -> Action.ok().delay(30_000));
        List<Handle> cancelled = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            cancelled.add(call(r, SimpleCalls.UNARY, "shutdownNow-" + i, deadline(20)));
        }
        Fixtures.waitFor("calls in flight", 10_000, () -> arrivals("shutdownNow-0", second) == 1
                && arrivals("shutdownNow-1", second) == 1 && arrivals("shutdownNow-2", second) == 1);
        second.close();
        for (Handle h : cancelled) {
            Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
            h.listener.assertContract();
            assertThat(s.getCode()).as(h.id + ": " + s).isEqualTo(Status.Code.CANCELLED);
            assertThat(r.attempts().attempts(h.id)).isEqualTo(1);
        }
        Figures.record("faults " + engine, "server shutdownNow mid-call: 3/3 calls CANCELLED (RST_STREAM CANCEL, not retryable),"
                + " 1 attempt each");
    }

    // ------------------------------------------------------------------ graceful shutdown (GOAWAY)

    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void gracefulShutdownDuringTrafficLosesNothing(Engine engine) throws Exception {
        ScriptedServer first = ScriptedServer.startNetty();
        rig.closeAfter(first);
        int port = first.port();
        first.script(a -> Action.ok().delay(40));
        Client r = retrying(engine, first.target());
        Client n = nonIdempotent(engine, first.target());
        warmUp(r, n);
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<Handle> retried = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Handle> once = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<Thread> drivers = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            boolean idempotent = t < 4;
            int thread = t;
            Thread d = new Thread(() -> {
                try {
                    for (int i = 0; !stop.get(); i++) {
                        MethodDescriptor<SimpleRequest, SimpleResponse> m = idempotent ? SimpleCalls.ALL.get((i + thread) % 4)
                                : (i % 2 == 0 ? SimpleCalls.UNARY : SimpleCalls.BIDI);
                        Handle h = call(idempotent ? r : n, m, "goaway-" + thread + "-" + i, deadline(20));
                        (idempotent ? retried : once).add(h);
                        h.listener.awaitClose(20, TimeUnit.SECONDS);
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "goaway-driver-" + t);
            drivers.add(d);
            d.start();
        }
        // traffic on the first server (2 warm-ups, then at least 60 calls), then the GOAWAY
        Fixtures.waitFor("traffic on the first server", 20_000, () -> first.arrivalCount() >= 62);
        int inFlightBefore = first.arrivalCount();
        Thread drain = new Thread(() -> first.shutdownGracefully(10_000), "graceful-shutdown");
        drain.start();
        ScriptedServer second = startOnPort(port); // binds once the old listener is closed; the old one drains
        rig.closeAfter(second);
        second.script(a -> Action.ok().delay(40));
        drain.join(15_000);
        // the traffic goes on to the new server until at least 60 calls arrived there
        Fixtures.waitFor("traffic on the new server", 20_000, () -> second.arrivalCount() >= 60);
        stop.set(true);
        for (Thread d : drivers) {
            d.join(25_000);
        }
        assertThat(errors).isEmpty();

        int ok = 0;
        for (Handle h : retried) {
            Status s = h.listener.status();
            h.listener.assertContract();
            assertThat(s.getCode()).as(h.id + ": " + s).isEqualTo(Status.Code.OK);
            ok++;
        }
        Map<Status.Code, Integer> onceCodes = new EnumMap<>(Status.Code.class);
        for (Handle h : once) {
            Status s = h.listener.status();
            h.listener.assertContract();
            onceCodes.merge(s.getCode(), 1, Integer::sum);
            assertThat(s.getCode()).as(h.id + ": " + s).isIn(Status.Code.OK, Status.Code.UNAVAILABLE);
            assertThat(n.attempts().attempts(h.id)).as(h.id + " attempts").isEqualTo(1);
            int arrived = arrivals(h.id, first, second);
            assertThat(arrived).as(h.id + " arrivals").isLessThanOrEqualTo(1);
            if (s.isOk()) {
                assertThat(arrived).isEqualTo(1);
            }
        }
        assertThat(second.arrivalCount()).as("traffic moved to the new server").isPositive();
        Figures.record("faults " + engine, "graceful shutdown (GOAWAY) during traffic: retried methods " + ok + "/" + retried.size()
                + " OK, non-idempotent outcomes " + onceCodes + ", arrivals old/new server " + first.arrivalCount() + "/"
                + second.arrivalCount() + " (" + inFlightBefore + " before the GOAWAY)");
    }

    // ------------------------------------------------------------------ connection refused

    @Test
    void refusedConnectionEndsAtMaxAttemptsNonIdempotentSentOnce() throws Exception {
        String target = "127.0.0.1:" + Fixtures.freePort();
        RetryPolicy fast = Fixtures.policy(4, 50, 400, null, Status.Code.UNAVAILABLE);
        Client r = rig.netty(Engine.INTERCEPTOR, target, Fixtures.channelConfig("r", Fixtures.service(fast, null)));
        Client n = rig.netty(Engine.INTERCEPTOR, target, Fixtures.channelConfig("n",
                Fixtures.service(fast, null, NON_IDEMPOTENT)));
        List<Handle> handles = new ArrayList<>();
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : SimpleCalls.ALL) {
            handles.add(call(r, m, "refused-r-" + m.getBareMethodName(), deadline(20)));
        }
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : List.of(SimpleCalls.UNARY, SimpleCalls.BIDI)) {
            handles.add(call(n, m, "refused-n-" + m.getBareMethodName(), deadline(20)));
        }
        for (Handle h : handles) {
            Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
            h.listener.assertContract();
            assertThat(s.getCode()).as(h.id).isEqualTo(Status.Code.UNAVAILABLE);
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(h.listener.closedAtNanos() - h.startNanos);
            if (h.id.startsWith("refused-r-")) {
                assertThat(r.attempts().attempts(h.id)).as(h.id).isEqualTo(4);
                assertThat(elapsedMs).as(h.id + " waited the backoffs 50+100+200 ms x U(0.8,1.2)").isGreaterThanOrEqualTo(270);
            } else {
                assertThat(n.attempts().attempts(h.id)).as(h.id).isEqualTo(1);
            }
        }
        assertThat(r.events().suppressed(io.github.grpcretry.attempt.SuppressionReason.MAX_ATTEMPTS)).isEqualTo(4);
        Figures.record("faults", "connection refused: 4 retried calls x 4 attempts = " + r.attempts().total()
                + " attempts, all UNAVAILABLE; non-idempotent calls " + n.attempts().total() + " attempts for 2 calls");
    }

    // ------------------------------------------------------------------ fault proxy: resets

    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void connectionResetIsRetriedButNonIdempotentCallsAreNotResent(Engine engine) throws Exception {
        ScriptedServer server = ScriptedServer.startNetty();
        rig.closeAfter(server);
        FaultProxy proxy = FaultProxy.start(server.port());
        rig.closeAfter(proxy);
        Client r = retrying(engine, proxy.target());
        Client n = nonIdempotent(engine, proxy.target());
        warmUp(r, n);
        // first attempts are held, so they are in flight when the connections are reset
        server.script(a -> a.previousAttempts == null && !a.header("x-call-id").startsWith("warm")
                ? Action.ok().delay(30_000) : Action.ok());
        List<Handle> retried = new ArrayList<>();
        List<Handle> once = new ArrayList<>();
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : List.of(SimpleCalls.UNARY, SimpleCalls.CLIENT_STREAMING,
                SimpleCalls.SERVER_STREAMING)) {
            retried.add(call(r, m, "rst-r-" + m.getBareMethodName(), deadline(20)));
            once.add(call(n, m, "rst-n-" + m.getBareMethodName(), deadline(20)));
        }
        Fixtures.waitFor("calls in flight", 10_000, () -> server.arrivalCount() >= 2 + 6);
        assertThat(proxy.resetAll()).isEqualTo(2);
        for (Handle h : retried) {
            Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
            h.listener.assertContract();
            assertThat(s.getCode()).as(h.id + ": " + s).isEqualTo(Status.Code.OK);
            assertThat(r.attempts().attempts(h.id)).as(h.id).isGreaterThanOrEqualTo(2);
        }
        for (Handle h : once) {
            Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
            h.listener.assertContract();
            boolean retriedMethod = h.method.getType() == MethodDescriptor.MethodType.CLIENT_STREAMING
                    || h.method.getType() == MethodDescriptor.MethodType.SERVER_STREAMING;
            if (retriedMethod) {
                assertThat(s.getCode()).as(h.id + " (retried method of the mixed channel)").isEqualTo(Status.Code.OK);
            } else {
                assertThat(s.getCode()).as(h.id + ": " + s).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(n.attempts().attempts(h.id)).as(h.id).isEqualTo(1);
                assertThat(arrivals(h.id, server)).as(h.id).isEqualTo(1);
            }
        }

        // connections reset after a random number of client bytes: during the preface, headers or data
        Random random = new Random(42);
        int cases = 12;
        Map<Status.Code, Integer> onceCodes = new EnumMap<>(Status.Code.class);
        int retriedOk = 0;
        server.script(a -> Action.ok());
        for (int i = 0; i < cases; i++) {
            long cut = random.nextInt(400);
            FaultProxy p = FaultProxy.start(server.port()).plan(k -> k == 0 ? FaultProxy.Fault.resetAfterClientBytes(cut)
                    : FaultProxy.Fault.NONE);
            rig.closeAfter(p);
            Client rc = retrying(engine, p.target());
            Client nc = nonIdempotent(engine, p.target());
            Handle hr = call(rc, SimpleCalls.CLIENT_STREAMING, "cut-r-" + i, deadline(20));
            Status sr = hr.listener.awaitClose(20, TimeUnit.SECONDS);
            hr.listener.assertContract();
            if (sr.isOk()) {
                retriedOk++;
            } else {
                // a reset while grpc-java writes the stream's headers can reach it as UNKNOWN "channel closed"
                // (as in the truncation cases below): outside the retryable codes, the call ends as the policy says
                assertThat(sr.getCode()).as("retried call with a reset after " + cut + " bytes: " + sr)
                        .isEqualTo(Status.Code.UNKNOWN);
                assertThat(RETRY.isRetryable(sr.getCode())).isFalse();
            }
            Handle hn = call(nc, SimpleCalls.UNARY, "cut-n-" + i, deadline(20));
            Status sn = hn.listener.awaitClose(20, TimeUnit.SECONDS);
            hn.listener.assertContract();
            onceCodes.merge(sn.getCode(), 1, Integer::sum);
            assertThat(sn.getCode()).isIn(Status.Code.OK, Status.Code.UNAVAILABLE);
            assertThat(nc.attempts().attempts("cut-n-" + i)).isEqualTo(1);
            assertThat(arrivals("cut-n-" + i, server)).isLessThanOrEqualTo(1);
            rc.close();
            nc.close();
        }
        assertThat(retriedOk).as("resets the retried calls survived").isGreaterThanOrEqualTo(cases / 2);
        Figures.record("faults " + engine, "connection reset (RST) mid-call: 6 calls in flight reset, retried 3/3 OK; "
                + cases + " connections reset after 0..400 client bytes: retried " + retriedOk + "/" + cases
                + " OK, non-idempotent outcomes " + onceCodes + ", each sent once");
    }

    // ------------------------------------------------------------------ fault proxy: latency

    @Test
    void latencyIsSurvivedAndPerAttemptTimeoutAbandonsSlowOnes() throws Exception {
        ScriptedServer server = ScriptedServer.startNetty();
        rig.closeAfter(server);
        FaultProxy proxy = FaultProxy.start(server.port()).latency(100);
        rig.closeAfter(proxy);
        Client r = retrying(Engine.INTERCEPTOR, proxy.target());
        Client n = nonIdempotent(Engine.INTERCEPTOR, proxy.target());
        warmUp(r, n);

        // every call is slower but ends OK; a deadline shorter than the latency ends the call in time
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : SimpleCalls.ALL) {
            Handle h = call(r, m, "slow-" + m.getBareMethodName(), deadline(10));
            assertThat(h.listener.awaitClose(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
            h.listener.assertContract();
            assertThat(TimeUnit.NANOSECONDS.toMillis(h.listener.closedAtNanos() - h.startNanos)).isGreaterThanOrEqualTo(190);
        }
        Handle late = call(n, SimpleCalls.UNARY, "slow-deadline", CallOptions.DEFAULT.withDeadlineAfter(120,
                TimeUnit.MILLISECONDS));
        assertThat(late.listener.awaitClose(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        late.listener.assertContract();
        assertThat(TimeUnit.NANOSECONDS.toMillis(late.listener.closedAtNanos() - late.startNanos)).isBetween(100L, 1500L);
        assertThat(n.attempts().attempts("slow-deadline")).isEqualTo(1);

        // per-attempt receive timeout: the first attempt is stuck behind 350 ms of latency each way and
        // abandoned after 300 ms; the stall ends during the backoff and the second attempt gets through
        // (the proxy keeps TCP order, so it waits for the first attempt's bytes: 300 + 350 ms < 300 + 240 + 300 ms)
        RetryPolicy perAttempt = Fixtures.policy(3, 300, 1000, Duration.ofMillis(300), Status.Code.UNAVAILABLE);
        Client pa = rig.netty(Engine.INTERCEPTOR, proxy.target(), Fixtures.channelConfig("pa",
                Fixtures.service(perAttempt, null)));
        proxy.latency(0);
        warmUp(pa);
        proxy.latency(350);
        Handle h = call(pa, SimpleCalls.UNARY, "stuck-then-ok", deadline(10));
        Fixtures.waitFor("the first attempt abandoned", 5000, () -> pa.events().retriesScheduled.get() >= 1);
        proxy.latency(0);
        Status s = h.listener.awaitClose(10, TimeUnit.SECONDS);
        h.listener.assertContract();
        assertThat(s.getCode()).as(s.toString()).isEqualTo(Status.Code.OK);
        assertThat(pa.attempts().attempts("stuck-then-ok")).isEqualTo(2);
        long elapsed = TimeUnit.NANOSECONDS.toMillis(h.listener.closedAtNanos() - h.startNanos);
        Figures.record("faults", "latency 100 ms: 4/4 RPC types OK; deadline 120 ms under latency: DEADLINE_EXCEEDED"
                + " after 1 attempt; 350 ms stall with 300 ms per-attempt timeout: OK after 2 attempts in " + elapsed + " ms");
    }

    // ------------------------------------------------------------------ fault proxy: truncation

    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void truncatedResponsesAreRetriedUnlessCommitted(Engine engine) throws Exception {
        ScriptedServer server = ScriptedServer.startNetty();
        rig.closeAfter(server);
        server.script(a -> Action.ok());
        Random random = new Random(4242);
        int cases = 16;
        Map<String, Integer> outcomes = new java.util.TreeMap<>();
        for (int i = 0; i < cases; i++) {
            long cut = random.nextInt(400);
            boolean rst = random.nextBoolean();
            // the first two connections of the retrying channel are truncated, the first of the other
            FaultProxy pr = FaultProxy.start(server.port())
                    .plan(k -> k < 2 ? FaultProxy.Fault.truncateServer(cut, rst) : FaultProxy.Fault.NONE);
            FaultProxy pn = FaultProxy.start(server.port())
                    .plan(k -> k == 0 ? FaultProxy.Fault.truncateServer(cut, rst) : FaultProxy.Fault.NONE);
            rig.closeAfter(pr);
            rig.closeAfter(pn);
            Client rc = retrying(engine, pr.target());
            Client nc = nonIdempotent(engine, pn.target());
            MethodDescriptor<SimpleRequest, SimpleResponse> m = SimpleCalls.ALL.get(i % 4);
            String id = "trunc-r-" + i;
            Handle h = call(rc, m, id, deadline(20));
            Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
            h.listener.assertContract(); // an OK call got exactly its own responses
            int attempts = rc.attempts().attempts(id);
            boolean committed = h.listener.headersCount() > 0;
            if (!s.isOk()) {
                // grpc-java reports some writes on a closing connection as UNKNOWN "channel closed":
                // a status outside the retryable codes ends the call, as the policy says
                assertThat(committed || attempts == RETRY.maxAttempts() || !RETRY.isRetryable(s.getCode()))
                        .as(id + " failed (" + s + ") only when committed, out of attempts or not retryable").isTrue();
            }
            outcomes.merge("retried " + s.getCode() + (s.isOk() ? "" : committed ? " (committed)"
                    : RETRY.isRetryable(s.getCode()) ? " (attempts spent)" : " (not retryable)"), 1, Integer::sum);
            String nid = "trunc-n-" + i;
            Handle hn = call(nc, SimpleCalls.UNARY, nid, deadline(20));
            Status sn = hn.listener.awaitClose(20, TimeUnit.SECONDS);
            hn.listener.assertContract();
            assertThat(nc.attempts().attempts(nid)).isEqualTo(1);
            assertThat(arrivals(nid, server)).as(nid).isLessThanOrEqualTo(1);
            outcomes.merge("non-idempotent " + sn.getCode(), 1, Integer::sum);
            rc.close();
            nc.close();
        }
        Figures.record("faults " + engine, cases + " connections truncated after 0..400 server bytes (FIN or RST): " + outcomes);
    }
}
