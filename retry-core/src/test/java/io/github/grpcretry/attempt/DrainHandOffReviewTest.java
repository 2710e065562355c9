package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The drain's lock-free hand-off (docs/design.md §18, "Record and drain") at the sites {@link DrainOwnershipRaceTest}
 * does not force: the owner's own thread making another operation while it is inside the attempt's call (as with direct
 * executors, where a callback runs on the caller's stack); two application threads each owning the drain of a different
 * attempt at once; a cancel marked by an attempt's idle timer; the end of the call by another attempt's failure. Each
 * leaves something (an entry of the log, a demand, a cancel) that only the owner can send once it is out of the
 * attempt's call; each check comes before any further operation of the application's that would send it otherwise.
 * The rig and its waits are {@link DrainRaceRig}'s.
 */
class DrainHandOffReviewTest extends DrainRaceRig {

    /**
     * The application's thread owns attempt 1's drain and is inside its {@code sendMessage}; on that same thread (as
     * in-process with direct executors) attempt 1 reports ready, and the application's {@code onReady} sends its
     * second message and half-closes. The engine does not enter attempt 1's call a second time from inside it (no
     * overlap below); once the first send returned, the owner sends the second message and the half-close, in order.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Kind.class)
    void operationsTheOwnersThreadMakesInsideTheAttemptsCallAreSentWhenItReturns(Kind kind) throws Exception {
        start(kind, 60_000);
        Application app = new Application(Rpc.BIDI);
        app.call.request(1);
        Arrival first = arrival(1);
        AtomicBoolean readyOnce = new AtomicBoolean();
        afterCall = (attempt, op, engineSide) -> {
            if (attempt == 1 && op == Held.SEND_MESSAGE && readyOnce.compareAndSet(false, true)) {
                engineSide.onReady(); // on the owner's thread, inside attempt 1's sendMessage
            }
        };
        AtomicBoolean sentFromOnReady = new AtomicBoolean();
        app.onReady = () -> {
            if (sentFromOnReady.compareAndSet(false, true)) {
                app.call.sendMessage(Rpc.request("m2"));
                app.call.halfClose();
            }
        };

        app.call.sendMessage(Rpc.request("m1"));

        assertThat(sentFromOnReady).as("the application sent from onReady inside attempt 1's send").isTrue();
        assertThat(first.next()).isEqualTo("m1");
        assertThat(first.next()).as("the message sent from inside the owner's send").isEqualTo("m2");
        assertThat(first.halfClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1 half-closed").isTrue();
        answerOk(app, first);
        assertThat(first.messages).containsExactly("m1", "m2");
        assertCleanEnd(app, 1);
    }

    /**
     * Hedging: the application's thread owns attempt 1's drain (the newest then) and is inside its {@code sendMessage};
     * the hedge starts, replays the message and catches up. Another thread of the application's asks for messages: it
     * owns the hedge's drain (now the newest, idle and caught up) and sends it the request, leaving attempt 1's demand
     * to attempt 1's owner. The hedge is asked at once; attempt 1 exactly as much once its owner is out.
     */
    @Test
    void twoThreadsOwningTheDrainsOfTwoAttemptsAtOnceEachSendWhatTheOtherLogged() throws Exception {
        Hedged h = hedgeWhileTheOwnerIsInsideAttempt1sSend();
        EngineCall<?, ?> call = (EngineCall<?, ?>) h.app().call;
        RetryEngineTest.waitFor(() -> { // polls: the hedge's launcher leaves its drain with no event of its own
            synchronized (call) {
                return call.attempt(2).phase == AttemptPhase.LIVE;
            }
        });

        h.app().call.request(3); // this thread, while the owner is inside attempt 1's send
        assertThat(demand(2).await(3)).as("the hedge's call asked at once").isTrue();
        release(h.owner());
        assertThat(demand(1).await(3)).as("attempt 1's call asked once its owner was out").isTrue();

        h.app().call.halfClose();
        assertThat(h.hedge().halfClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the hedge half-closed").isTrue();
        answerOk(h.app(), h.hedge());
        assertThat(h.first().cancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1, which lost, cancelled")
                .isTrue();
        assertThat(cancels(1).get()).as("cancels of attempt 1's call").isEqualTo(1);
        assertThat(cancels(2).get()).as("the hedge, committed, is not cancelled").isZero();
        assertThat(demand(2).total()).as("asked of the hedge's call in all").isEqualTo(3);
        assertCleanEnd(h.app(), 2);
    }

    /**
     * A retry policy and an idle timeout of 1 ms: the application's thread owns attempt 1's drain and is inside its
     * {@code request}; attempt 1's idle timer fires (on the test's thread) and cuts it. Nobody cancels attempt 1 while
     * the owner is inside its call; once the owner is out it does, once, asking for exactly the messages missing up to
     * {@code Integer.MAX_VALUE}. Attempt 1 ends with the idle status, the retry replays the log and the call ends OK.
     */
    @Test
    void anAttemptCutByItsIdleTimerWhileItsOwnerIsInsideItsRequestIsCancelledByTheOwner() throws Exception {
        start(Configs.channel(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE))
                .withStreams(new ChannelRetryConfig.Streams(Duration.ofMillis(1), 3)), true);
        Application app = new Application(Rpc.SERVER_STREAMING);
        Arrival first = arrival(1);
        Thread owner = holdWhile(app, Held.REQUEST);
        EngineCall<?, ?>.Attempt attempt1 = ((EngineCall<?, ?>) app.call).attempt(1);

        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!attempt1.cut() && System.nanoTime() < end) { // each firing runs here: cut, or armed again for the rest
            assertThat(timers.fireNext()).as("attempt 1's idle timer armed").isTrue();
        }
        assertThat(attempt1.cut()).as("attempt 1 cut by its idle timer").isTrue();
        assertThat(cancels(1).get()).as("attempt 1 cancelled by nobody while its owner is inside its call").isZero();
        release(owner);

        assertThat(first.cancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the server saw attempt 1 cancelled")
                .isTrue();
        assertThat(closed(1).await(WAIT_SECONDS, TimeUnit.SECONDS)).as("attempt 1 closed, its retry scheduled").isTrue();
        assertThat(timers.fireNext()).as("the retry's timer was set").isTrue();
        Arrival retry = arrival(2);
        app.call.halfClose();
        assertThat(retry.halfClosed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the retry half-closed").isTrue();
        answerOk(app, retry);
        assertThat(retry.messages).containsExactly("m1");
        assertThat(cancels(1).get()).as("cancels of attempt 1's call").isEqualTo(1);
        assertThat(demand(1).total()).as("asked of attempt 1's call in all (its cancel's demand included)")
                .isEqualTo(Integer.MAX_VALUE);
        assertThat(demand(2).total()).as("asked of the retry's call").isEqualTo(1);
        assertThat(events.events).as("attempt 1 ended with the idle status")
                .anyMatch(e -> e.type().equals("attemptEnded") && e.attempt() == 1
                        && e.code() == Status.Code.UNAVAILABLE);
        assertCleanEnd(app, 2);
    }

    /**
     * Hedging: the application's thread owns attempt 1's drain (the newest then) and is inside its
     * {@code sendMessage}; the hedge starts, catches up and fails with a status the policy does not hedge, which ends
     * the call with it. Attempt 1, marked to be cancelled by that end, is cancelled once its owner is out (by nobody
     * before); the application hears the hedge's status once.
     */
    @Test
    void theCallEndedByAHedgesFailureWhileTheOwnerIsInsideAttempt1sSendCancelsAttempt1() throws Exception {
        Hedged h = hedgeWhileTheOwnerIsInsideAttempt1sSend();
        h.hedge().call.close(Status.INVALID_ARGUMENT.withDescription("fatal"), new Metadata());
        assertThat(h.app().listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode())
                .isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(cancels(1).get()).as("attempt 1 cancelled by nobody while its owner is inside its call").isZero();
        release(h.owner());

        assertThat(h.first().cancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the server saw attempt 1 cancelled")
                .isTrue();
        assertThat(cancels(1).get()).as("cancels of attempt 1's call").isEqualTo(1);
        assertThat(cancels(2).get()).as("the hedge, closed by the server, is not cancelled").isZero();
        assertCleanEnd(h.app(), 2);
    }

    /** Attempt 1 and its hedge on the server, the hedge sent the message attempt 1's owner is held inside the send of. */
    private record Hedged(Application app, Arrival first, Arrival hedge, Thread owner) {
    }

    /** Hedging: the application's thread holds attempt 1's drain inside its send; the hedge's timer fires meanwhile. */
    private Hedged hedgeWhileTheOwnerIsInsideAttempt1sSend() throws Exception {
        start(Kind.HEDGE, 60_000);
        Application app = new Application(Rpc.BIDI);
        Arrival first = arrival(1);
        Thread owner = holdWhile(app, Held.SEND_MESSAGE);
        assertThat(timers.fireNext()).as("the hedge's timer was set").isTrue();
        Arrival hedge = arrival(2);
        assertThat(hedge.next()).as("the held message replayed to the hedge").isEqualTo("m1");
        return new Hedged(app, first, hedge, owner);
    }
}
