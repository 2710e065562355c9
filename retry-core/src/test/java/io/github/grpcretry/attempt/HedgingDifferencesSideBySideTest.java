package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The deliberate differences of the hedging engine from grpc-java's own hedging (docs/differences.md)
 * that {@link HedgingSideBySideTest} does not assert, each run under
 * both engines against the same real server: when the throttle (and the budget) are consulted for a
 * hedge, when the throttle's success token is credited, when the application sees the close relative
 * to the losers' cancellation, that no hedge is scheduled past the call's deadline, and that after a
 * non-fatal failure the next hedge goes at once and the one after it a hedging delay later.
 *
 * <p>Every run has a channel of its own (so its own throttle and budget) and tags its calls with a
 * run id and a role; the server's script answers by role, and the server's record is read by tag.
 * Scenarios synchronise on events: the server's record of an arrival, each call's close, and the
 * client's own record of every attempt stream (a {@link ClientStreamTracer} on the call's options
 * sees each attempt of either engine, which lets a run wait until every attempt has closed). Timing
 * bounds appear only where the difference is one of time, each taken from the configured delay with
 * a margin of at least half of it; a precondition that needs the machine to keep up (a call made
 * within a hedging delay) is asserted, not assumed.
 */
class HedgingDifferencesSideBySideTest {

    private static final Status.Code UNAVAILABLE = Status.Code.UNAVAILABLE;
    private static final Metadata.Key<String> RUN = Metadata.Key.of("x-run", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> ROLE = Metadata.Key.of("x-role", Metadata.ASCII_STRING_MARSHALLER);
    private static final AtomicInteger RUNS = new AtomicInteger();

    /** The probe's hedging delay, and how long the server holds a probe's first attempt. */
    private static final long DELAY = 800;
    private static final long HELD = 2000;
    /** Throttle of 2 tokens (threshold 1), a whole token back per success: one failure throttles, one success undoes it. */
    private static final RetryThrottlingPolicy TIGHT = new RetryThrottlingPolicy(2, 1.0);

    @RegisterExtension
    static final SideBySideServers SERVERS = new SideBySideServers("hedging-differences");

    private static ScriptedServer server(Transport t) {
        return SERVERS.server(t);
    }

    /** The roles the server's script answers. */
    private static Action byRole(Arrival a) {
        String role = a.header(ROLE.name());
        boolean first = a.previousAttempts == null;
        if (role == null) {
            return Action.ok(); // warm-up
        }
        return switch (role) {
            case "probe", "probe-again" -> first ? Action.ok().delay(HELD) : Action.ok(); // a slow first attempt, fast hedges
            case "fail" -> Action.fail(UNAVAILABLE);
            case "ok" -> Action.ok();
            case "headers-then-fail" -> Action.fail(UNAVAILABLE).headersFirst();
            case "held-loser" -> first ? Action.ok().delay(5000) : Action.ok();
            case "pushback-past-deadline" -> Action.fail(UNAVAILABLE).pushback("5000");
            case "nonfatal-second" -> switch (a.previousAttempts == null ? 0 : a.previousAttempts) {
                case 0, 2 -> Action.ok().delay(4000); // attempts 1 and 3 are slow
                case 1 -> Action.fail(UNAVAILABLE); // attempt 2 fails at once, non-fatally
                default -> Action.ok(); // attempt 4 answers
            };
            default -> Action.fail(Status.Code.INTERNAL);
        };
    }

    private static ChannelRetryConfig hedged(HedgingPolicy policy, RetryThrottlingPolicy throttling) {
        return Configs.channel(Configs.hedged(policy, throttling));
    }

    // ---------------------------------------------------------------- harness

    /** One attempt stream as the client saw it (either engine). */
    static final class AttemptRecord {
        final String run;
        final String role;
        /** The attempt's {@code grpc-previous-rpc-attempts}: 0 for the first attempt. */
        final int previous;
        /** When the engine opened the attempt's stream (the tracer is created then). */
        final long createdNanos = System.nanoTime();
        volatile Status closed;

        AttemptRecord(String run, String role, int previous) {
            this.run = run;
            this.role = role;
            this.previous = previous;
        }
    }

    /** Holds a loser's close until the application's close arrives, or {@code maxMillis}. */
    static final class Hold {
        final CountDownLatch appClosed = new CountDownLatch(1);
        final AtomicLong appClosedAt = new AtomicLong();
        final long maxMillis;
        volatile long heldAt;
        volatile long releasedAt;
        /** True when the application's close released the hold, false when it ran out; null: never held. */
        volatile Boolean releasedByTheApplicationsClose;

        Hold(long maxMillis) {
            this.maxMillis = maxMillis;
        }

        void hold() {
            heldAt = System.nanoTime();
            try {
                releasedByTheApplicationsClose = appClosed.await(maxMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                releasedByTheApplicationsClose = false;
            }
            releasedAt = System.nanoTime();
        }

        void applicationClosed() {
            appClosedAt.set(System.nanoTime());
            appClosed.countDown();
        }
    }

    /** Sees every attempt stream of a call, in either engine (grpc-java gives each attempt its own tracer). */
    static final class AttemptTracer extends ClientStreamTracer.Factory {
        final ConcurrentLinkedQueue<AttemptRecord> attempts = new ConcurrentLinkedQueue<>();
        /** When set, the close of a cancelled first attempt of role "held-loser" is held here. */
        volatile Hold loserHold;

        @Override
        public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
            String prev = headers.get(ScriptedServer.PREVIOUS_ATTEMPTS);
            AttemptRecord r = new AttemptRecord(headers.get(RUN), headers.get(ROLE),
                    prev == null ? 0 : Integer.parseInt(prev));
            attempts.add(r);
            return new ClientStreamTracer() {
                @Override
                public void streamClosed(Status status) {
                    Hold h = loserHold;
                    if (h != null && "held-loser".equals(r.role) && r.previous == 0
                            && status.getCode() == Status.Code.CANCELLED) {
                        h.hold();
                    }
                    r.closed = status;
                }
            };
        }
    }

    /** A channel of one engine for one scenario; its calls carry the run's id. */
    final class Run implements AutoCloseable {
        final Engine engine;
        final Transport transport;
        final ScriptedServer server;
        final Engines.Client client;
        final String id;
        final AttemptTracer tracer = new AttemptTracer();

        Run(Engine engine, Transport transport, ChannelRetryConfig config, ClientInterceptor... below)
                throws InterruptedException {
            this(engine, transport, engine == Engine.NATIVE
                    ? Engines.nativeClient(server(transport), transport, config)
                    : Engines.interceptorClient(server(transport), transport, config, SERVERS.scheduler(), below));
        }

        Run(Engine engine, Transport transport, Engines.Client client) throws InterruptedException {
            this.engine = engine;
            this.transport = transport;
            this.server = server(transport);
            this.client = client;
            this.id = engine + "-" + RUNS.incrementAndGet();
            server.script(HedgingDifferencesSideBySideTest::byRole);
            // a connected transport first, so that no attempt of the scenario waits for a connection
            // (the engine's pass-through; grpc-java hedges it like any call, but it is answered at once)
            Rpc.Outcome warm = Rpc.unary(client.channel(), GrpcRetryCallOptions.withoutRetries(CallOptions.DEFAULT), "w");
            assertThat(warm.code()).isEqualTo(Status.Code.OK);
        }

        /** Starts a unary call with role {@code role}; {@code onClose} runs in the application's onClose. */
        Rpc.Handle start(String role, CallOptions options, Runnable onClose) {
            Metadata headers = new Metadata();
            headers.put(RUN, id);
            headers.put(ROLE, role);
            ClientCall<SimpleRequest, SimpleResponse> call =
                    client.channel().newCall(Rpc.UNARY, options.withStreamTracerFactory(tracer));
            ContractListener<SimpleResponse> listener = new ContractListener<>(new ClientCall.Listener<>() {
                @Override
                public void onMessage(SimpleResponse message) {
                    call.request(1);
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    if (onClose != null) {
                        onClose.run();
                    }
                }
            });
            call.start(listener, headers);
            call.request(1);
            return new Rpc.Handle(call, listener).send(role).halfClose();
        }

        Rpc.Handle start(String role) {
            return start(role, CallOptions.DEFAULT, null);
        }

        Rpc.Outcome unary(String role) throws InterruptedException {
            return start(role).await(20, TimeUnit.SECONDS);
        }

        /** This run's arrivals of {@code role} at the server, by attempt number. */
        List<Arrival> arrivals(String role) {
            List<Arrival> out = new ArrayList<>();
            for (Arrival a : server.arrivals()) {
                if (id.equals(a.header(RUN.name())) && role.equals(a.header(ROLE.name()))) {
                    out.add(a);
                }
            }
            out.sort(Comparator.comparing(a -> a.previousAttempts == null ? 0 : a.previousAttempts));
            return out;
        }

        /** This run's attempt streams of {@code role}, by attempt number. */
        List<AttemptRecord> attempts(String role) {
            return tracer.attempts.stream().filter(r -> id.equals(r.run) && role.equals(r.role))
                    .sorted(Comparator.comparingInt(r -> r.previous)).toList();
        }

        void awaitArrivals(String role, int n) throws InterruptedException {
            waitFor(() -> arrivals(role).size() >= n, id + ": " + n + " arrival(s) of " + role);
        }

        /**
         * Waits until every attempt stream of this run has closed on the client and every arrival of
         * the run at the server has ended (answered or seen cancelled), and checks that the client
         * opened as many attempt streams as reached the server. For our engine, also that every attempt
         * reported its end, no timer is left and no byte stays buffered.
         */
        void settle() throws InterruptedException {
            waitFor(() -> tracer.attempts.stream().allMatch(r -> r.closed != null), id + ": every attempt stream closed");
            waitFor(() -> server.arrivals().stream().filter(a -> id.equals(a.header(RUN.name())))
                    .allMatch(a -> a.closedByServer || a.cancelled), id + ": every arrival ended at the server");
            long arrivals = server.arrivals().stream().filter(a -> id.equals(a.header(RUN.name()))).count();
            waitFor(() -> server.arrivals().stream().filter(a -> id.equals(a.header(RUN.name()))).count()
                    == tracer.attempts.size(), id + ": as many arrivals as attempt streams (" + arrivals + ")");
            if (client.interceptor() != null) {
                RecordingEvents ev = client.events();
                waitFor(() -> ev.attemptsEnded.get() == ev.attemptsStarted.get(), id + ": every attempt reported its end");
                assertThat(ev.callsEnded.get()).as("calls reported ended").isEqualTo(ev.callsStarted.get());
                assertThat(EngineTestAccess.bufferPool(client.interceptor()).used()).as("bytes held after the scenario").isZero();
                assertThat(SERVERS.scheduler().outstandingTimers()).as("timers left after the scenario").isZero();
            }
        }

        List<SuppressionReason> suppressions() {
            return client.events() == null ? List.of() : client.events().suppressions();
        }

        @Override
        public void close() throws InterruptedException {
            client.close();
        }
    }

    static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within 10 s: " + what);
            }
            Thread.sleep(2); // polling interval of the wait, not a synchronisation point
        }
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    private static List<Boolean> cancelled(List<Arrival> arrivals) {
        return arrivals.stream().map(a -> a.cancelled).toList();
    }

    // ---------------------------------------------------------------- when the throttle is consulted

    /**
     * grpc-java consults the throttle when it schedules the next hedge (at the call's start, and when a
     * hedge is sent, for the one after it); a hedge already scheduled is sent whatever the throttle
     * says when it is due. Ours consults it when the hedge is about to be sent. Two runs per engine on
     * a throttle of 2 tokens (threshold 1) that one failure throttles and one success restores:
     * <ol>
     *   <li>the throttle falls (another call fails) after the probe started and before its hedge is
     *       due: grpc-java sends the hedge it had scheduled (the hedge wins, the slow first attempt is
     *       cancelled); ours refuses it ({@code suppressed{reason=throttled}}) and the first attempt
     *       answers;</li>
     *   <li>the throttle is down when the probe starts and recovers (another call succeeds) before the
     *       hedge is due: grpc-java never scheduled one (1 arrival); ours sends it and it wins.</li>
     * </ol>
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void throttleIsConsultedWhenTheHedgeIsSentNotWhenItIsScheduled(Transport t) throws Exception {
        ChannelRetryConfig config = hedged(Configs.hedging(2, DELAY, UNAVAILABLE), TIGHT);
        for (Engine engine : Engine.values()) {
            boolean ours = engine == Engine.INTERCEPTOR;
            // 1. the throttle falls after the probe's start
            try (Run r = new Run(engine, t, config)) {
                Rpc.Handle probe = r.start("probe");
                r.awaitArrivals("probe", 1);
                Rpc.Outcome failing = r.unary("fail");
                long fellAfter = millisSince(probe.startNanos);
                assertThat(failing.code()).isEqualTo(UNAVAILABLE);
                assertThat(fellAfter).as(r.id + " precondition: the throttle fell before the hedge was due")
                        .isLessThan(DELAY);
                Rpc.Outcome o = probe.await(20, TimeUnit.SECONDS);
                r.settle();
                assertThat(o.code()).isEqualTo(Status.Code.OK);
                assertThat(r.arrivals("fail")).as(r.id + " the failing call is throttled at once").hasSize(1);
                List<Arrival> arrivals = r.arrivals("probe");
                if (ours) {
                    assertThat(arrivals).as(r.id + " hedge refused when due").hasSize(1);
                    assertThat(cancelled(arrivals)).containsExactly(false);
                    assertThat(o.elapsedMillis()).as(r.id + " answered by the held first attempt").isGreaterThanOrEqualTo(HELD);
                    assertThat(r.suppressions()).as(r.id + " the failing call's, then the probe's hedge")
                            .containsExactly(SuppressionReason.THROTTLED, SuppressionReason.THROTTLED);
                } else {
                    assertThat(arrivals).as(r.id + " the hedge scheduled at the start is sent").hasSize(2);
                    assertThat(cancelled(arrivals)).as(r.id + " the hedge won").containsExactly(true, false);
                }
            }
            // 2. the throttle is down at the probe's start and recovers before its hedge is due
            try (Run r = new Run(engine, t, config)) {
                assertThat(r.unary("fail").code()).isEqualTo(UNAVAILABLE);
                Rpc.Handle probe = r.start("probe");
                r.awaitArrivals("probe", 1);
                Rpc.Outcome succeeding = r.unary("ok");
                long recoveredAfter = millisSince(probe.startNanos);
                assertThat(succeeding.code()).isEqualTo(Status.Code.OK);
                assertThat(recoveredAfter).as(r.id + " precondition: the throttle recovered before the hedge was due")
                        .isLessThan(DELAY);
                Rpc.Outcome o = probe.await(20, TimeUnit.SECONDS);
                r.settle();
                assertThat(o.code()).isEqualTo(Status.Code.OK);
                List<Arrival> arrivals = r.arrivals("probe");
                if (ours) {
                    assertThat(arrivals).as(r.id + " the throttle allows the hedge when it is due").hasSize(2);
                    assertThat(cancelled(arrivals)).as(r.id + " the hedge won").containsExactly(true, false);
                    assertThat(r.suppressions()).as(r.id + " only the failing call's").containsExactly(SuppressionReason.THROTTLED);
                } else {
                    assertThat(arrivals).as(r.id + " no hedge was scheduled at the start").hasSize(1);
                    assertThat(cancelled(arrivals)).containsExactly(false);
                    assertThat(o.elapsedMillis()).as(r.id + " answered by the held first attempt").isGreaterThanOrEqualTo(HELD);
                }
            }
        }
    }

    /**
     * The budget, which grpc-java does not have, is consulted the same way: when the hedge is about to
     * be sent. Budget ratio 0.5 and no floor: the probe's own deposit (0.5) does not pay for a hedge,
     * a second call's deposit made before the hedge is due does.
     */
    @Test
    void budgetIsConsultedWhenTheHedgeIsSent() throws Exception {
        ChannelRetryConfig config = Configs.channel(Configs.hedged(Configs.hedging(2, DELAY, UNAVAILABLE)),
                ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT, ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE,
                new RetryBudgetPolicy(0.5, 0, Duration.ofSeconds(10)));
        try (Run r = new Run(Engine.INTERCEPTOR, Transport.IN_PROCESS, config)) {
            Rpc.Outcome o = r.unary("probe");
            r.settle();
            assertThat(o.code()).isEqualTo(Status.Code.OK);
            assertThat(r.arrivals("probe")).hasSize(1);
            assertThat(r.suppressions()).containsExactly(SuppressionReason.BUDGET);
        }
        try (Run r = new Run(Engine.INTERCEPTOR, Transport.IN_PROCESS, config)) {
            Rpc.Handle probe = r.start("probe");
            r.awaitArrivals("probe", 1);
            assertThat(r.unary("ok").code()).isEqualTo(Status.Code.OK);
            assertThat(millisSince(probe.startNanos)).as("precondition: the deposit came before the hedge was due")
                    .isLessThan(DELAY);
            Rpc.Outcome o = probe.await(20, TimeUnit.SECONDS);
            r.settle();
            assertThat(o.code()).isEqualTo(Status.Code.OK);
            assertThat(cancelled(r.arrivals("probe"))).as("the hedge was paid for when due, and won").containsExactly(true, false);
            assertThat(r.suppressions()).isEmpty();
        }
    }

    // ---------------------------------------------------------------- when the success token is credited

    /**
     * grpc-java credits the throttle's success token when the winner's response headers arrive, even
     * if that attempt then fails; ours when the call ends OK (as for retries). On a throttle of 2
     * tokens (threshold 1): one failing call throttles; then a call whose server sends headers and
     * fails: grpc-java credits it (the throttle recovers), ours does not. A probe then shows it:
     * grpc-java hedges, ours does not, and the probe's own OK end credits ours, so a second probe is
     * hedged by both.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void successTokenIsCreditedOnOkCloseNotOnWinnersHeaders(Transport t) throws Exception {
        ChannelRetryConfig config = hedged(Configs.hedging(2, DELAY, UNAVAILABLE), TIGHT);
        for (Engine engine : Engine.values()) {
            boolean ours = engine == Engine.INTERCEPTOR;
            try (Run r = new Run(engine, t, config)) {
                assertThat(r.unary("fail").code()).isEqualTo(UNAVAILABLE);
                Rpc.Outcome committed = r.unary("headers-then-fail");
                assertThat(committed.code()).isEqualTo(UNAVAILABLE);
                assertThat(committed.headers()).as(r.id + " response headers came first").isEqualTo(1);
                assertThat(r.arrivals("headers-then-fail")).hasSize(1);

                Rpc.Outcome first = r.unary("probe");
                assertThat(first.code()).isEqualTo(Status.Code.OK);
                Rpc.Outcome second = r.unary("probe-again");
                assertThat(second.code()).isEqualTo(Status.Code.OK);
                r.settle();
                if (ours) {
                    assertThat(r.arrivals("probe")).as(r.id + " the headers did not credit the token: no hedge").hasSize(1);
                    assertThat(first.elapsedMillis()).as(r.id + " answered by the held first attempt")
                            .isGreaterThanOrEqualTo(HELD);
                    assertThat(cancelled(r.arrivals("probe-again"))).as(r.id + " the first probe's OK end did: hedged")
                            .containsExactly(true, false);
                    assertThat(r.suppressions()).as(r.id + " the failing call's, the committed call's, the first probe's hedge")
                            .containsExactly(SuppressionReason.THROTTLED, SuppressionReason.COMMITTED,
                                    SuppressionReason.THROTTLED);
                } else {
                    assertThat(cancelled(r.arrivals("probe"))).as(r.id + " the headers credited the token: hedged")
                            .containsExactly(true, false);
                    assertThat(cancelled(r.arrivals("probe-again"))).as(r.id).containsExactly(true, false);
                }
            }
        }
    }

    // ---------------------------------------------------------------- when the application sees the close

    /**
     * grpc-java holds the application's close until every cancelled loser has closed; ours closes the
     * application's call once the outcome is known, right after it asked the losers to cancel, and a
     * loser reports its own end ({@code attemptEnded}) when its close comes. In-process, each engine's
     * loser close is held where that engine learns of it, until the application's close or a time
     * limit: for grpc-java at the loser's stream (its tracer's {@code streamClosed}, which comes before
     * grpc-java's own listener hears of the close), for ours at the loser's attempt call (its
     * listener's {@code onClose}, below the engine). grpc-java's application close comes only once the
     * hold has run out; ours comes while the loser's close is still held.
     */
    @Test
    void applicationSeesTheCloseWithoutWaitingForTheLosersClose() throws Exception {
        ChannelRetryConfig config = hedged(Configs.hedging(2, 200, UNAVAILABLE), null);
        // grpc-java: a 600 ms hold on the loser's stream close
        Hold nativeHold = new Hold(600);
        try (Run r = new Run(Engine.NATIVE, Transport.IN_PROCESS, config)) {
            r.tracer.loserHold = nativeHold;
            Rpc.Outcome o = r.start("held-loser", CallOptions.DEFAULT, nativeHold::applicationClosed).await(20, TimeUnit.SECONDS);
            r.settle();
            assertThat(o.code()).isEqualTo(Status.Code.OK);
            assertThat(cancelled(r.arrivals("held-loser"))).containsExactly(true, false);
            assertThat(nativeHold.releasedByTheApplicationsClose).as("grpc-java: the loser's close was held, and the "
                    + "application's close did not come while it was").isFalse();
            assertThat(nativeHold.appClosedAt.get()).as("grpc-java: the application's close after the loser's")
                    .isGreaterThanOrEqualTo(nativeHold.releasedAt);
        }
        // ours: a hold of up to 10 s on the loser attempt's close, below the engine
        Hold oursHold = new Hold(10_000);
        ClientInterceptor holdLoserClose = new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        boolean loser = "held-loser".equals(headers.get(ROLE))
                                && headers.get(ScriptedServer.PREVIOUS_ATTEMPTS) == null;
                        super.start(!loser ? listener
                                : new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                                    @Override
                                    public void onClose(Status status, Metadata trailers) {
                                        if (status.getCode() == Status.Code.CANCELLED) {
                                            oursHold.hold();
                                        }
                                        super.onClose(status, trailers);
                                    }
                                }, headers);
                    }
                };
            }
        };
        try (Run r = new Run(Engine.INTERCEPTOR, Transport.IN_PROCESS, config, holdLoserClose)) {
            Rpc.Outcome o = r.start("held-loser", CallOptions.DEFAULT, oursHold::applicationClosed).await(20, TimeUnit.SECONDS);
            r.settle();
            assertThat(o.code()).isEqualTo(Status.Code.OK);
            assertThat(cancelled(r.arrivals("held-loser"))).containsExactly(true, false);
            assertThat(oursHold.releasedByTheApplicationsClose).as("ours: the application's close came while the "
                    + "loser's close was held").isTrue();
            List<String> order = new ArrayList<>();
            for (RecordingEvents.Event e : r.client.events().events) {
                if (e.type().equals("callEnded") || (e.type().equals("attemptEnded") && e.attempt() == 1)) {
                    order.add(e.type() + (e.code() == null ? "" : ":" + e.code()));
                }
            }
            assertThat(order).as("ours: the call ends, then the loser reports its end")
                    .containsExactly("callEnded:OK", "attemptEnded:CANCELLED");
        }
    }

    // ---------------------------------------------------------------- the deadline

    /** A scheduled executor that records the delay of every one-shot task scheduled on it. */
    static final class RecordingTimers extends ScheduledThreadPoolExecutor {
        final List<Long> delaysNanos = new CopyOnWriteArrayList<>();

        RecordingTimers() {
            super(1, r -> {
                Thread th = new Thread(r, "hedging-differences-native-timer");
                th.setDaemon(true);
                return th;
            });
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            delaysNanos.add(unit.toNanos(delay));
            return super.schedule(command, delay, unit);
        }
    }

    /**
     * A hedge that could only start after the call's deadline: grpc-java schedules it anyway (its
     * timer is seen on the channel's scheduled executor) and drops it when the deadline ends the call;
     * ours never schedules it (no timer outstanding once the call has started; with a deadline that
     * leaves room, the same call has the timer). Both end with DEADLINE_EXCEEDED after one arrival.
     * In-process, where grpc-java's channel takes a scheduled executor of the test's.
     */
    @Test
    void noHedgeIsScheduledPastTheDeadline() throws Exception {
        long delayMillis = 3001; // a delay no other timer of the channel has, far past the deadline
        long deadlineMillis = 1000; // shorter than the probe's held first attempt (HELD)
        ChannelRetryConfig config = hedged(Configs.hedging(3, delayMillis, UNAVAILABLE), null);
        RecordingTimers timers = new RecordingTimers();
        try {
            ManagedChannel nativeChannel = InProcessChannelBuilder.forName(SERVERS.server(Transport.IN_PROCESS).inProcessName())
                    .scheduledExecutorService(timers)
                    .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true))
                    .enableRetry()
                    .maxRetryAttempts(config.maxAttemptsCap())
                    .maxHedgedAttempts(config.maxAttemptsCap())
                    .build();
            try (Run r = new Run(Engine.NATIVE, Transport.IN_PROCESS, new Engines.Client(Engine.NATIVE, nativeChannel, null, null))) {
                timers.delaysNanos.clear(); // the warm-up's
                Rpc.Outcome o = r.start("probe", CallOptions.DEFAULT.withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS),
                        null).await(20, TimeUnit.SECONDS);
                r.settle();
                assertThat(o.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
                assertThat(r.arrivals("probe")).hasSize(1);
                assertThat(timers.delaysNanos).as("grpc-java scheduled the hedge past the %d ms deadline", deadlineMillis)
                        .contains(TimeUnit.MILLISECONDS.toNanos(delayMillis));
            }
        } finally {
            timers.shutdownNow();
        }
        try (Run r = new Run(Engine.INTERCEPTOR, Transport.IN_PROCESS, config)) {
            // ours decides inside ClientCall.start whether the next hedge's timer is set: read right after it
            Rpc.Handle h = r.start("probe", CallOptions.DEFAULT.withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS), null);
            assertThat(SERVERS.scheduler().outstandingTimers()).as("ours: no hedge timer past the deadline").isZero();
            Rpc.Outcome o = h.await(20, TimeUnit.SECONDS);
            r.settle();
            assertThat(o.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            assertThat(r.arrivals("probe")).hasSize(1);
            // the same call with room before its deadline has the hedge's timer (then it is cancelled)
            Rpc.Handle roomy = r.start("probe", CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), null);
            assertThat(SERVERS.scheduler().outstandingTimers()).as("ours: the hedge's timer when it fits").isEqualTo(1);
            roomy.call.cancel("enough", null);
            assertThat(roomy.await(20, TimeUnit.SECONDS).code()).isEqualTo(Status.Code.CANCELLED);
            r.settle();
        }
    }

    /**
     * Every attempt so far failed non-fatally with a pushback that puts the next hedge after the
     * deadline: ours schedules nothing past the deadline and ends the call at once with the last
     * attempt's status ({@code suppressed{reason=deadline}}), 1 arrival; grpc-java turns a positive
     * pushback after a non-fatal status into "now" and spends its attempts (3 arrivals).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void pushbackPastTheDeadlineEndsTheCallAtOnceWithTheLastStatus(Transport t) throws Exception {
        ChannelRetryConfig config = hedged(Configs.hedging(3, 100, UNAVAILABLE), null);
        CallOptions deadline = CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.SECONDS);
        for (Engine engine : Engine.values()) {
            try (Run r = new Run(engine, t, config)) {
                Rpc.Outcome o = r.start("pushback-past-deadline", deadline, null).await(20, TimeUnit.SECONDS);
                r.settle();
                assertThat(o.code()).as(r.id + " the last attempt's status, not DEADLINE_EXCEEDED").isEqualTo(UNAVAILABLE);
                if (engine == Engine.INTERCEPTOR) {
                    assertThat(r.arrivals("pushback-past-deadline")).hasSize(1);
                    assertThat(r.suppressions()).containsExactly(SuppressionReason.DEADLINE);
                } else {
                    assertThat(r.arrivals("pushback-past-deadline")).hasSize(3);
                }
            }
        }
    }

    // ---------------------------------------------------------------- a non-fatal failure

    /**
     * A hedge fails non-fatally while other attempts run. A6: the next hedge is sent at once and the
     * ones after it resume every hedging delay; grpc-java waits for the pending hedging delay. Four
     * attempts, delay 600 ms: attempt 2 fails at once, attempt 4 answers. The gaps are between the
     * moments the engine opened each attempt's stream (the client's record; the server's arrival times
     * add the transport's own delays). Ours: attempt 3 less than a delay after attempt 2, attempt 4 at
     * least half a delay and at most two after attempt 3 (its timer is set when attempt 3 is created,
     * a moment before its stream opens). grpc-java: at least a delay between each (each timer is set
     * after the previous hedge's stream opened, and a timer never fires early).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void nonFatalFailureSendsTheNextHedgeAtOnceThenResumesTheDelay(Transport t) throws Exception {
        long delay = 600;
        ChannelRetryConfig config = hedged(Configs.hedging(4, delay, UNAVAILABLE), null);
        for (Engine engine : Engine.values()) {
            try (Run r = new Run(engine, t, config)) {
                Rpc.Outcome o = r.unary("nonfatal-second");
                r.settle();
                assertThat(o.code()).isEqualTo(Status.Code.OK);
                List<Arrival> a = r.arrivals("nonfatal-second");
                assertThat(a).extracting(x -> x.previousAttempts).containsExactly(null, 1, 2, 3);
                assertThat(cancelled(a)).as(r.id + " the slow attempts lost").containsExactly(true, false, true, false);
                List<AttemptRecord> opened = r.attempts("nonfatal-second");
                assertThat(opened).extracting(x -> x.previous).containsExactly(0, 1, 2, 3);
                long gap2to3 = TimeUnit.NANOSECONDS.toMillis(opened.get(2).createdNanos - opened.get(1).createdNanos);
                long gap3to4 = TimeUnit.NANOSECONDS.toMillis(opened.get(3).createdNanos - opened.get(2).createdNanos);
                if (engine == Engine.INTERCEPTOR) {
                    assertThat(gap2to3).as(r.id + " A6: the next hedge at once").isLessThan(delay);
                    assertThat(gap3to4).as(r.id + " then the hedging delay again").isBetween(delay / 2, 2 * delay);
                } else {
                    assertThat(gap2to3).as(r.id + " grpc-java waits for the pending delay").isGreaterThanOrEqualTo(delay - 1);
                    assertThat(gap3to4).as(r.id).isGreaterThanOrEqualTo(delay - 1);
                }
            }
        }
    }
}
