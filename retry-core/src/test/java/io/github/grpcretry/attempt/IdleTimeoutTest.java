package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.LongStreamRig.OffsetResumption;
import io.github.grpcretry.attempt.LongStreamRig.Reader;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@code streams.idle-timeout} over Netty on loopback: an attempt that sends nothing while the application waits for a
 * response is cut and ends UNAVAILABLE "idle for 200ms"; before the commit the policy retries it, after the commit it
 * is a break that a resumption continues (or that ends the call); a slow reader is not idle. Every test ends with no
 * timer outstanding ({@link LongStreamRig#close}).
 */
class IdleTimeoutTest {

    private static final Duration IDLE = Duration.ofMillis(200);
    /** The first attempt sends three offsets, then stalls with the stream open; a later one sends the rest. */
    private static final java.util.function.Consumer<LongStreamRig.Arrival> THREE_THEN_STALL = a -> {
        if (a.attempt == 1) {
            a.send(3);
        } else {
            a.sendThenBreak(LongStreamRig.TOTAL);
        }
    };
    private static final List<String> ALL = IntStream.range(0, LongStreamRig.TOTAL).mapToObj(Integer::toString).toList();

    @Test
    void anIdleFirstServerStreamingAttemptIsCutAndRetried() throws Exception {
        idleFirstAttemptIsCutAndRetried(Rpc.SERVER_STREAMING);
    }

    @Test
    void anIdleFirstBidiAttemptIsCutAndRetried() throws Exception {
        idleFirstAttemptIsCutAndRetried(Rpc.BIDI);
    }

    private void idleFirstAttemptIsCutAndRetried(MethodDescriptor<SimpleRequest, SimpleResponse> method) throws Exception {
        idleFirstAttemptIsCutAndFollowed(Configs.channel(LongStreamRig.policy(10)), method, AttemptKind.RETRY);
    }

    /** The first attempt says nothing and is cut; the {@code next} attempt serves the stream: what the application saw. */
    private Reader idleFirstAttemptIsCutAndFollowed(ChannelRetryConfig channel,
            MethodDescriptor<SimpleRequest, SimpleResponse> method, AttemptKind next) throws Exception {
        try (LongStreamRig rig = new LongStreamRig(channel, LongStreamRig.streams(IDLE, 3), null, a -> {
            if (a.attempt > 1) {
                a.sendThenBreak(LongStreamRig.TOTAL); // the first attempt says nothing
            }
        })) {
            Reader reader = rig.start(method, new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.OK);
            assertThat(reader.responses).isEqualTo(ALL);
            assertThat(reader.elapsedMillis()).as("the first attempt waited out the idle timeout").isGreaterThanOrEqualTo(
                    IDLE.toMillis());
            assertThat(rig.byAttempt().get(0).cancelled.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS))
                    .as("the server saw the idle attempt cancelled").isTrue();
            assertThat(rig.startedKinds()).containsExactly(AttemptKind.INITIAL, next);
            assertThat(rig.events.ofType("attemptEnded")).extracting(RecordingEvents.Event::code)
                    .containsExactly(Status.Code.UNAVAILABLE, Status.Code.OK);
            return reader;
        }
    }

    @Test
    void anIdleAttemptAfterTheCommitWithoutResumptionEndsTheCallUnavailableIdle() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(IDLE, 3), null,
                a -> a.send(2))) { // then stalls, the stream open
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("idle for 200ms");
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 2));
            assertThat(reader.violations).isEmpty();
            assertThat(rig.byAttempt().get(0).cancelled.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(rig.arrivals).hasSize(1);
            assertThat(rig.events.suppressions()).as("as a break the policy would have retried")
                    .containsExactly(SuppressionReason.COMMITTED);
        }
    }

    @Test
    void anIdleAttemptAfterTheCommitWithResumptionIsResumed() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(IDLE, 3),
                new OffsetResumption(), THREE_THEN_STALL)) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.OK);
            assertThat(reader.responses).isEqualTo(ALL);
            assertThat(reader.headers()).isEqualTo(1);
            assertThat(reader.violations).isEmpty();
            assertThat(rig.froms()).containsExactly(0, 3);
            assertThat(rig.byAttempt().get(0).cancelled.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(rig.startedKinds()).containsExactly(AttemptKind.INITIAL, AttemptKind.RESUME);
            assertThat(rig.events.ofType("attemptEnded")).extracting(RecordingEvents.Event::code)
                    .containsExactly(Status.Code.UNAVAILABLE, Status.Code.OK);
        }
    }

    @Test
    void aSlowReaderIsNotIdleItsNextRequestStartsTheClockAgain() throws Exception {
        ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        long pauseMs = 3 * IDLE.toMillis();
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(IDLE, 3), null,
                a -> a.send(3))) { // then stalls
            Reader reader = rig.start(new Reader(3) {
                @Override
                void served(int count) {
                    later.schedule(() -> ask(1), pauseMs, TimeUnit.MILLISECONDS); // asks for nothing meanwhile
                }
            }, CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getDescription()).isEqualTo("idle for 200ms");
            assertThat(reader.responses).as("not cut while it asked for nothing").isEqualTo(ALL.subList(0, 3));
            assertThat(reader.elapsedMillis()).as("cut an idle timeout after its next request")
                    .isGreaterThanOrEqualTo(pauseMs + IDLE.toMillis());
            assertThat(rig.arrivals).hasSize(1);
        } finally {
            later.shutdownNow();
        }
    }

    /**
     * The application asks for the whole stream at once and spends three idle timeouts inside its first onMessage
     * (its work): the server sent everything at once, but the attempt's next callback cannot come while the call's
     * callback thread is the application's, so that time is not the server's silence: the call is not cut.
     */
    @Test
    void anApplicationSlowInsideOnMessageWithDemandLeftIsNotCut() throws Exception {
        long workMs = 3 * IDLE.toMillis();
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(IDLE, 3), null,
                a -> a.sendThenBreak(LongStreamRig.TOTAL))) { // every offset at once, then OK
            CountDownLatch never = new CountDownLatch(1);
            Reader reader = rig.start(new Reader(LongStreamRig.TOTAL) {
                @Override
                public void onMessage(SimpleResponse message) {
                    if (responses.isEmpty()) {
                        try { // the application's work on its first response
                            never.await(workMs, TimeUnit.MILLISECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    super.onMessage(message);
                }
            }, CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.OK);
            assertThat(reader.responses).isEqualTo(ALL);
            assertThat(rig.arrivals).hasSize(1);
        }
    }

    /** An attempt that sends its headers (they commit the call) and then nothing is cut: the call ends idle. */
    @Test
    void anAttemptThatSendsHeadersOnlyThenGoesSilentIsCut() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(IDLE, 3), null,
                a -> a.call.sendHeaders(new io.grpc.Metadata()))) {
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT);
            Status status = reader.await();
            assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(status.getDescription()).isEqualTo("idle for 200ms");
            assertThat(reader.headers()).isEqualTo(1);
            assertThat(reader.responses).isEmpty();
            assertThat(rig.arrivals).as("%s", rig.events.events).hasSize(1);
            assertThat(rig.byAttempt().get(0).cancelled.await(LongStreamRig.WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        }
    }

    /**
     * A hedged server stream (UNAVAILABLE non-fatal, hedging delay 5 s) whose first attempt says nothing: the idle
     * timeout cuts it, a non-fatal failure, so the next hedge goes at once and serves the stream.
     */
    @Test
    void anIdleFirstHedgeIsCutAndTheNextHedgeGoesAtOnce() throws Exception {
        ChannelRetryConfig hedged = Configs.channel(Configs.hedged(Configs.hedging(3, 5_000, Status.Code.UNAVAILABLE)));
        Reader reader = idleFirstAttemptIsCutAndFollowed(hedged, Rpc.SERVER_STREAMING, AttemptKind.HEDGE);
        assertThat(reader.elapsedMillis()).as("long before the hedging delay").isLessThan(4_000);
    }

    /**
     * A blocking stub's iterator (its callbacks and the engine's timers run on its ThreadlessExecutor, only while it
     * waits in hasNext): the first attempt sends three offsets then stalls, the idle timeout cuts it, the stream
     * resumes from offset 3, and the iterator yields every offset once, in order.
     */
    @Test
    void aBlockingIteratorIsCutWhenIdleAndResumed() throws Exception {
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(IDLE, 3),
                new OffsetResumption(), THREE_THEN_STALL)) {
            java.util.Iterator<SimpleResponse> it = io.grpc.stub.ClientCalls.blockingServerStreamingCall(rig.channel,
                    Rpc.SERVER_STREAMING, CallOptions.DEFAULT.withDeadlineAfter(LongStreamRig.WAIT_SECONDS,
                            TimeUnit.SECONDS), Rpc.request("from=0"));
            List<String> got = new java.util.ArrayList<>();
            it.forEachRemaining(r -> got.add(r.getResponseMessage()));
            assertThat(got).isEqualTo(ALL);
            assertThat(rig.froms()).containsExactly(0, 3);
            assertThat(rig.startedKinds()).containsExactly(AttemptKind.INITIAL, AttemptKind.RESUME);
        }
    }

    /**
     * The idle timeout applies to the calls the engine handles (docs/how-it-works.md): a call passed through
     * ({@link GrpcRetryCallOptions#DISABLE}, as a method without a policy) that stalls after a message is not cut and
     * runs to its deadline.
     */
    @Test
    void aCallTheEngineDoesNotHandleIsNotCut() throws Exception {
        long deadlineMs = 5 * IDLE.toMillis();
        try (LongStreamRig rig = new LongStreamRig(LongStreamRig.policy(10), LongStreamRig.streams(IDLE, 3), null,
                a -> a.send(1))) { // then stalls
            Reader reader = rig.start(new Reader(1), CallOptions.DEFAULT.withOption(GrpcRetryCallOptions.DISABLE, true)
                    .withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS));
            Status status = reader.await();
            assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            assertThat(reader.responses).isEqualTo(ALL.subList(0, 1));
            assertThat(reader.elapsedMillis()).isGreaterThanOrEqualTo(deadlineMs - 50);
            assertThat(rig.events.ofType("attemptStarted")).as("not the engine's").isEmpty();
        }
    }
}
