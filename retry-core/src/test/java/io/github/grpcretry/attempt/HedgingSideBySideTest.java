package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * docs/design.md §7 side by side: every hedging scenario runs under grpc-java's own hedging and under the
 * interceptor engine, against the same real server, in-process and over Netty on loopback. The
 * arrivals, their {@code grpc-previous-rpc-attempts}, which arrivals the server saw cancelled (the
 * losers), the final status and the responses must agree, except where grpc-java does not do what
 * gRFC A6 says; those rows assert A6 for our engine and grpc-java's behaviour for the native one.
 * After every run of our engine no timer is outstanding and no buffered byte is held.
 */
class HedgingSideBySideTest {

    private static final Status.Code UNAVAILABLE = Status.Code.UNAVAILABLE;

    private static ScriptedServer inProcess;
    private static ScriptedServer netty;
    private static RetryScheduler scheduler;

    @BeforeAll
    static void startServers() throws Exception {
        inProcess = ScriptedServer.start("hedging-side-by-side");
        netty = ScriptedServer.startNetty();
        scheduler = RetryScheduler.create(1, "hedging-side-by-side");
    }

    @AfterAll
    static void stopServers() {
        inProcess.close();
        netty.close();
        assertThat(scheduler.outstandingTimers()).isZero();
        scheduler.close();
    }

    /** What one engine did in one scenario. */
    record Observed(Engine engine, int arrivals, List<Integer> previousAttempts, List<Boolean> cancelled,
            List<List<String>> serverMessages, List<Status.Code> codes, List<List<String>> responses,
            List<Long> elapsedMillis, List<Long> offsetsMillis, List<Integer> arrivalsPerCall,
            RecordingEvents events) {

        /** What both engines must agree on. */
        Object comparable() {
            return List.of(arrivals, previousAttempts, cancelled, codes, responses, arrivalsPerCall);
        }

        /** Milliseconds between attempt {@code i + 1} and attempt {@code i + 2} reaching the server. */
        long gap(int i) {
            return offsetsMillis.get(i + 1) - offsetsMillis.get(i);
        }
    }

    interface Drive {
        /** Runs the calls; {@code arrivalsPerCall} may record the server's arrivals per call. */
        List<Rpc.Outcome> run(Channel channel, ScriptedServer server, List<Integer> arrivalsPerCall) throws Exception;
    }

    private static ScriptedServer server(Transport t) {
        return t == Transport.IN_PROCESS ? inProcess : netty;
    }

    private static final Metadata.Key<String> RUN = Metadata.Key.of("x-run", Metadata.ASCII_STRING_MARSHALLER);
    private static final AtomicInteger RUNS = new AtomicInteger();

    /** Adds header {@code x-run: id} to every call, so the server's arrivals can be told apart by run. */
    private static ClientInterceptor tag(String id) {
        return new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options,
                    Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        headers.put(RUN, id);
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    static Observed run(Engine engine, Transport transport, ChannelRetryConfig config,
            Function<Arrival, Action> script, Drive drive) throws Exception {
        ScriptedServer server = server(transport);
        String id = engine + "-" + RUNS.incrementAndGet();
        try (Engines.Client client = Engines.client(engine, server, transport, config, scheduler)) {
            Channel channel = ClientInterceptors.intercept(client.channel(), tag(id));
            // warm up: a connected transport, so no attempt waits in a delayed stream
            server.script(a -> Action.ok());
            Rpc.unary(client.channel(), GrpcRetryCallOptions.withoutRetries(CallOptions.DEFAULT), "warm-up");
            // grpc-java's engine hedges the warm-up too (it ignores DISABLE): let its cancelled hedges arrive
            // before the record is reset, or they count as arrivals of the run
            Thread.sleep(50);
            if (client.events() != null) {
                client.events().clear();
            }
            server.reset();
            server.script(script);
            List<Integer> perCall = new ArrayList<>();
            List<Rpc.Outcome> outcomes = drive.run(channel, server, perCall);
            Thread.sleep(120); // let cancellations reach the server and any stray attempt arrive
            List<Arrival> arrivals = new ArrayList<>(server.arrivals());
            for (Arrival a : arrivals) {
                assertThat(a.header("x-run")).as("arrival of another run").isEqualTo(id);
            }
            // by attempt number: the order in which attempts reach the server is a race
            arrivals.sort(Comparator.comparing(a -> a.previousAttempts == null ? -1 : a.previousAttempts));
            long first = arrivals.isEmpty() ? 0 : arrivals.get(0).nanoTime;
            List<Integer> prev = new ArrayList<>();
            List<Boolean> cancelled = new ArrayList<>();
            List<List<String>> seen = new ArrayList<>();
            List<Long> offsets = new ArrayList<>();
            for (Arrival a : arrivals) {
                prev.add(a.previousAttempts);
                cancelled.add(a.cancelled);
                seen.add(List.copyOf(a.messages));
                offsets.add(TimeUnit.NANOSECONDS.toMillis(a.nanoTime - first));
            }
            List<Status.Code> codes = new ArrayList<>();
            List<List<String>> responses = new ArrayList<>();
            List<Long> elapsed = new ArrayList<>();
            for (Rpc.Outcome o : outcomes) {
                codes.add(o.code());
                responses.add(o.responses());
                elapsed.add(o.elapsedMillis());
            }
            if (client.interceptor() != null) {
                assertThat(client.interceptor().bufferPool().used()).as("bytes held after the scenario").isZero();
                assertThat(scheduler.outstandingTimers()).as("timers left after the scenario").isZero();
                assertThat(client.events().callsEnded.get()).as("calls reported ended")
                        .isEqualTo(client.events().callsStarted.get());
                // a cancelled loser reports its end when its cancellation completes, possibly after the call's
                RecordingEvents ev = client.events();
                RetryEngineTest.waitFor(() -> ev.attemptsEnded.get() == ev.attemptsStarted.get());
            }
            return new Observed(engine, arrivals.size(), prev, cancelled, seen, codes, responses, elapsed, offsets,
                    perCall, client.events());
        }
    }

    /** Runs under both engines, asserts they agree and returns both (native first). */
    private static Observed[] same(Transport t, ChannelRetryConfig config, Function<Arrival, Action> script,
            Drive drive) throws Exception {
        Observed nat = run(Engine.NATIVE, t, config, script, drive);
        Observed ours = run(Engine.INTERCEPTOR, t, config, script, drive);
        assertThat(ours.comparable()).as("interceptor engine vs grpc-java's (native %s)", nat)
                .isEqualTo(nat.comparable());
        return new Observed[] {nat, ours};
    }

    private static ChannelRetryConfig hedged(HedgingPolicy policy) {
        return Configs.channel(Configs.hedged(policy));
    }

    private static Drive unary(CallOptions options) {
        return (ch, server, perCall) -> List.of(Rpc.unary(ch, options, "req"));
    }

    /** One unary call with a deadline {@code millis} from its start. */
    private static Drive unaryWithDeadline(long millis) {
        return (ch, server, perCall) -> List.of(
                Rpc.unary(ch, CallOptions.DEFAULT.withDeadlineAfter(millis, TimeUnit.MILLISECONDS), "req"));
    }

    private static final Drive UNARY = unary(CallOptions.DEFAULT);

    private static List<AttemptKind> startedKinds(RecordingEvents events) {
        List<AttemptKind> kinds = new ArrayList<>();
        for (RecordingEvents.Event e : events.ofType("attemptStarted")) {
            kinds.add(e.kind());
        }
        return kinds;
    }

    // ---------------------------------------------------------------- the winner

    @ParameterizedTest
    @EnumSource(Transport.class)
    void slowFirstAttemptIsOvertakenByAHedge(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(3, 150, UNAVAILABLE)),
                a -> a.index == 1 ? Action.ok().delay(1500) : Action.ok(), UNARY);
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(2);
        assertThat(ours.previousAttempts()).containsExactly(null, 1);
        assertThat(ours.cancelled()).as("the slow first attempt is cancelled").containsExactly(true, false);
        assertThat(ours.codes()).containsExactly(Status.Code.OK);
        assertThat(ours.responses()).containsExactly(List.of("req"));
        for (Observed x : o) {
            assertThat(x.elapsedMillis().get(0)).as(x.engine() + " elapsed").isBetween(145L, 700L);
            assertThat(x.gap(0)).as(x.engine() + " hedging delay").isBetween(135L, 450L);
        }
        assertThat(startedKinds(ours.events())).containsExactly(AttemptKind.INITIAL, AttemptKind.HEDGE);
        assertThat(ours.events().hedgesPerCall).containsExactly(1);
        assertThat(ours.events().ofType("committed")).extracting(RecordingEvents.Event::attempt).containsExactly(2);
        assertThat(ours.events().ofType("attemptEnded")).extracting(e -> e.attempt() + ":" + e.code())
                .containsExactlyInAnyOrder("1:CANCELLED", "2:OK");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void fatalStatusOnAHedgeEndsTheCallAndCancelsTheOthers(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(4, 150, UNAVAILABLE)),
                a -> a.index == 1 ? Action.ok().delay(1500) : Action.fail(Status.Code.INTERNAL), UNARY);
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(2);
        assertThat(ours.codes()).containsExactly(Status.Code.INTERNAL);
        assertThat(ours.cancelled()).containsExactly(true, false);
        for (Observed x : o) {
            assertThat(x.elapsedMillis().get(0)).as(x.engine() + " elapsed").isLessThan(800L);
        }
        assertThat(ours.events().suppressions()).containsExactly(SuppressionReason.NON_RETRYABLE_STATUS);
    }

    /**
     * Every attempt fails with a non-fatal status. A6: "If a non-fatal status code is received from a
     * hedged request, then the next hedged request in line is sent immediately". Ours does; grpc-java
     * waits for the pending hedging delay (a deliberate difference in timing; arrivals and status agree).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void nonFatalFailuresSendTheNextHedgeAtOnceUntilAllFailed(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(3, 150, UNAVAILABLE)),
                ScriptedServer.always(UNAVAILABLE), UNARY);
        Observed nat = o[0];
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(3);
        assertThat(ours.previousAttempts()).containsExactly(null, 1, 2);
        assertThat(ours.codes()).containsExactly(UNAVAILABLE);
        assertThat(nat.gap(0)).isGreaterThanOrEqualTo(140L);
        assertThat(nat.gap(1)).isGreaterThanOrEqualTo(140L);
        assertThat(ours.gap(0)).isLessThan(100L);
        assertThat(ours.gap(1)).isLessThan(100L);
        assertThat(ours.elapsedMillis().get(0)).isLessThan(nat.elapsedMillis().get(0));
        assertThat(ours.events().suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS);
        assertThat(ours.events().hedgesPerCall).containsExactly(2);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void nonFatalFailureOfAHedgeThenAnotherHedgeWins(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(3, 150, UNAVAILABLE)),
                a -> switch (a.index) {
                    case 1 -> Action.ok().delay(2000);
                    case 2 -> Action.fail(UNAVAILABLE);
                    default -> Action.ok();
                }, UNARY);
        Observed nat = o[0];
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(3);
        assertThat(ours.cancelled()).containsExactly(true, false, false);
        assertThat(ours.codes()).containsExactly(Status.Code.OK);
        assertThat(nat.gap(1)).as("grpc-java waits for the hedging delay").isGreaterThanOrEqualTo(140L);
        assertThat(ours.gap(1)).as("A6: the next hedge goes at once").isLessThan(100L);
    }

    /** hedgingDelay 0: every attempt goes at once (A6's "issues four RPCs simultaneously"); the first answer wins. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void zeroDelaySendsEveryAttemptAtOnce(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(3, 0, UNAVAILABLE)),
                a -> a.previousAttempts != null && a.previousAttempts == 1 ? Action.ok().delay(100)
                        : Action.ok().delay(1500), UNARY);
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(3);
        assertThat(ours.previousAttempts()).containsExactly(null, 1, 2);
        assertThat(ours.cancelled()).containsExactly(true, false, true);
        assertThat(ours.offsetsMillis().get(2)).isLessThan(100L);
        assertThat(ours.events().ofType("committed")).extracting(RecordingEvents.Event::attempt).containsExactly(2);
    }

    // ---------------------------------------------------------------- pushback

    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushbackStopEndsHedgingWhileAttemptsInFlightGoOn(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(4, 150, UNAVAILABLE)),
                a -> a.index == 1 ? Action.ok().delay(800) : Action.fail(UNAVAILABLE).pushback("-1"), UNARY);
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(2);
        assertThat(ours.cancelled()).containsExactly(false, false);
        assertThat(ours.codes()).containsExactly(Status.Code.OK);
        assertThat(ours.elapsedMillis().get(0)).isGreaterThanOrEqualTo(790L);
        assertThat(ours.events().suppressions()).containsExactly(SuppressionReason.PUSHBACK);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushbackStopOnTheOnlyAttemptEndsTheCall(Transport t) throws Exception {
        for (String value : List.of("-1", "soon")) {
            Observed[] o = same(t, hedged(Configs.hedging(3, 300, UNAVAILABLE)),
                    a -> Action.fail(UNAVAILABLE).pushback(value), UNARY);
            assertThat(o[1].arrivals()).isEqualTo(1);
            assertThat(o[1].codes()).containsExactly(UNAVAILABLE);
            assertThat(o[1].elapsedMillis().get(0)).isLessThan(250L);
        }
    }

    /**
     * Pushback n ≥ 0 after a non-fatal status. A6: "Send next hedged request in n ms". Ours does;
     * grpc-java turns a positive pushback after a non-fatal status into 0 and sends the next hedge at
     * once (a deliberate difference; arrivals and status agree, the gap does not).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushbackDelaysTheNextHedgeByExactlyThatMuch(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(3, 2000, UNAVAILABLE)),
                a -> a.index == 1 ? Action.fail(UNAVAILABLE).pushback("300") : Action.ok(), UNARY);
        Observed nat = o[0];
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(2);
        assertThat(ours.codes()).containsExactly(Status.Code.OK);
        assertThat(ours.gap(0)).as("A6: next hedge after the pushback").isBetween(299L, 420L);
        assertThat(nat.gap(0)).as("grpc-java: at once").isLessThan(150L);
    }

    /** Later hedges resume at pushback + hedging delay (A6 summary, case 5). */
    @Test
    void hedgesAfterAPushbackResumeAtTheHedgingDelay() throws Exception {
        Observed ours = run(Engine.INTERCEPTOR, Transport.IN_PROCESS, hedged(Configs.hedging(4, 100, UNAVAILABLE)),
                a -> switch (a.index) {
                    case 1 -> Action.fail(UNAVAILABLE).pushback("250");
                    default -> Action.ok().delay(2000);
                }, unaryWithDeadline(1000));
        // attempt 1 at 0 fails at once; attempt 2 at 250 (pushback); attempt 3 at 350; attempt 4 at 450
        assertThat(ours.arrivals()).isEqualTo(4);
        assertThat(ours.gap(0)).isBetween(245L, 400L);
        assertThat(ours.gap(1)).isBetween(95L, 250L);
        assertThat(ours.gap(2)).isBetween(95L, 250L);
        assertThat(ours.codes()).containsExactly(Status.Code.DEADLINE_EXCEEDED);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushbackZeroSendsTheNextHedgeAtOnceInBothEngines(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(3, 1000, UNAVAILABLE)),
                a -> a.index == 1 ? Action.fail(UNAVAILABLE).pushback("0") : Action.ok(), UNARY);
        for (Observed x : o) {
            assertThat(x.arrivals()).isEqualTo(2);
            assertThat(x.gap(0)).as(x.engine() + " gap").isLessThan(300L);
        }
    }

    // ---------------------------------------------------------------- limits

    /** max-attempts 10 under the default cap of 5: both engines send 5 (the config is not pre-capped). */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void maxAttemptsAboveTheCapSendsFive(Transport t) throws Exception {
        ServiceConfig uncapped = Configs.hedged(Configs.hedging(10, 40, UNAVAILABLE));
        ChannelRetryConfig config = new ChannelRetryConfig("test", uncapped, ChannelRetryConfig.DEFAULT_MAX_ATTEMPTS_CAP,
                ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT, ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE, null, null,
                null);
        Observed[] o = same(t, config, a -> Action.ok().delay(600), UNARY);
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(5);
        assertThat(ours.previousAttempts()).containsExactly(null, 1, 2, 3, 4);
        assertThat(ours.cancelled()).containsExactly(false, true, true, true, true);
        assertThat(ours.codes()).containsExactly(Status.Code.OK);
        assertThat(ours.events().hedgesPerCall).containsExactly(4);
    }

    /**
     * Throttle 10 / 0.1, every attempt fails non-fatally: each failed hedge is a qualified failure and
     * no hedge goes once the bucket is at half: 3, 2, then 1 attempt per call in both engines.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void throttlingBlocksHedges(Transport t) throws Exception {
        ChannelRetryConfig config = Configs.channel(
                Configs.hedged(Configs.hedging(3, 150, UNAVAILABLE), new RetryThrottlingPolicy(10, 0.1)));
        Drive sixCalls = (ch, server, perCall) -> {
            List<Rpc.Outcome> out = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                int before = server.arrivalCount();
                out.add(Rpc.unary(ch, CallOptions.DEFAULT, "req"));
                Thread.sleep(20);
                perCall.add(server.arrivalCount() - before);
            }
            return out;
        };
        Observed[] o = same(t, config, ScriptedServer.always(UNAVAILABLE), sixCalls);
        Observed ours = o[1];
        assertThat(ours.arrivalsPerCall()).containsExactly(3, 2, 1, 1, 1, 1);
        assertThat(ours.codes()).containsOnly(UNAVAILABLE);
        assertThat(ours.events().suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS,
                SuppressionReason.THROTTLED, SuppressionReason.THROTTLED, SuppressionReason.THROTTLED,
                SuppressionReason.THROTTLED, SuppressionReason.THROTTLED);
    }

    /**
     * A failed hedge takes the throttle to its threshold while the first attempt is still running.
     * A6: "The hedged request is cancelled, and if there are no other already-sent hedged RPCs the
     * failure is returned": ours stops hedging and lets the first attempt finish (OK); grpc-java ends
     * the call with the hedge's failure and cancels the first attempt (a deliberate difference).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void throttledHedgeFailureLetsAttemptsInFlightFinish(Transport t) throws Exception {
        ChannelRetryConfig config = Configs.channel(
                Configs.hedged(Configs.hedging(3, 150, UNAVAILABLE), new RetryThrottlingPolicy(2, 0.1)));
        Function<Arrival, Action> script = a -> a.index == 1 ? Action.ok().delay(800) : Action.fail(UNAVAILABLE);
        Observed nat = run(Engine.NATIVE, t, config, script, UNARY);
        Observed ours = run(Engine.INTERCEPTOR, t, config, script, UNARY);
        assertThat(nat.arrivals()).isEqualTo(2);
        assertThat(ours.arrivals()).isEqualTo(2);
        assertThat(nat.codes()).containsExactly(UNAVAILABLE);
        assertThat(nat.cancelled()).containsExactly(true, false);
        assertThat(ours.codes()).containsExactly(Status.Code.OK);
        assertThat(ours.cancelled()).containsExactly(false, false);
        assertThat(ours.events().suppressions()).containsExactly(SuppressionReason.THROTTLED);
    }

    /** The budget is asked for every hedge (ours only: grpc-java has no budget). */
    @Test
    void budgetBlocksHedges() throws Exception {
        Function<Arrival, Action> script = a -> a.index == 1 ? Action.ok().delay(400) : Action.ok();
        ServiceConfig sc = Configs.hedged(Configs.hedging(3, 100, UNAVAILABLE));
        ChannelRetryConfig spent = Configs.channel(sc, ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT,
                ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE, new RetryBudgetPolicy(0, 0, Duration.ofSeconds(10)));
        Observed blocked = run(Engine.INTERCEPTOR, Transport.IN_PROCESS, spent, script, UNARY);
        assertThat(blocked.arrivals()).isEqualTo(1);
        assertThat(blocked.codes()).containsExactly(Status.Code.OK);
        assertThat(blocked.elapsedMillis().get(0)).isGreaterThanOrEqualTo(395L);
        assertThat(blocked.events().suppressions()).containsExactly(SuppressionReason.BUDGET);

        ChannelRetryConfig generous = Configs.channel(sc, ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT,
                ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE, new RetryBudgetPolicy(1.0, 0, Duration.ofSeconds(10)));
        Observed allowed = run(Engine.INTERCEPTOR, Transport.IN_PROCESS, generous, script, UNARY);
        assertThat(allowed.arrivals()).isEqualTo(2);
        assertThat(allowed.events().suppressions()).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void callDeadlineBoundsHedging(Transport t) throws Exception {
        // attempts at 0, 200 and 400 ms; the next one would start after the 500 ms deadline
        Observed[] o = same(t, hedged(Configs.hedging(5, 200, UNAVAILABLE)), a -> Action.ok().delay(3000),
                unaryWithDeadline(500));
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(3);
        assertThat(ours.codes()).containsExactly(Status.Code.DEADLINE_EXCEEDED);
        for (Observed x : o) {
            assertThat(x.elapsedMillis().get(0)).as(x.engine() + " elapsed").isBetween(490L, 900L);
        }
    }

    // ---------------------------------------------------------------- RPC types and buffering

    @ParameterizedTest
    @EnumSource(Transport.class)
    void clientStreamIsReplayedToEveryHedge(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(2, 60, UNAVAILABLE)),
                a -> a.index == 1 ? Action.ok().delay(1500) : Action.ok(), (ch, server, perCall) -> {
                    Rpc.Handle h = Rpc.start(ch, Rpc.CLIENT_STREAMING, CallOptions.DEFAULT).send("a", "b");
                    RetryEngineTest.waitFor(() -> server.arrivalCount() == 2);
                    Thread.sleep(20);
                    return List.of(h.send("c").halfClose().await());
                });
        for (Observed x : o) {
            // the hedge got the replay and the rest; the loser at least the replayed part before its cancellation
            assertThat(x.serverMessages().get(1)).as(x.engine().name()).containsExactly("a", "b", "c");
            assertThat(List.of("a", "b", "c")).as(x.engine().name()).startsWith(
                    x.serverMessages().get(0).toArray(new String[0]));
            assertThat(x.serverMessages().get(0)).as(x.engine().name()).hasSizeGreaterThanOrEqualTo(2);
        }
        assertThat(o[1].responses()).containsExactly(List.of("a,b,c"));
        assertThat(o[1].cancelled()).containsExactly(true, false);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void serverStreamComesFromTheWinner(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(2, 60, UNAVAILABLE)),
                a -> a.index == 1 ? Action.ok().delay(1500).responses(5) : Action.ok().responses(3),
                (ch, server, perCall) -> List.of(Rpc.serverStreaming(ch, CallOptions.DEFAULT, "s")));
        assertThat(o[1].responses()).containsExactly(List.of("r0", "r1", "r2"));
        assertThat(o[1].cancelled()).containsExactly(true, false);
    }

    /** Bidi: the first attempt to answer (the hedge echoes, the first attempt does not) wins. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void bidiFirstEchoWins(Transport t) throws Exception {
        Observed[] o = same(t, hedged(Configs.hedging(2, 60, UNAVAILABLE)),
                a -> a.index == 1 ? Action.failOnHalfClose(UNAVAILABLE) : Action.ok(), (ch, server, perCall) -> {
                    Rpc.Handle h = Rpc.start(ch, Rpc.BIDI, CallOptions.DEFAULT).send("x", "y");
                    RetryEngineTest.waitFor(() -> server.arrivalCount() == 2 && h.listener.messages().size() == 2);
                    return List.of(h.send("z").halfClose().await());
                });
        for (Observed x : o) {
            assertThat(x.serverMessages().get(0)).as(x.engine().name()).containsExactly("x", "y");
            assertThat(x.serverMessages().get(1)).as(x.engine().name()).containsExactly("x", "y", "z");
        }
        assertThat(o[1].responses()).containsExactly(List.of("x", "y", "z"));
        assertThat(o[1].cancelled()).containsExactly(true, false);
    }

    /**
     * A message passes the per-RPC buffer limit while two attempts are in flight: the call commits to
     * the one that has sent the most (the first), the other is cancelled and no more hedges go (A6;
     * grpc-java commits to the attempt whose outbound bytes passed the limit first: the same one).
     * Over Netty, where grpc-java knows the wire size of each message.
     */
    @Test
    void bufferLimitCommitsToTheMostAdvancedAttemptAndStopsHedging() throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.hedged(Configs.hedging(3, 200, UNAVAILABLE)), 64 * 1024,
                1 << 20, null);
        Drive drive = (ch, server, perCall) -> {
            Rpc.Handle h = Rpc.start(ch, Rpc.CLIENT_STREAMING, CallOptions.DEFAULT).sendBytes(40 * 1024);
            RetryEngineTest.waitFor(() -> server.arrivalCount() == 2);
            Thread.sleep(20);
            h.sendBytes(40 * 1024);
            Thread.sleep(300); // a third hedge would have gone by now
            return List.of(h.halfClose().await());
        };
        Observed[] o = same(Transport.NETTY, config, a -> Action.ok(), drive);
        Observed ours = o[1];
        assertThat(ours.arrivals()).isEqualTo(2);
        assertThat(ours.cancelled()).containsExactly(false, true);
        assertThat(ours.codes()).containsExactly(Status.Code.OK);
        assertThat(ours.serverMessages().get(0)).hasSize(2);
        assertThat(ours.events().ofType("committed")).extracting(RecordingEvents.Event::attempt).containsExactly(1);
        // in-process (ours only: grpc-java does not size in-process messages)
        Observed inProc = run(Engine.INTERCEPTOR, Transport.IN_PROCESS, config, a -> Action.ok(), drive);
        assertThat(inProc.comparable()).isEqualTo(ours.comparable());
    }

    // ---------------------------------------------------------------- cancellation

    @ParameterizedTest
    @EnumSource(Transport.class)
    void applicationCancelCancelsEveryAttempt(Transport t) throws Exception {
        ScriptedServer server = server(t);
        Observed[] o = same(t, hedged(Configs.hedging(3, 40, UNAVAILABLE)), a -> Action.ok().delay(3000),
                (ch, srv, perCall) -> {
                    Rpc.Handle h = Rpc.start(ch, Rpc.UNARY, CallOptions.DEFAULT).send("a").halfClose();
                    RetryEngineTest.waitFor(() -> server.arrivalCount() == 3);
                    h.call.cancel("enough", null);
                    Rpc.Outcome out = h.await(2, TimeUnit.SECONDS);
                    RetryEngineTest.waitFor(() -> server.arrivals().stream().allMatch(a -> a.cancelled));
                    return List.of(out);
                });
        assertThat(o[1].codes()).containsExactly(Status.Code.CANCELLED);
        assertThat(o[1].cancelled()).containsExactly(true, true, true);
    }

    /** Cancelled while no attempt is in flight (waiting for a pushed-back hedge): ends at once, no timer left. */
    @Test
    void cancelWhileWaitingForAPushedBackHedge() throws Exception {
        Observed ours = run(Engine.INTERCEPTOR, Transport.IN_PROCESS, hedged(Configs.hedging(3, 40, UNAVAILABLE)),
                a -> Action.fail(UNAVAILABLE).pushback("2000"), (ch, server, perCall) -> {
                    Rpc.Handle h = Rpc.start(ch, Rpc.UNARY, CallOptions.DEFAULT).send("a").halfClose();
                    RetryEngineTest.waitFor(() -> server.arrivalCount() == 1);
                    Thread.sleep(50);
                    h.call.cancel("enough", null);
                    return List.of(h.await(2, TimeUnit.SECONDS));
                });
        assertThat(ours.arrivals()).isEqualTo(1);
        assertThat(ours.codes()).containsExactly(Status.Code.CANCELLED);
        assertThat(ours.elapsedMillis().get(0)).isLessThan(1000L);
    }
}
