package io.github.grpcretry.attempt;

import static io.github.grpcretry.testing.ScriptedServer.Action;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the engine must hold against input no validator saw: a {@code grpc-previous-rpc-attempts}
 * header of the application's own (the engine owns that header, docs/design.md §1), and per-call
 * policies ({@link GrpcRetryCallOptions#POLICY}) or policies built in code whose durations do not
 * fit a {@code long} of nanoseconds, and pushback values up to {@code Integer.MAX_VALUE} ms.
 */
class EngineHardeningTest {

    private static final Metadata.Key<String> PREVIOUS = RetryingCall.PREVIOUS_ATTEMPTS;
    /** About 292 billion years: far past 2^63-1 ns. */
    private static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE);

    @RegisterExtension
    final EngineHarness harness = EngineHarness.of("hardening");
    private final ScriptedServer server = harness.server;
    private final RetryScheduler scheduler = harness.scheduler;

    private Engines.Client client(ChannelRetryConfig config) {
        return harness.client(config);
    }

    private List<List<String>> previousHeaders() {
        List<List<String>> out = new ArrayList<>();
        for (Arrival a : server.arrivals()) {
            Iterable<String> values = a.headers.getAll(PREVIOUS);
            List<String> list = new ArrayList<>();
            if (values != null) {
                values.forEach(list::add);
            }
            out.add(list);
        }
        return out;
    }

    private static Metadata withOwnAttemptHeader(String... values) {
        Metadata headers = new Metadata();
        for (String v : values) {
            headers.put(PREVIOUS, v);
        }
        return headers;
    }

    // ---------------------------------------------------------------- the engine owns grpc-previous-rpc-attempts

    @Test
    void retriesSendOnlyTheirOwnAttemptHeaderAndTheFirstNone() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.policy(3, 5, 20, 2, Status.Code.UNAVAILABLE),
                null)));
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        Rpc.Outcome o = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT, withOwnAttemptHeader("7", "junk"))
                .send("x").halfClose().await();
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(previousHeaders()).containsExactly(List.of(), List.of("1"), List.of("2"));
    }

    @Test
    void callThatSucceedsAtOnceSendsNoApplicationAttemptHeader() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.fast(3), null)));
        server.script(a -> Action.ok());
        Rpc.Outcome o = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT, withOwnAttemptHeader("4"))
                .send("x").halfClose().await();
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(previousHeaders()).containsExactly(List.of());
    }

    @Test
    void hedgesSendOnlyTheirOwnAttemptHeaderAndTheFirstNone() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.hedged(Configs.hedging(3, 20, Status.Code.UNAVAILABLE))));
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        Rpc.Outcome o = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT, withOwnAttemptHeader("7"))
                .send("x").halfClose().await();
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(previousHeaders()).containsExactly(List.of(), List.of("1"), List.of("2"));
    }

    // ---------------------------------------------------------------- durations past 2^63-1 ns

    @Test
    void perCallPolicyWithHugeBackoffEndsAtTheCallDeadline() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.fast(3), null)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        RetryPolicy huge = new RetryPolicy(3, Duration.ofSeconds(Long.MAX_VALUE / 2), HUGE, 2.0,
                Set.of(Status.Code.UNAVAILABLE), null);
        CallOptions options = GrpcRetryCallOptions.withPolicy(CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.SECONDS),
                huge);
        Rpc.Outcome o = Rpc.start(c.channel(), Rpc.UNARY, options).send("x").halfClose().await(5, TimeUnit.SECONDS);
        // ended at the decision with the attempt's status: had it waited for the backoff, the deadline would
        // have ended it with DEADLINE_EXCEEDED (no wall-clock bound needed)
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(c.events().suppressions()).containsExactly(SuppressionReason.DEADLINE);
    }

    @Test
    void hugeBackoffWithoutDeadlineSaturatesAndCancelsCleanly() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.fast(3), null)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        RetryPolicy huge = new RetryPolicy(3, HUGE, HUGE, 2.0, Set.of(Status.Code.UNAVAILABLE), null);
        Rpc.Handle h = Rpc.start(c.channel(), Rpc.UNARY, GrpcRetryCallOptions.withPolicy(CallOptions.DEFAULT, huge))
                .send("x").halfClose();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (c.events().ofType("retryScheduled").isEmpty() && System.nanoTime() < until) {
            Thread.sleep(5); // polls for the engine's retryScheduled event, not a synchronisation point
        }
        List<RecordingEvents.Event> scheduled = c.events().ofType("retryScheduled");
        assertThat(scheduled).hasSize(1);
        // the backoff saturates: at least 0.8 × (2^63-1) ns, never negative or zero
        assertThat(scheduled.get(0).nanos()).isGreaterThanOrEqualTo((long) (0.79 * Long.MAX_VALUE));
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).isEqualTo(1);
        h.call.cancel("enough", null);
        Rpc.Outcome o = h.await(5, TimeUnit.SECONDS);
        assertThat(o.code()).isEqualTo(Status.Code.CANCELLED);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(EngineTestAccess.outstandingTimers(scheduler)).isZero();
    }

    @Test
    void perCallPolicyWithHugeMultiplierIsBoundedByMaxBackoff() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.fast(3), null)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        RetryPolicy steep = new RetryPolicy(3, Duration.ofMillis(5), Duration.ofMillis(40), Double.MAX_VALUE,
                Set.of(Status.Code.UNAVAILABLE), null);
        Rpc.Outcome o = Rpc.start(c.channel(), Rpc.UNARY, GrpcRetryCallOptions.withPolicy(CallOptions.DEFAULT, steep))
                .send("x").halfClose().await(5, TimeUnit.SECONDS);
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        List<RecordingEvents.Event> scheduled = c.events().ofType("retryScheduled");
        assertThat(scheduled).extracting(RecordingEvents.Event::nanos).satisfiesExactly(
                first -> assertThat(first).isBetween(TimeUnit.MILLISECONDS.toNanos(4), TimeUnit.MILLISECONDS.toNanos(6)),
                second -> assertThat(second).isBetween(TimeUnit.MILLISECONDS.toNanos(32), TimeUnit.MILLISECONDS.toNanos(48)));
    }

    @Test
    void nanMultiplierBacksOffByMaxBackoffNotZero() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.fast(3), null)));
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        RetryPolicy nan = new RetryPolicy(3, Duration.ofMillis(5), Duration.ofMillis(40), Double.NaN,
                Set.of(Status.Code.UNAVAILABLE), null);
        Rpc.Outcome o = Rpc.start(c.channel(), Rpc.UNARY, GrpcRetryCallOptions.withPolicy(CallOptions.DEFAULT, nan))
                .send("x").halfClose().await(5, TimeUnit.SECONDS);
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(c.events().ofType("retryScheduled")).extracting(RecordingEvents.Event::nanos)
                .allSatisfy(n -> assertThat(n).isBetween(TimeUnit.MILLISECONDS.toNanos(4), TimeUnit.MILLISECONDS.toNanos(48)))
                .hasSize(2);
    }

    @Test
    void perCallPolicyWithHugePerAttemptTimeoutRunsTheCall() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.fast(3), null)));
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        RetryPolicy hugeAttempt = new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(2), 2.0,
                Set.of(Status.Code.UNAVAILABLE), HUGE);
        Rpc.Outcome o = Rpc.start(c.channel(), Rpc.UNARY, GrpcRetryCallOptions.withPolicy(CallOptions.DEFAULT,
                hugeAttempt)).send("x").halfClose().await(5, TimeUnit.SECONDS);
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(server.arrivalCount()).isEqualTo(2);
        // with a call deadline the per-attempt timeout is simply the later of the two
        server.reset();
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        o = Rpc.start(c.channel(), Rpc.UNARY, GrpcRetryCallOptions.withPolicy(
                CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), hugeAttempt)).send("x").halfClose()
                .await(10, TimeUnit.SECONDS);
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(server.arrivals().get(0).deadlineRemainingNanos).isBetween(TimeUnit.SECONDS.toNanos(3),
                TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void hedgingPolicyWithHugeDelayBuiltInCodeStillHedgesOnFailure() throws Exception {
        HedgingPolicy huge = new HedgingPolicy(3, HUGE, Set.of(Status.Code.UNAVAILABLE));
        Engines.Client c = client(Configs.channel(Configs.hedged(huge)));
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT, "x");
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        // the delayed hedge never fired; the non-fatal failure sent the next one at once
        assertThat(server.arrivalCount()).isEqualTo(2);
        assertThat(o.elapsedMillis()).isLessThan(3000);
    }

    @Test
    void hedgingPolicyWithHugeDelayEndsAtOnceWithADeadline() throws Exception {
        HedgingPolicy huge = new HedgingPolicy(3, HUGE, Set.of(Status.Code.UNAVAILABLE));
        Engines.Client c = client(Configs.channel(Configs.hedged(huge)));
        server.script(a -> Action.ok().delay(200));
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.SECONDS), "x");
        assertThat(o.code()).isEqualTo(Status.Code.OK);
        assertThat(server.arrivalCount()).isEqualTo(1); // the hedge lies past the deadline: not scheduled
    }

    // ---------------------------------------------------------------- pushback up to Integer.MAX_VALUE ms

    @Test
    void largestPushbackIsHonouredExactlyAndBoundedByTheDeadline() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.service(Configs.fast(3), null)));
        String max = Integer.toString(Integer.MAX_VALUE);
        server.script(a -> Action.fail(Status.Code.UNAVAILABLE).pushback(max));

        Rpc.Outcome bounded = Rpc.unary(c.channel(), CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.SECONDS), "x");
        // the attempt's status, not DEADLINE_EXCEEDED: the engine gave up at the decision instead of waiting
        assertThat(bounded.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(c.events().suppressions()).containsExactly(SuppressionReason.DEADLINE);

        server.reset();
        Rpc.Handle h = Rpc.start(c.channel(), Rpc.UNARY, CallOptions.DEFAULT).send("x").halfClose();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (c.events().ofType("retryScheduled").isEmpty() && System.nanoTime() < until) {
            Thread.sleep(5); // polls for the engine's retryScheduled event, not a synchronisation point
        }
        assertThat(c.events().ofType("retryScheduled")).extracting(RecordingEvents.Event::nanos)
                .containsExactly(TimeUnit.MILLISECONDS.toNanos(Integer.MAX_VALUE));
        h.call.cancel("enough", null);
        assertThat(h.await(5, TimeUnit.SECONDS).code()).isEqualTo(Status.Code.CANCELLED);
        assertThat(server.arrivalCount()).isEqualTo(1);
    }

    @Test
    void largestPushbackOnAHedgeIsBoundedByTheDeadline() throws Exception {
        Engines.Client c = client(Configs.channel(Configs.hedged(Configs.hedging(3, 10_000, Status.Code.UNAVAILABLE))));
        String max = Integer.toString(Integer.MAX_VALUE);
        server.script(a -> Action.fail(Status.Code.UNAVAILABLE).pushback(max));
        Rpc.Outcome o = Rpc.unary(c.channel(), CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.SECONDS), "x");
        assertThat(o.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(o.elapsedMillis()).isLessThan(1500);
        assertThat(server.arrivalCount()).isEqualTo(1);
        assertThat(c.events().suppressions()).contains(SuppressionReason.DEADLINE);
    }
}
