package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The interceptor engine alone, in-process: docs/design.md §17 (R1) and the behaviour docs/design.md §1–§4 fixes. */
class RetryEngineTest {

    @RegisterExtension
    final EngineHarness harness = EngineHarness.of("engine");
    private final ScriptedServer server = harness.server;
    private final RetryScheduler scheduler = harness.scheduler;

    private Engines.Client client(ChannelRetryConfig config) {
        return harness.client(config);
    }

    private List<Integer> previousAttempts() {
        List<Integer> out = new ArrayList<>();
        for (Arrival a : server.arrivals()) {
            out.add(a.previousAttempts);
        }
        return out;
    }

    /**
     * Added to an upper time bound: a loaded machine (a parallel build, a GC pause) only delays an
     * attempt, never hastens it, so lower bounds are exact and upper bounds carry this margin.
     */
    private static final long LOAD_MARGIN_MS = 1_000;

    private static List<Long> gapsNanos(List<Arrival> arrivals) {
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < arrivals.size(); i++) {
            gaps.add(arrivals.get(i).nanoTime - arrivals.get(i - 1).nanoTime);
        }
        return gaps;
    }

    /**
     * Each gap between arrivals against the delay the engine scheduled for that retry (its
     * {@code retryScheduled} event): at least the delay (the server stamps an arrival before it answers
     * and a timer never fires early), at most the delay plus {@link #LOAD_MARGIN_MS}.
     */
    private static void assertGapsFollowTheScheduledDelays(List<Arrival> arrivals, List<RecordingEvents.Event> scheduled) {
        List<Long> gaps = gapsNanos(arrivals);
        assertThat(gaps).hasSameSizeAs(scheduled);
        for (int i = 0; i < gaps.size(); i++) {
            long delay = scheduled.get(i).nanos();
            assertThat(gaps.get(i)).as("gap %d (ns) after a scheduled delay of %d ns", i + 1, delay)
                    .isBetween(delay, delay + TimeUnit.MILLISECONDS.toNanos(LOAD_MARGIN_MS));
        }
    }

    private static List<Long> gapsMillis(List<Arrival> arrivals) {
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < arrivals.size(); i++) {
            gaps.add(TimeUnit.NANOSECONDS.toMillis(arrivals.get(i).nanoTime - arrivals.get(i - 1).nanoTime));
        }
        return gaps;
    }

    // ---------------------------------------------------------------- R1

    @Test
    void r1NoPolicyIsOneArrival() throws Exception {
        Engines.Client c = client(Configs.channel(ServiceConfig.EMPTY));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        assertThat(Rpc.unary(c.channel(), CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(c.events().callsStarted).hasValue(0); // passed through, not wrapped
    }

    @Test
    void r1FirstTwoFailThenSuccessWithBackoffGapsAndHeaders() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.r1(3)));
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT, "hello");
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(o.responses()).containsExactly("hello");
        assertThat(server.arrivalCount()).isEqualTo(3);
        assertThat(previousAttempts()).containsExactly(null, 1, 2);
        // events: 3 attempts, 2 retries scheduled with jittered delays, one commit, one end
        RecordingEvents ev = c.events();
        assertThat(ev.ofType("attemptStarted")).extracting(RecordingEvents.Event::kind)
                .containsExactly(AttemptKind.INITIAL, AttemptKind.RETRY, AttemptKind.RETRY);
        List<RecordingEvents.Event> scheduled = ev.ofType("retryScheduled");
        assertThat(scheduled).hasSize(2);
        // the delays drawn: 50 ms then 100 ms, each x U(0.8, 1.2) (exact: the engine's own figures)
        assertThat(scheduled.get(0).nanos()).isBetween(TimeUnit.MILLISECONDS.toNanos(40), TimeUnit.MILLISECONDS.toNanos(60));
        assertThat(scheduled.get(1).nanos()).isBetween(TimeUnit.MILLISECONDS.toNanos(80), TimeUnit.MILLISECONDS.toNanos(120));
        // and the server saw the retries no earlier than those delays
        assertGapsFollowTheScheduledDelays(server.arrivals(), scheduled);
        assertThat(ev.ofType("committed")).extracting(RecordingEvents.Event::attempt).containsExactly(3);
        List<RecordingEvents.Event> ended = ev.ofType("callEnded");
        assertThat(ended).hasSize(1);
        assertThat(ended.get(0).code()).isEqualTo(Status.Code.OK);
        assertThat(ended.get(0).attempt()).isEqualTo(2); // retries
        assertThat(ended.get(0).nanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(120));
    }

    @Test
    void aCallThatSucceedsAtOnceReportsItsEndWithNoRetryAndNoWaitBeforeItsClose() throws Exception {
        // the close that settles the call reports its end from the settling section: the same report, before onClose
        for (ChannelRetryConfig config : List.of(Configs.channel(Configs.r1(3)),
                Configs.channel(Configs.hedged(Configs.hedging(3, 10_000, Status.Code.UNAVAILABLE))))) {
            Engines.Client c = client(config);
            server.script(ScriptedServer.failFirst(0, Status.Code.UNAVAILABLE));
            RecordingEvents ev = c.events();
            List<String> seenAtClose = new ArrayList<>();
            CompletableFuture<Status> closed = new CompletableFuture<>();
            ClientCall<SimpleRequest, SimpleResponse> call = c.channel().newCall(Rpc.UNARY, CallOptions.DEFAULT);
            call.start(new ClientCall.Listener<>() {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    ev.events.forEach(e -> seenAtClose.add(e.type()));
                    closed.complete(status);
                }
            }, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("once"));
            call.halfClose();
            assertThat(closed.get(20, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
            assertThat(seenAtClose).as("the events reported when the application's onClose ran")
                    .containsSubsequence("attemptStarted", "committed", "attemptEnded", "callEnded");
            List<RecordingEvents.Event> ended = ev.ofType("callEnded");
            assertThat(ended).hasSize(1);
            assertThat(ended.get(0).code()).isEqualTo(Status.Code.OK);
            assertThat(ended.get(0).attempt()).as("retries").isZero();
            assertThat(ended.get(0).nanos()).as("time waited for retries").isZero();
            assertThat(ev.hedgesPerCall).containsExactly(0);
        }
    }

    @Test
    void r1NonRetryableStatusIsOneArrival() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.r1(3)));
        server.script(ScriptedServer.always(Status.Code.INTERNAL));
        assertThat(Rpc.unary(c.channel(), CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.INTERNAL);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(c.events().suppressions()).containsExactly(SuppressionReason.NON_RETRYABLE_STATUS);
    }

    @Test
    void r1AlwaysUnavailableMaxAttempts4And10() throws Exception {
        Engines.Client c4 = client(Configs.channel(Configs.policy(4, 5, 50, 2, Status.Code.UNAVAILABLE)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        assertThat(Rpc.unary(c4.channel(), CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(4);
        assertThat(c4.events().suppressions()).containsExactly(SuppressionReason.MAX_ATTEMPTS);
        server.reset();
        Engines.Client c10 = client(Configs.channel(Configs.policy(10, 5, 50, 2, Status.Code.UNAVAILABLE)));
        assertThat(Rpc.unary(c10.channel(), CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(5);
        assertThat(previousAttempts()).containsExactly(null, 1, 2, 3, 4);
    }

    @Test
    void r1HeadersBeforeFailureCommits() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.r1(3)));
        server.script(a -> Action.fail(Status.Code.UNAVAILABLE).headersFirst());
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT, "a");
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(o.headers()).isEqualTo(1);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(c.events().suppressions()).containsExactly(SuppressionReason.COMMITTED);
    }

    @Test
    void r1DeadlineShorterThanSecondBackoffEndsAtOnceWithLastStatus() throws Exception {
        // second backoff 50 ms x 400 = 20 s (x U(0.8, 1.2)) cannot fit in the 10 s deadline: the call ends
        // after the 2nd attempt with its own status, long before the deadline
        Engines.Client c = client(Configs.channel(Configs.policy(5, 50, 60_000, 400, Status.Code.UNAVAILABLE)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "a");
        assertThat(server.arrivalCount()).isEqualTo(2);
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(c.events().ofType("retryScheduled")).as("only the first backoff was waited").hasSize(1);
        // returned right after the 2nd attempt, not at the deadline (a second of margin below it)
        assertThat(o.elapsedMillis()).isLessThan(10_000 - LOAD_MARGIN_MS);
        assertThat(c.events().suppressions()).containsExactly(SuppressionReason.DEADLINE);
    }

    @Test
    void r1ContextDeadlineCountsLikeCallOptionsDeadline() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.policy(5, 50, 60_000, 400, Status.Code.UNAVAILABLE)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        java.util.concurrent.ScheduledExecutorService ses = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        Context.CancellableContext ctx = Context.current()
                .withDeadline(Deadline.after(10, TimeUnit.SECONDS), ses);
        Rpc.Handle h;
        Context prev = ctx.attach();
        try {
            h = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT);
        } finally {
            ctx.detach(prev);
        }
        Rpc.Outcome o = h.send("a").halfClose().await();
        ctx.cancel(null);
        ses.shutdownNow();
        assertThat(server.arrivalCount()).isEqualTo(2);
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(c.events().suppressions()).containsExactly(SuppressionReason.DEADLINE);
    }

    @Test
    void r1Pushback300RetriesAfterExactlyThatAndSucceeds() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.r1(3)));
        server.script(a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE).pushback("300") : Action.ok());
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT, "a");
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(server.arrivalCount()).isEqualTo(2);
        assertThat(c.events().ofType("retryScheduled").get(0).nanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
        assertGapsFollowTheScheduledDelays(server.arrivals(), c.events().ofType("retryScheduled"));
    }

    @Test
    void pushbackRestartsTheBackoffSequence() throws Exception {
        // fail, fail(pushback 0), fail, ok: the retry after the pushback uses the initial backoff again
        Engines.Client c = client(Configs.channel(Configs.policy(5, 100, 10_000, 10, Status.Code.UNAVAILABLE)));
        server.script(a -> switch (a.index) {
            case 1 -> Action.fail(Status.Code.UNAVAILABLE);
            case 2 -> Action.fail(Status.Code.UNAVAILABLE).pushback("0");
            case 3 -> Action.fail(Status.Code.UNAVAILABLE);
            default -> Action.ok();
        });
        assertThat(Rpc.unary(c.channel(), CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.OK);
        // by attempt: after a 0 ms pushback the next attempt can fail and report its retry before the thread
        // that scheduled it reports its own (listeners are called outside the engine's lock)
        List<RecordingEvents.Event> scheduled = c.events().ofType("retryScheduled").stream()
                .sorted(Comparator.comparingInt(RecordingEvents.Event::attempt)).toList();
        assertThat(scheduled).hasSize(3);
        long ms = TimeUnit.MILLISECONDS.toNanos(1);
        assertThat(scheduled.get(0).nanos()).isBetween(80 * ms, 120 * ms); // initial × U(0.8,1.2)
        assertThat(scheduled.get(1).nanos()).isZero();                     // pushback 0
        assertThat(scheduled.get(2).nanos()).isBetween(80 * ms, 120 * ms); // back to initial (not 1000 ms)
        assertGapsFollowTheScheduledDelays(server.arrivals(), scheduled);
    }

    @Test
    void r1PushbackMinusOneStopsAtOnce() throws Exception {
        // a backoff of at least 0.8 x 5 s: a call that waited one before giving up shows beyond any margin
        Engines.Client c = client(Configs.channel(Configs.policy(3, 5_000, 5_000, 1, Status.Code.UNAVAILABLE)));
        server.script(a -> Action.fail(Status.Code.UNAVAILABLE).pushback("-1"));
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT, "a");
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(c.events().ofType("retryScheduled")).as("no backoff scheduled").isEmpty();
        assertThat(o.elapsedMillis()).isLessThan(4_000);
        assertThat(c.events().suppressions()).containsExactly(SuppressionReason.PUSHBACK);
    }

    @Test
    void r1Request100KibSucceedsAfterRetries() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.r1(3)));
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        Rpc.Outcome o = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT).sendBytes(100 * 1024).halfClose().await();
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(server.arrivalCount()).isEqualTo(3);
        assertThat(o.responses().get(0)).hasSize(100 * 1024);
    }

    @Test
    void r1RequestOverPerRpcLimitIsNotRetried() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.r1(3), null), 64 * 1024, 1 << 20, null));
        server.script(a -> Action.failOnHalfClose(Status.Code.UNAVAILABLE));
        Rpc.Outcome o = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT).sendBytes(100 * 1024).halfClose().await();
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(c.events().suppressions()).containsExactly(SuppressionReason.BUFFER_LIMIT);
    }

    // ---------------------------------------------------------------- per-call options, pass-through

    @Test
    void disabledCallsAndPolicylessMethodsPassThroughUnwrapped() {
        Engines.Client c = client(Configs.channel(Configs.r1(3)));
        RetryingClientInterceptor interceptor = c.interceptor();
        Channel probe = new Channel() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> m, CallOptions o) {
                return new Marker<>();
            }

            @Override
            public String authority() {
                return "probe";
            }
        };
        assertThat(interceptor.interceptCall(Rpc.UNARY, CallOptions.DEFAULT, probe)).isInstanceOf(RetryingCall.class);
        assertThat(interceptor.interceptCall(Rpc.UNARY, GrpcRetryCallOptions.withoutRetries(CallOptions.DEFAULT), probe))
                .isInstanceOf(Marker.class);
        MethodDescriptor<SimpleRequest, SimpleResponse> other = Rpc.UNARY.toBuilder()
                .setFullMethodName("other.Service/Unary").build();
        assertThat(interceptor.interceptCall(other, CallOptions.DEFAULT, probe)).isInstanceOf(Marker.class);
        // a hedged method is hedged, unless retries are disabled for the call ...
        RetryingClientInterceptor hedged = RetryingClientInterceptor.builder(Configs.channel(
                Configs.hedged(new HedgingPolicy(3, Duration.ofMillis(10), Set.of())))).scheduler(scheduler).build();
        assertThat(hedged.interceptCall(Rpc.UNARY, CallOptions.DEFAULT, probe)).isInstanceOf(HedgingCall.class);
        assertThat(hedged.interceptCall(Rpc.UNARY, GrpcRetryCallOptions.withoutRetries(CallOptions.DEFAULT), probe))
                .isInstanceOf(Marker.class);
        assertThat(hedged.interceptCall(other, CallOptions.DEFAULT, probe)).isInstanceOf(Marker.class);
        // ... or the call brings its own retry policy
        assertThat(hedged.interceptCall(Rpc.UNARY, GrpcRetryCallOptions.withPolicy(CallOptions.DEFAULT, Configs.r1(3)),
                probe)).isInstanceOf(RetryingCall.class);
    }

    private static final class Marker<ReqT, RespT> extends ClientCall<ReqT, RespT> {
        @Override
        public void start(Listener<RespT> l, io.grpc.Metadata h) {
        }

        @Override
        public void request(int n) {
        }

        @Override
        public void cancel(String m, Throwable t) {
        }

        @Override
        public void halfClose() {
        }

        @Override
        public void sendMessage(ReqT message) {
        }
    }

    @Test
    void disableOptionSendsOnce() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.r1(3)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        Rpc.Outcome o = Rpc.unary(c.channel(), GrpcRetryCallOptions.withoutRetries(CallOptions.DEFAULT), "a");
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
    }

    @Test
    void callPolicyOptionOverridesTheMethodPolicyAndIsCapped() throws Exception {
        Engines.Client c = client(Configs.channel(ServiceConfig.EMPTY));
        server.script(ScriptedServer.always(Status.Code.ABORTED));
        CallOptions opts = GrpcRetryCallOptions.withPolicy(CallOptions.DEFAULT,
                Configs.policy(9, 1, 5, 2, Status.Code.ABORTED));
        assertThat(Rpc.unary(c.channel(), opts, "a").code()).isEqualTo(Status.Code.ABORTED);
        assertThat(server.arrivalCount()).isEqualTo(5);
    }

    @Test
    void perAttemptReceiveTimeoutRetriesSlowAttemptsWhateverTheCodes() throws Exception {
        // only UNAVAILABLE is retryable, yet an attempt ended by the per-attempt timeout is retried
        long timeoutMs = 500;
        // below the engine: each attempt's deadline (from its CallOptions) and whether it had passed at its close
        List<Deadline> deadlines = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Long> leftWhenMade = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
        ClientInterceptor attempts = new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> m, CallOptions o, Channel next) {
                int n = deadlines.size() + 1;
                Deadline d = o.getDeadline();
                deadlines.add(d);
                if (d != null) {
                    leftWhenMade.add(d.timeRemaining(TimeUnit.NANOSECONDS));
                }
                return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(m, o)) {
                    @Override
                    public void start(Listener<R> listener, io.grpc.Metadata headers) {
                        log.add("start " + n);
                        super.start(new io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onClose(Status status, io.grpc.Metadata trailers) {
                                log.add("close " + n + " " + status.getCode() + (d.isExpired() ? " expired" : ""));
                                super.onClose(status, trailers);
                            }
                        }, headers);
                    }
                };
            }
        };
        Engines.Client c = harness.client(Configs.channel(Configs.withReceiveTimeout(Configs.fast(3),
                Duration.ofMillis(timeoutMs))), attempts);
        // the first two attempts would answer after 10 s (the server's scripted slowness): their timeouts end them
        server.script(a -> a.index <= 2 ? Action.ok().delay(10_000) : Action.ok());
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "a");
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(server.arrivalCount()).isEqualTo(3);
        assertThat(server.arrivals().get(0).cancelled).isTrue();
        // each attempt carried a deadline of the per-attempt timeout, made when the attempt was (exact: at most
        // 500 ms left when the attempt was made), the first two closed by it (their deadlines had passed), and
        // each retry started only after that close
        assertThat(deadlines).hasSize(3).doesNotContainNull();
        assertThat(leftWhenMade).allSatisfy(left -> assertThat(left).isBetween(1L, TimeUnit.MILLISECONDS.toNanos(timeoutMs)));
        assertThat(log).containsExactly("start 1", "close 1 DEADLINE_EXCEEDED expired", "start 2",
                "close 2 DEADLINE_EXCEEDED expired", "start 3", "close 3 OK");
        assertThat(c.events().ofType("attemptEnded")).extracting(RecordingEvents.Event::code)
                .containsExactly(Status.Code.DEADLINE_EXCEEDED, Status.Code.DEADLINE_EXCEEDED, Status.Code.OK);
    }

    @Test
    void perAttemptReceiveTimeoutDoesNotOutliveTheCallDeadline() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.withReceiveTimeout(Configs.fast(5), Duration.ofMillis(100))));
        server.script(a -> Action.ok().delay(10_000)); // the server's scripted slowness
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT.withDeadlineAfter(250, TimeUnit.MILLISECONDS), "a");
        assertThat(o.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(server.arrivalCount()).isBetween(1, 3);
        // bounded by the 250 ms call deadline, not the 10 s answer
        assertThat(o.elapsedMillis()).isLessThan(10_000 - LOAD_MARGIN_MS);
    }

    // ---------------------------------------------------------------- streaming

    @Test
    void clientStreamIsReplayedInOrderAfterFailure() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.fast(3)));
        server.script(a -> a.index <= 2 ? Action.failOnHalfClose(Status.Code.UNAVAILABLE) : Action.ok());
        String[] msgs = new String[50];
        for (int i = 0; i < msgs.length; i++) {
            msgs[i] = "m" + i;
        }
        Rpc.Outcome o = Rpc.clientStreaming(c.channel(), CallOptions.DEFAULT, msgs);
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(o.responses()).containsExactly(String.join(",", msgs));
        assertThat(server.arrivals()).hasSize(3).allSatisfy(a -> assertThat(a.messages).containsExactly(msgs));
    }

    @Test
    void messagesSentDuringBackoffAreReplayedAfterTheEarlierOnes() throws Exception {
        // a backoff of 0.8-1.2 s: wide enough that "c", "d" go out while it runs, however slow the machine
        Engines.Client c = client(Configs.channel(Configs.policy(3, 1000, 1000, 1, Status.Code.UNAVAILABLE)));
        server.script(a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE) : Action.ok());
        Rpc.Handle h = Rpc.start(c.channel(), Rpc.CLIENT_STREAMING, CallOptions.DEFAULT).send("a", "b");
        waitFor(() -> c.events().ofType("retryScheduled").size() == 1); // the first attempt failed
        h.send("c", "d");
        assertThat(c.events().ofType("attemptStarted")).as("still in the backoff when c, d were sent").hasSize(1);
        // the retry is live and has replayed a..d
        waitFor(() -> server.arrivalCount() == 2 && server.arrivals().get(1).messages.size() == 4);
        h.send("e").halfClose();
        Rpc.Outcome o = h.await();
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(o.responses()).containsExactly("a,b,c,d,e");
        assertThat(server.arrivals().get(1).messages).containsExactly("a", "b", "c", "d", "e");
    }

    @Test
    void serverStreamIsRetriedBeforeFirstMessageButNotAfter() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.fast(3)));
        server.script(a -> a.index == 1 ? Action.fail(Status.Code.UNAVAILABLE) : Action.ok().responses(4));
        Rpc.Outcome o = Rpc.serverStreaming(c.channel(), CallOptions.DEFAULT, "a");
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(o.responses()).containsExactly("r0", "r1", "r2", "r3");
        assertThat(server.arrivalCount()).isEqualTo(2);

        server.reset();
        server.script(a -> Action.ok().responses(1).thenFail(Status.Code.UNAVAILABLE));
        Rpc.Outcome after = Rpc.serverStreaming(c.channel(), CallOptions.DEFAULT, "a");
        assertThat(after.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(after.responses()).containsExactly("r0");
        assertThat(server.arrivalCount()).isEqualTo(1);
    }

    @Test
    void bidiIsRetriedWithReplayAndEchoes() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.fast(3)));
        server.script(a -> a.index == 1 ? Action.failOnHalfClose(Status.Code.UNAVAILABLE) : Action.ok());
        Rpc.Outcome o = Rpc.bidi(c.channel(), CallOptions.DEFAULT, "x", "y", "z");
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(o.responses()).containsExactly("x", "y", "z");
        assertThat(server.arrivals().get(1).messages).containsExactly("x", "y", "z");
        assertThat(server.arrivals().get(1).previousAttempts).isEqualTo(1);
    }

    // ---------------------------------------------------------------- cancellation

    @Test
    void cancelDuringBackoffEndsTheCallAndItsTimer() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.policy(3, 2000, 2000, 1, Status.Code.UNAVAILABLE)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        Rpc.Handle h = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT).send("a").halfClose();
        waitFor(() -> EngineTestAccess.outstandingTimers(scheduler) == 1);
        h.call.cancel("user gave up", null);
        Rpc.Outcome o = h.await(2, TimeUnit.SECONDS);
        assertThat(o.code()).isEqualTo(Status.Code.CANCELLED);
        assertThat(o.status().getDescription()).isEqualTo("user gave up");
        // the retry's timer is gone (no other path starts a retry), so no retry can arrive later
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).isZero();
        assertThat(c.events().ofType("attemptStarted")).hasSize(1);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(c.events().callsEnded).hasValue(1);
    }

    @Test
    void contextCancelDuringBackoffEndsTheCall() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.policy(3, 2000, 2000, 1, Status.Code.UNAVAILABLE)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        Context.CancellableContext ctx = Context.current().withCancellation();
        Rpc.Handle h;
        Context prev = ctx.attach();
        try {
            h = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT).send("a").halfClose();
        } finally {
            ctx.detach(prev);
        }
        waitFor(() -> EngineTestAccess.outstandingTimers(scheduler) == 1);
        ctx.cancel(null);
        Rpc.Outcome o = h.await(2, TimeUnit.SECONDS);
        assertThat(o.code()).isEqualTo(Status.Code.CANCELLED);
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).isZero();
        assertThat(server.arrivalCount()).isEqualTo(1);
    }

    @Test
    void cancelDuringAnAttemptCancelsItOnTheServer() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.r1(3)));
        server.script(a -> Action.ok().delay(3000));
        Rpc.Handle h = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT).send("a").halfClose();
        waitFor(() -> server.arrivalCount() == 1);
        h.call.cancel("stop", null);
        Rpc.Outcome o = h.await(2, TimeUnit.SECONDS);
        assertThat(o.code()).isEqualTo(Status.Code.CANCELLED);
        waitFor(() -> server.arrivals().get(0).cancelled);
        assertThat(server.arrivalCount()).isEqualTo(1);
    }

    // ---------------------------------------------------------------- limiters

    @Test
    void pushbackStopOnANonRetryableStatusStillCostsAToken() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.r1(3),
                new io.github.grpcretry.policy.RetryThrottlingPolicy(10, 0.1))));
        server.script(a -> Action.fail(Status.Code.INTERNAL).pushback("-1"));
        Rpc.unary(c.channel(), CallOptions.DEFAULT, "a");
        assertThat(c.interceptor().throttle().tokens()).isEqualTo(9.0);
        server.script(a -> Action.fail(Status.Code.INTERNAL));
        Rpc.unary(c.channel(), CallOptions.DEFAULT, "a");
        assertThat(c.interceptor().throttle().tokens()).as("non-retryable failures are not counted").isEqualTo(9.0);
        server.script(a -> Action.ok());
        Rpc.unary(c.channel(), CallOptions.DEFAULT, "a");
        assertThat(c.interceptor().throttle().tokens()).isEqualTo(9.1, org.assertj.core.api.Assertions.within(1e-9));
    }

    @Test
    void spentBudgetSuppressesRetriesAndEveryCallDeposits() throws Exception {
        io.github.grpcretry.policy.RetryBudgetPolicy budgetPolicy =
                new io.github.grpcretry.policy.RetryBudgetPolicy(0.5, 0, Duration.ofSeconds(10));
        Engines.Client c = client(Configs.channel(Configs.service(Configs.policy(3, 1, 2, 2, Status.Code.UNAVAILABLE),
                null), 1 << 20, 16 << 20, budgetPolicy));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        // 10 calls deposit 5 retries in all: attempts = 10 + 5
        for (int i = 0; i < 10; i++) {
            Rpc.unary(c.channel(), CallOptions.DEFAULT, "a");
        }
        assertThat(server.arrivalCount()).isEqualTo(15);
        assertThat(c.interceptor().budget().callsInWindow()).isEqualTo(10);
        assertThat(c.interceptor().budget().retriesInWindow()).isEqualTo(5);
        assertThat(c.events().suppressions()).contains(SuppressionReason.BUDGET);
    }

    @Test
    void builderTakesLimitersFromTheRegistry() {
        io.github.grpcretry.limiter.RetryLimiterRegistry registry = new io.github.grpcretry.limiter.RetryLimiterRegistry();
        ChannelRetryConfig config = Configs.channel(Configs.service(Configs.r1(3),
                new io.github.grpcretry.policy.RetryThrottlingPolicy(10, 0.1)), 1 << 20, 16 << 20,
                new io.github.grpcretry.policy.RetryBudgetPolicy(0.1, 10, Duration.ofSeconds(10)));
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config).limiters(registry)
                .scheduler(scheduler).build();
        assertThat(engine.throttle()).isSameAs(registry.throttle("test").orElseThrow());
        assertThat(engine.budget()).isSameAs(registry.budget("test").orElseThrow());
        assertThat(EngineTestAccess.bufferPool(engine).capacity()).isEqualTo(16 << 20);
    }

    // ---------------------------------------------------------------- interceptor order

    @Test
    void interceptorsBelowTheEngineSeeEveryAttempt() throws Exception {
        AtomicInteger seen = new AtomicInteger();
        ClientInterceptor counting = new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> m, CallOptions o,
                    Channel next) {
                seen.incrementAndGet();
                return next.newCall(m, o);
            }
        };
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(Configs.channel(Configs.fast(3)))
                .scheduler(scheduler).build();
        // builder.intercept(a, b): b runs first (outermost). The engine given last wraps the counter.
        ManagedChannel ch = InProcessChannelBuilder.forName(server.inProcessName())
                .intercept(counting, engine).build();
        try {
            server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
            assertThat(Rpc.unary(ch, CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.OK);
            assertThat(seen).hasValue(3);
            Channel outside = ClientInterceptors.intercept(ch, counting);
            seen.set(0);
            server.reset();
            assertThat(Rpc.unary(outside, CallOptions.DEFAULT, "a").code()).isEqualTo(Status.Code.OK);
            assertThat(seen).hasValue(3 + 1); // 3 attempts below, 1 logical call above
        } finally {
            ch.shutdownNow();
        }
    }

    static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("condition not met in 10 s");
            }
            Thread.sleep(2); // polls the condition (the event waited for), not a synchronisation point
        }
    }

    @SuppressWarnings("unused")
    private static String str(Object... o) {
        return Arrays.toString(o);
    }
}
