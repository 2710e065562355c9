package io.github.grpcretry.reliability;

import static io.github.grpcretry.reliability.FaultRig.arrivals;
import static io.github.grpcretry.reliability.FaultRig.arrivalsOf;
import static io.github.grpcretry.reliability.FaultRig.call;
import static io.github.grpcretry.reliability.FaultRig.deadline;
import static io.github.grpcretry.reliability.FaultRig.startOnPort;
import static io.github.grpcretry.reliability.FaultRig.warmUp;
import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.reliability.Fixtures.Client;
import io.github.grpcretry.reliability.Fixtures.Engine;
import io.github.grpcretry.testing.FaultProxy;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.SimpleCalls;
import io.github.grpcretry.testing.SimpleCalls.Handle;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The transport faults of {@link FaultToleranceTest} (same fixtures: {@link FaultProxy}, the
 * restartable {@link ScriptedServer}, its call helpers and its checks after each test, live engine
 * objects included) under the hedging policy, and grpc-java's own engine (native) under the retry
 * policy through the fault proxy. The crash and restart, GOAWAY, truncation and latency faults run
 * the hedging policy in both engines (native: grpc-java's hedging, observed by the starter's
 * {@code NativeAttemptInterceptor}).
 *
 * <p>What the hedging policy promises and is asserted here: a slow attempt is overtaken by a hedge
 * and a failed one (non-fatal status, reset connection) by the next hedge (the interceptor engine
 * sends it at once, grpc-java when the hedging delay is up); a fatal status ends the call; the loser
 * is cancelled, so no attempt is left running on the server; never more than max attempts;
 * committed calls are not hedged again; a method without a policy (non-idempotent) is never sent
 * twice.
 */
class HedgingFaultToleranceTest {

    private static final String[] NON_IDEMPOTENT = {"UnaryRpc", "BidiStreamingRpc"};

    @RegisterExtension
    final FaultRig rig = new FaultRig("hedging-faults");

    private Client hedged(Engine engine, String target, String name, HedgingPolicy policy, String... withoutPolicy) {
        return rig.netty(engine, target, Fixtures.channelConfig(name,
                Fixtures.hedgedService(policy, withoutPolicy)));
    }

    /** grpc-java's own engine under {@code policy}, observed by the starter's NativeAttemptInterceptor. */
    private Client nativeClient(String target, String name, RetryPolicy policy, String... withoutRetry) {
        return rig.netty(Engine.NATIVE, target, Fixtures.channelConfig(name,
                Fixtures.service(policy, null, withoutRetry)));
    }

    /** No attempt left running on the servers: each one was answered or cancelled. */
    private static void noLoserRunning(ScriptedServer... servers) throws InterruptedException {
        Fixtures.waitFor("every attempt on the server answered or cancelled", 5000, () -> {
            for (ScriptedServer s : servers) {
                for (ScriptedServer.Arrival a : s.arrivals()) {
                    if (!a.closedByServer && !a.cancelled) {
                        return false;
                    }
                }
            }
            return true;
        });
    }

    private static long elapsedMs(Handle h) {
        return TimeUnit.NANOSECONDS.toMillis(h.listener.closedAtNanos() - h.startNanos);
    }

    private static final List<MethodDescriptor<SimpleRequest, SimpleResponse>> HOLDABLE =
            List.of(SimpleCalls.UNARY, SimpleCalls.CLIENT_STREAMING, SimpleCalls.SERVER_STREAMING);

    // ------------------------------------------------------------------ slow, failed, fatal

    @Test
    void hedgesOvertakeSlowOrFailedAttemptsAndFatalStatusEnds() throws Exception {
        ScriptedServer server = ScriptedServer.startNetty();
        rig.closeAfter(server);
        FaultProxy proxy = FaultProxy.start(server.port()).latency(10);
        rig.closeAfter(proxy);
        Client h = hedged(Engine.INTERCEPTOR, proxy.target(), "h", Fixtures.hedging(3, 200, Status.Code.UNAVAILABLE),
                NON_IDEMPOTENT);
        Client all = hedged(Engine.INTERCEPTOR, proxy.target(), "all", Fixtures.hedging(3, 200, Status.Code.UNAVAILABLE));
        warmUp(h, all);
        server.script(a -> {
            String id = a.header("x-call-id");
            boolean first = a.previousAttempts == null;
            if (id.startsWith("slow-")) {
                return first ? Action.ok().delay(30_000) : Action.ok();
            } else if (id.startsWith("fatal-")) {
                return first ? Action.ok().delay(30_000) : Action.fail(Status.Code.INTERNAL);
            } else if (id.startsWith("failed-")) {
                return first ? Action.fail(Status.Code.UNAVAILABLE) : Action.ok();
            }
            return Action.ok();
        });
        List<Handle> slow = new ArrayList<>();
        List<Handle> fatal = new ArrayList<>();
        List<Handle> failed = new ArrayList<>();
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : HOLDABLE) {
            slow.add(call(all, m, "slow-" + m.getBareMethodName(), deadline(20)));
            fatal.add(call(all, m, "fatal-" + m.getBareMethodName(), deadline(20)));
            failed.add(call(all, m, "failed-" + m.getBareMethodName(), deadline(20)));
        }
        Handle onceSlow = call(h, SimpleCalls.UNARY, "failed-n-UnaryRpc", deadline(20));
        for (Handle c : slow) {
            Status s = c.listener.awaitClose(20, TimeUnit.SECONDS);
            c.listener.assertContract();
            assertThat(s.getCode()).as(c.id + ": " + s).isEqualTo(Status.Code.OK);
            assertThat(all.attempts().attempts(c.id)).as(c.id).isEqualTo(2);
            assertThat(elapsedMs(c)).as(c.id + " overtaken by the hedge sent after 200 ms").isBetween(180L, 5000L);
            List<ScriptedServer.Arrival> as = arrivalsOf(c.id, server);
            assertThat(as).hasSize(2);
            assertThat(as.get(1).previousAttempts).isEqualTo(1);
            Fixtures.waitFor(c.id + ": the slow attempt cancelled on the server", 5000, () -> as.get(0).cancelled);
        }
        for (Handle c : fatal) {
            Status s = c.listener.awaitClose(20, TimeUnit.SECONDS);
            c.listener.assertContract();
            assertThat(s.getCode()).as(c.id + ": " + s).isEqualTo(Status.Code.INTERNAL);
            assertThat(all.attempts().attempts(c.id)).as(c.id + ": no hedge after the fatal status").isEqualTo(2);
            List<ScriptedServer.Arrival> as = arrivalsOf(c.id, server);
            Fixtures.waitFor(c.id + ": the other attempt cancelled on the server", 5000, () -> as.get(0).cancelled);
        }
        for (Handle c : failed) {
            Status s = c.listener.awaitClose(20, TimeUnit.SECONDS);
            c.listener.assertContract();
            assertThat(s.getCode()).as(c.id + ": " + s).isEqualTo(Status.Code.OK);
            assertThat(all.attempts().attempts(c.id)).as(c.id).isEqualTo(2);
        }
        Status s = onceSlow.listener.awaitClose(20, TimeUnit.SECONDS);
        onceSlow.listener.assertContract();
        assertThat(s.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(h.attempts().attempts(onceSlow.id)).isEqualTo(1);
        assertThat(arrivals(onceSlow.id, server)).isEqualTo(1);
        noLoserRunning(server);
        long slowest = slow.stream().mapToLong(HedgingFaultToleranceTest::elapsedMs).max().orElse(0);
        long failedSlowest = failed.stream().mapToLong(HedgingFaultToleranceTest::elapsedMs).max().orElse(0);
        Figures.record("faults-hedging", "10 ms proxy latency, hedging delay 200 ms: 3/3 slow first attempts overtaken"
                + " by the hedge (OK, 2 attempts, slowest " + slowest + " ms, loser cancelled on the server); 3/3 fatal"
                + " INTERNAL hedges ended their call (2 attempts, the held attempt cancelled); 3/3 failed first attempts"
                + " (UNAVAILABLE) followed by a hedge at once, OK in at most " + failedSlowest + " ms; non-idempotent"
                + " UNAVAILABLE after 1 attempt");
    }

    // ------------------------------------------------------------------ reset (ours hedged/retried, native)

    @Test
    void connectionResetMidCallUnderHedgingAndTheNativeEngine() throws Exception {
        ScriptedServer server = ScriptedServer.startNetty();
        rig.closeAfter(server);
        FaultProxy proxy = FaultProxy.start(server.port());
        rig.closeAfter(proxy);
        // a long hedging delay: what overtakes the reset attempt is the hedge sent at once on its failure
        Client h = hedged(Engine.INTERCEPTOR, proxy.target(), "h", Fixtures.hedging(4, 2000, Status.Code.UNAVAILABLE),
                NON_IDEMPOTENT);
        RetryPolicy retry = Fixtures.policy(5, 200, 2000, null, Status.Code.UNAVAILABLE);
        Client r = rig.netty(Engine.INTERCEPTOR, proxy.target(), Fixtures.channelConfig("r",
                Fixtures.service(retry, null, NON_IDEMPOTENT)));
        Client nat = nativeClient(proxy.target(), "native", retry, NON_IDEMPOTENT);
        warmUp(h, r);
        Handle warm = call(nat.channel(), SimpleCalls.UNARY, "warm-native", deadline(10));
        assertThat(warm.listener.awaitClose(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        server.script(a -> a.previousAttempts == null && !a.header("x-call-id").startsWith("warm")
                ? Action.ok().delay(30_000) : Action.ok());
        Map<String, Handle> calls = new java.util.LinkedHashMap<>();
        for (String engine : List.of("hedged", "ours", "native")) {
            io.grpc.Channel ch = engine.equals("hedged") ? h.channel() : engine.equals("ours") ? r.channel()
                    : nat.channel();
            for (MethodDescriptor<SimpleRequest, SimpleResponse> m : HOLDABLE) {
                String id = "rst-" + engine + "-" + m.getBareMethodName();
                calls.put(id, call(ch, m, id, deadline(20)));
            }
        }
        int expectedArrivals = 3 + calls.size(); // warm-ups + every call's first attempt
        Fixtures.waitFor("calls in flight", 10_000, () -> server.arrivalCount() >= expectedArrivals);
        assertThat(proxy.resetAll()).isEqualTo(3);
        Map<String, String> outcome = new java.util.TreeMap<>();
        for (Handle c : calls.values()) {
            Status s = c.listener.awaitClose(20, TimeUnit.SECONDS);
            c.listener.assertContract();
            List<ScriptedServer.Arrival> as = arrivalsOf(c.id, server);
            boolean oneShot = c.method == SimpleCalls.UNARY; // UnaryRpc has no policy: non-idempotent
            if (oneShot) {
                assertThat(s.getCode()).as(c.id + ": " + s).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(as).as(c.id + " sent once").hasSize(1);
            } else {
                assertThat(s.getCode()).as(c.id + ": " + s).isEqualTo(Status.Code.OK);
                assertThat(as).as(c.id + " arrivals").hasSize(2);
                assertThat(as.get(1).previousAttempts).as(c.id).isEqualTo(1);
                assertThat(as.get(0).cancelled).as(c.id + " reset attempt seen cancelled by the server").isTrue();
            }
            if (c.id.startsWith("rst-hedged-")) {
                assertThat(h.attempts().attempts(c.id)).isEqualTo(oneShot ? 1 : 2);
                if (!oneShot) {
                    assertThat(elapsedMs(c)).as(c.id + ": hedge sent on the failure, not after the 2 s delay")
                            .isLessThan(1800);
                }
            } else if (c.id.startsWith("rst-ours-")) {
                assertThat(r.attempts().attempts(c.id)).isEqualTo(oneShot ? 1 : 2);
            }
            outcome.put(c.id, s.getCode() + "/" + as.size() + " arrivals/" + elapsedMs(c) + " ms");
        }
        noLoserRunning(server);
        assertThat(nat.events().callsEnded.get()).isEqualTo(nat.events().callsStarted.get());
        Figures.record("faults-hedging", "connection reset mid-call, 9 calls in flight (hedged 2 s delay, ours retry,"
                + " native retry; UnaryRpc without policy): " + outcome);
    }

    // ------------------------------------------------------------------ refused (hedged, native)

    @Test
    void refusedConnectionSpendsHedgesAndNativeAttempts() throws Exception {
        String target = "127.0.0.1:" + Fixtures.freePort();
        Client h = hedged(Engine.INTERCEPTOR, target, "h", Fixtures.hedging(4, 50, Status.Code.UNAVAILABLE), NON_IDEMPOTENT);
        RetryPolicy fast = Fixtures.policy(4, 50, 400, null, Status.Code.UNAVAILABLE);
        Map<String, Integer> attempts = new java.util.TreeMap<>();
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : SimpleCalls.ALL) {
            Handle c = call(h, m, "refused-h-" + m.getBareMethodName(), deadline(20));
            Status s = c.listener.awaitClose(20, TimeUnit.SECONDS);
            c.listener.assertContract();
            assertThat(s.getCode()).as(c.id).isEqualTo(Status.Code.UNAVAILABLE);
            boolean oneShot = m == SimpleCalls.UNARY || m == SimpleCalls.BIDI;
            assertThat(h.attempts().attempts(c.id)).as(c.id).isEqualTo(oneShot ? 1 : 4);
            attempts.put("hedged " + m.getBareMethodName(), h.attempts().attempts(c.id));
        }
        // grpc-java's engine, one call at a time so its attempt count is the call's
        Client nat = nativeClient(target, "native", fast, NON_IDEMPOTENT);
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : SimpleCalls.ALL) {
            long before = nat.events().attemptsStarted.get();
            Handle c = call(nat.channel(), m, "refused-native-" + m.getBareMethodName(), deadline(20));
            Status s = c.listener.awaitClose(20, TimeUnit.SECONDS);
            c.listener.assertContract();
            assertThat(s.getCode()).as(c.id).isEqualTo(Status.Code.UNAVAILABLE);
            Fixtures.waitFor("native attempts reported", 5000,
                    () -> nat.events().callsEnded.get() == nat.events().callsStarted.get());
            int n = (int) (nat.events().attemptsStarted.get() - before);
            boolean oneShot = m == SimpleCalls.UNARY || m == SimpleCalls.BIDI;
            assertThat(n).as(c.id + " native attempts").isEqualTo(oneShot ? 1 : 4);
            attempts.put("native " + m.getBareMethodName(), n);
        }
        Figures.record("faults-hedging", "connection refused: attempts per call " + attempts
                + " (UnaryRpc and BidiStreamingRpc without policy), all UNAVAILABLE");
    }

    // ------------------------------------------------------------------ crash and restart, GOAWAY

    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void hedgedCallsThroughACrashARestartAndAGracefulShutdown(Engine engine) throws Exception {
        ScriptedServer first = ScriptedServer.startNetty();
        rig.closeAfter(first);
        int port = first.port();
        FaultProxy host = FaultProxy.start(port);
        rig.closeAfter(host);
        HedgingPolicy policy = Fixtures.hedging(4, 1000, Status.Code.UNAVAILABLE);
        Client h = hedged(engine, host.target(), "h", policy, NON_IDEMPOTENT);
        Client all = hedged(engine, host.target(), "all", policy);
        warmUp(h, all);
        first.script(a -> Action.ok().delay(30_000));
        List<Handle> hedgedCalls = new ArrayList<>();
        List<Handle> once = new ArrayList<>();
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : SimpleCalls.ALL) {
            hedgedCalls.add(call(all, m, "crash-h-" + m.getBareMethodName(), deadline(20)));
        }
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : List.of(SimpleCalls.UNARY, SimpleCalls.BIDI)) {
            once.add(call(h, m, "crash-n-" + m.getBareMethodName(), deadline(20)));
        }
        Fixtures.waitFor("every call in flight", 10_000, () -> first.arrivalCount() >= 2 + 6);
        Handle bidi = hedgedCalls.get(3);
        Fixtures.waitFor("bidi echoes", 10_000, () -> bidi.listener.messages().size() == 3);
        // the crash: a hedge sent at once on the reset must meet the crash too, not reach the old server on a new
        // connection and be cancelled by its shutdown (RST_STREAM CANCEL: CANCELLED, which no policy retries)
        host.plan(i -> FaultProxy.Fault.resetAfterClientBytes(0));
        host.resetAll();
        first.close();
        ScriptedServer second = startOnPort(port);
        rig.closeAfter(second);
        second.script(a -> Action.ok());
        host.plan(i -> FaultProxy.Fault.NONE); // the restart: new connections reach the new server
        Map<String, Integer> codes = new java.util.TreeMap<>();
        for (Handle c : hedgedCalls) {
            Status s = c.listener.awaitClose(20, TimeUnit.SECONDS);
            c.listener.assertContract();
            int n = all.attempts().attempts(c.id);
            assertThat(n).as(c.id).isBetween(1, policy.maxAttempts());
            if (c == bidi) {
                assertThat(s.getCode()).as(c.id + " committed by its echoes").isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(n).isEqualTo(1);
            } else if (!s.isOk()) {
                // the restart came after the hedges were spent (the interceptor engine sends each at once
                // on the previous failure; grpc-java's wait for the hedging delay, and its calls wait for ready)
                assertThat(s.getCode()).as(c.id + ": " + s).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(n).as(c.id + " failed only with every hedge spent").isEqualTo(policy.maxAttempts());
            } else {
                assertThat(arrivals(c.id, second)).isEqualTo(1);
            }
            codes.merge("hedged " + s.getCode() + " (" + n + " attempts)", 1, Integer::sum);
        }
        for (Handle c : once) {
            Status s = c.listener.awaitClose(20, TimeUnit.SECONDS);
            c.listener.assertContract();
            assertThat(s.getCode()).as(c.id + ": " + s).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(h.attempts().attempts(c.id)).isEqualTo(1);
            assertThat(arrivals(c.id, first, second)).isEqualTo(1);
            codes.merge("non-idempotent " + s.getCode(), 1, Integer::sum);
        }
        // the restarted server serves every method (wait-for-ready: the channel may still be in its
        // reconnect backoff, and a method without a policy fails fast while it is)
        for (MethodDescriptor<SimpleRequest, SimpleResponse> m : SimpleCalls.ALL) {
            Handle c = call(all, m, "after-" + m.getBareMethodName(), deadline(20).withWaitForReady());
            assertThat(c.listener.awaitClose(20, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
            c.listener.assertContract();
        }
        noLoserRunning(second);
        Figures.record("faults-hedging " + engine, "server killed mid-call (connections reset, process gone), restarted on its"
                + " port: " + codes + "; afterwards 4/4 OK on the new server");

        // graceful shutdown (GOAWAY) during hedged traffic, the replacement on the same port
        second.script(a -> a.index % 3 == 0 ? Action.ok().delay(150) : Action.ok().delay(20));
        Client g = hedged(engine, second.target(), "g", Fixtures.hedging(3, 60, Status.Code.UNAVAILABLE), NON_IDEMPOTENT);
        warmUp(g);
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<Handle> hedgedQ = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Handle> onceQ = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<Thread> drivers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int thread = t;
            Thread d = new Thread(() -> {
                try {
                    for (int i = 0; !stop.get(); i++) {
                        MethodDescriptor<SimpleRequest, SimpleResponse> m = SimpleCalls.ALL.get((i + thread) % 4);
                        Handle c = call(g, m, "goaway-" + thread + "-" + i, deadline(20));
                        (m == SimpleCalls.UNARY || m == SimpleCalls.BIDI ? onceQ : hedgedQ).add(c);
                        c.listener.awaitClose(20, TimeUnit.SECONDS);
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "hedging-goaway-driver-" + t);
            drivers.add(d);
            d.start();
        }
        // hedged traffic on the second server (at least 40 calls), then the GOAWAY
        int secondBefore = second.arrivalCount();
        Fixtures.waitFor("traffic on the second server", 20_000, () -> second.arrivalCount() >= secondBefore + 40);
        Thread drain = new Thread(() -> second.shutdownGracefully(10_000), "graceful-shutdown");
        drain.start();
        ScriptedServer third = startOnPort(port);
        rig.closeAfter(third);
        third.script(a -> a.index % 3 == 0 ? Action.ok().delay(150) : Action.ok().delay(20));
        drain.join(15_000);
        // the traffic goes on to the new server until at least 40 calls arrived there
        Fixtures.waitFor("traffic on the new server", 20_000, () -> third.arrivalCount() >= 40);
        stop.set(true);
        for (Thread d : drivers) {
            d.join(25_000);
        }
        assertThat(errors).isEmpty();
        int ok = 0;
        int hedges = 0;
        int spent = 0;
        int okAfterMove = 0;
        for (Handle c : hedgedQ) {
            Status s = c.listener.status();
            c.listener.assertContract();
            int n = g.attempts().attempts(c.id);
            assertThat(n).isBetween(1, 3);
            int arrived = arrivals(c.id, second, third);
            if (s.isOk()) {
                assertThat(arrived).as(c.id + " arrivals").isBetween(1, n);
                ok++;
                okAfterMove += arrivals(c.id, third) > 0 ? 1 : 0;
            } else {
                // between the old server's close of its listening socket and the new one's bind the port
                // refuses connections, and after that the channel may sit in its reconnect backoff, where
                // calls fail fast; the interceptor engine sends each hedge at once on the previous
                // (non-fatal) failure, so a call started then spends all three without reaching a server.
                // How many such calls the drivers make depends on the machine's speed, so the check is
                // per call, not a ratio: a failed call reached no server
                assertThat(s.getCode()).as(c.id + ": " + s).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(n).as(c.id + " failed only with every hedge spent").isEqualTo(3);
                assertThat(arrived).as(c.id + " failed, yet an attempt reached a server (the GOAWAY must let it finish)")
                        .isZero();
                spent++;
            }
            hedges += n - 1;
        }
        // every hedged call that reached the old server before its GOAWAY (or the new one after) ended OK
        // (checked per call above); some did on each side
        assertThat(ok - okAfterMove).as("hedged calls OK on the draining server").isPositive();
        assertThat(okAfterMove).as("hedged calls OK on the new server").isPositive();
        Map<Status.Code, Integer> onceCodes = new EnumMap<>(Status.Code.class);
        for (Handle c : onceQ) {
            Status s = c.listener.status();
            c.listener.assertContract();
            onceCodes.merge(s.getCode(), 1, Integer::sum);
            assertThat(s.getCode()).as(c.id + ": " + s).isIn(Status.Code.OK, Status.Code.UNAVAILABLE);
            assertThat(g.attempts().attempts(c.id)).isEqualTo(1);
            assertThat(arrivals(c.id, second, third)).isLessThanOrEqualTo(1);
        }
        assertThat(third.arrivalCount()).as("traffic moved to the new server").isPositive();
        noLoserRunning(third);
        Figures.record("faults-hedging " + engine, "graceful shutdown (GOAWAY) during hedged traffic (delay 60 ms, a third of"
                + " the calls answered after 150 ms): hedged methods " + ok + "/" + hedgedQ.size() + " OK (" + spent
                + " UNAVAILABLE with every hedge spent, none of them reaching a server: the port closed or the channel in its reconnect backoff) with " + hedges
                + " hedges sent, non-idempotent " + onceCodes + ", arrivals old/new server " + second.arrivalCount()
                + "/" + third.arrivalCount());
    }

    // ------------------------------------------------------------------ truncation, latency with a deadline

    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void truncatedResponsesAndLatencyUnderHedging(Engine engine) throws Exception {
        ScriptedServer server = ScriptedServer.startNetty();
        rig.closeAfter(server);
        server.script(a -> Action.ok());
        HedgingPolicy policy = Fixtures.hedging(4, 100, Status.Code.UNAVAILABLE);
        java.util.Random random = new java.util.Random(4343);
        int cases = 16;
        Map<String, Integer> outcomes = new java.util.TreeMap<>();
        for (int i = 0; i < cases; i++) {
            long cut = random.nextInt(400);
            boolean rst = random.nextBoolean();
            FaultProxy p = FaultProxy.start(server.port())
                    .plan(k -> k < 2 ? FaultProxy.Fault.truncateServer(cut, rst) : FaultProxy.Fault.NONE);
            rig.closeAfter(p);
            Client c = hedged(engine, p.target(), "t" + i, policy, "UnaryRpc");
            MethodDescriptor<SimpleRequest, SimpleResponse> m = SimpleCalls.ALL.get(1 + i % 3);
            String id = "trunc-h-" + i;
            Handle h = call(c, m, id, deadline(20));
            Status s = h.listener.awaitClose(20, TimeUnit.SECONDS);
            h.listener.assertContract(); // an OK call got exactly its own responses, from one attempt
            int n = c.attempts().attempts(id);
            assertThat(n).as(id).isBetween(1, policy.maxAttempts());
            boolean committed = h.listener.headersCount() > 0;
            if (!s.isOk()) {
                assertThat(committed || n == policy.maxAttempts() || !policy.isNonFatal(s.getCode()))
                        .as(id + " failed (" + s + ") only when committed, out of attempts or fatal").isTrue();
            }
            outcomes.merge("hedged " + s.getCode() + (s.isOk() ? "" : committed ? " (committed)"
                    : policy.isNonFatal(s.getCode()) ? " (attempts spent)" : " (fatal)"), 1, Integer::sum);
            String nid = "trunc-n-" + i;
            FaultProxy pn = FaultProxy.start(server.port())
                    .plan(k -> k == 0 ? FaultProxy.Fault.truncateServer(cut, rst) : FaultProxy.Fault.NONE);
            rig.closeAfter(pn);
            Client cn = hedged(engine, pn.target(), "tn" + i, policy, "UnaryRpc");
            Handle hn = call(cn, SimpleCalls.UNARY, nid, deadline(20));
            Status sn = hn.listener.awaitClose(20, TimeUnit.SECONDS);
            hn.listener.assertContract();
            assertThat(cn.attempts().attempts(nid)).isEqualTo(1);
            assertThat(arrivals(nid, server)).as(nid).isLessThanOrEqualTo(1);
            outcomes.merge("non-idempotent " + sn.getCode(), 1, Integer::sum);
        }
        noLoserRunning(server);

        // latency: every hedge is as slow as the first; a deadline shorter than the latency ends the
        // call in time, with no hedge scheduled at or after it
        FaultProxy slow = FaultProxy.start(server.port()).latency(0);
        rig.closeAfter(slow);
        Client c = hedged(engine, slow.target(), "slow", Fixtures.hedging(4, 50, Status.Code.UNAVAILABLE));
        warmUp(c);
        slow.latency(150);
        Handle h = call(c, SimpleCalls.SERVER_STREAMING, "slow-deadline",
                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(180, TimeUnit.MILLISECONDS));
        Status s = h.listener.awaitClose(5, TimeUnit.SECONDS);
        h.listener.assertContract();
        assertThat(s.getCode()).as(s.toString()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(elapsedMs(h)).isBetween(150L, 1500L);
        int n = c.attempts().attempts("slow-deadline");
        assertThat(n).as("hedges at 0, 50, 100, 150 ms all before the 180 ms deadline").isBetween(1, 4);
        slow.latency(0);
        noLoserRunning(server);
        Figures.record("faults-hedging " + engine, cases + " connections truncated after 0..400 server bytes (FIN or RST),"
                + " hedging 4 attempts / 100 ms: " + outcomes + "; 150 ms latency each way with a 180 ms deadline:"
                + " DEADLINE_EXCEEDED after " + n + " attempts in " + elapsedMs(h) + " ms");
    }
}
