package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.testing.ContractListener;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.EnumSet;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import org.junit.jupiter.api.Test;

/**
 * The engine's state machines on their own, the call's ({@link CallPhase}) and each attempt's
 * ({@link AttemptPhase}): every transition from every phase (for the call, with and without a committed
 * attempt) either lands where docs/design.md §18's tables say or is refused; and the paths a call and an
 * attempt can take through them (success, failure, cancel before and after commit, a start that fails) end
 * where they must.
 */
class EngineStateMachineTest {

    @Test
    void commitGoesFromAnOpenCallWithoutACommittedAttemptOnly() {
        assertThat(CallPhase.OPEN.commit(false)).isEqualTo(CallPhase.COMMITTED);
        refusedBut(CallPhase::commit, (from, committed) -> from == CallPhase.OPEN && !committed);
    }

    @Test
    void finishGoesFromOpenOrCommittedMatchingWhetherAnAttemptIsCommitted() {
        assertThat(CallPhase.OPEN.finish(false)).isEqualTo(CallPhase.FINISHED);
        assertThat(CallPhase.COMMITTED.finish(true)).isEqualTo(CallPhase.FINISHED);
        refusedBut(CallPhase::finish, EngineStateMachineTest::consistent);
    }

    @Test
    void cancelGoesFromOpenOrCommittedMatchingWhetherAnAttemptIsCommitted() {
        assertThat(CallPhase.OPEN.cancel(false)).isEqualTo(CallPhase.CANCELLED);
        assertThat(CallPhase.COMMITTED.cancel(true)).isEqualTo(CallPhase.CANCELLED);
        refusedBut(CallPhase::cancel, EngineStateMachineTest::consistent);
    }

    @Test
    void anEndedCallTakesNoTransitionAtAll() {
        for (CallPhase ended : EnumSet.of(CallPhase.FINISHED, CallPhase.CANCELLED)) {
            assertThat(ended.ended()).isTrue();
            for (boolean committed : new boolean[] {false, true}) {
                assertThatThrownBy(() -> ended.commit(committed)).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> ended.finish(committed)).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> ended.cancel(committed)).isInstanceOf(IllegalStateException.class);
            }
        }
        assertThat(CallPhase.OPEN.ended()).isFalse();
        assertThat(CallPhase.COMMITTED.ended()).isFalse();
    }

    @Test
    void theCallsPathsEndWhereTheyMust() {
        // success on the first attempt: a response commits, the attempt's close finishes
        assertThat(CallPhase.OPEN.commit(false).finish(true)).isEqualTo(CallPhase.FINISHED);
        // every attempt failed: finished without a commit
        assertThat(CallPhase.OPEN.finish(false)).isEqualTo(CallPhase.FINISHED);
        // cancelled while waiting for a backoff, and after a response committed
        assertThat(CallPhase.OPEN.cancel(false)).isEqualTo(CallPhase.CANCELLED);
        assertThat(CallPhase.OPEN.commit(false).cancel(true)).isEqualTo(CallPhase.CANCELLED);
        // a second commit (two hedges answering) is refused: the second one must lose
        assertThatThrownBy(() -> CallPhase.OPEN.commit(false).commit(true))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("commit");
    }

    @Test
    void anAttemptCatchesUpOnlyWhileOpen() {
        assertThat(AttemptPhase.STARTING.caughtUp()).isEqualTo(AttemptPhase.LIVE);
        assertThat(AttemptPhase.LIVE.caughtUp()).isEqualTo(AttemptPhase.LIVE); // caught up again after more operations
        for (AttemptPhase from : EnumSet.of(AttemptPhase.CANCELLING, AttemptPhase.CANCEL_SENT, AttemptPhase.CLOSED)) {
            assertThatThrownBy(from::caughtUp).isInstanceOf(IllegalStateException.class).hasMessageContaining(from.name());
        }
    }

    @Test
    void anAttemptIsMarkedOnceAndItsCancelIssuedOnce() {
        for (AttemptPhase open : EnumSet.of(AttemptPhase.STARTING, AttemptPhase.LIVE)) {
            assertThat(open.open()).isTrue();
            assertThat(open.markCancel(false)).isEqualTo(AttemptPhase.CANCELLING);
            assertThatThrownBy(open::issueCancel).isInstanceOf(IllegalStateException.class); // not marked
        }
        assertThatThrownBy(() -> AttemptPhase.CANCELLING.markCancel(false)).isInstanceOf(IllegalStateException.class);
        assertThat(AttemptPhase.CANCELLING.markCancel(true)).as("a failed start marks it again with its own status")
                .isEqualTo(AttemptPhase.CANCELLING);
        assertThat(AttemptPhase.CANCELLING.issueCancel()).isEqualTo(AttemptPhase.CANCEL_SENT);
        for (AttemptPhase from : EnumSet.of(AttemptPhase.CANCEL_SENT, AttemptPhase.CLOSED)) {
            assertThat(from.takesNothing()).isTrue();
            assertThat(from.open()).isFalse();
            assertThatThrownBy(from::issueCancel).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> from.markCancel(true)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void anAttemptClosesExactlyOnceFromAnyPhase() {
        for (AttemptPhase from : AttemptPhase.values()) {
            if (from == AttemptPhase.CLOSED) {
                assertThatThrownBy(from::close).isInstanceOf(IllegalStateException.class).hasMessageContaining("close");
            } else {
                assertThat(from.close()).isEqualTo(AttemptPhase.CLOSED);
            }
        }
        // a hedge that lost: started, caught up, marked, its cancel issued, closed
        assertThat(AttemptPhase.STARTING.caughtUp().markCancel(false).issueCancel().close()).isEqualTo(AttemptPhase.CLOSED);
        assertThat(AttemptPhase.STARTING.takesNothing()).isFalse();
        assertThat(AttemptPhase.CANCELLING.takesNothing()).as("its drain's owner still issues the cancel").isFalse();
    }

    @Test
    void aRealCallWalksThroughThePhases() throws Exception {
        // the first attempt fails UNAVAILABLE at once, the retry answers headers and a message and stays open
        try (EdgeRig rig = new EdgeRig(Configs.channel(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE)), true)
                .script(i -> i == 0 ? UNAVAILABLE_AT_ONCE : HEADERS_THEN_HOLD)) {
            EngineCall<SimpleRequest, SimpleResponse> call = engineCall(rig.call(Rpc.SERVER_STREAMING, CallOptions.DEFAULT));
            synchronized (call) {
                assertThat(call.phase()).isEqualTo(CallPhase.OPEN);
            }
            ContractListener<SimpleResponse> listener = new ContractListener<>();
            call.start(listener, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("a"));
            call.halfClose();
            assertThat(rig.committed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the retry's headers commit").isTrue();
            // the headers may commit the retry while its launcher still replays the record to it
            RetryEngineTest.waitFor(() -> {
                synchronized (call) {
                    return call.committed != null && call.committed.phase != AttemptPhase.STARTING;
                }
            });
            EngineCall<SimpleRequest, SimpleResponse>.Attempt retry;
            synchronized (call) {
                assertThat(call.phase()).isEqualTo(CallPhase.COMMITTED);
                retry = Objects.requireNonNull(call.committed);
                assertThat(retry.number).isEqualTo(2);
                assertThat(retry.phase).as("the committed retry caught up").isEqualTo(AttemptPhase.LIVE);
                assertThat(Objects.requireNonNull(retry.prev).phase).as("the failed first attempt").isEqualTo(AttemptPhase.CLOSED);
                CallPhase now = call.phase();
                assertThatThrownBy(() -> now.commit(true)).as("a second commit").isInstanceOf(IllegalStateException.class);
            }
            call.cancel("enough", null);
            synchronized (call) {
                assertThat(call.phase()).isEqualTo(CallPhase.CANCELLED);
                assertThat(retry.phase).as("its cancel issued by the cancel's drain")
                        .isIn(AttemptPhase.CANCEL_SENT, AttemptPhase.CLOSED);
                IllegalStateException refused = null;
                try {
                    call.finishLocked();
                } catch (IllegalStateException e) {
                    refused = e;
                }
                assertThat(refused).as("a cancelled call does not finish again").isNotNull();
                assertThat(call.phase()).isEqualTo(CallPhase.CANCELLED);
            }
            assertThat(listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.CANCELLED);
            assertThat(rig.attemptEnds.tryAcquire(2, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            synchronized (call) {
                assertThat(retry.phase).isEqualTo(AttemptPhase.CLOSED);
            }
            listener.assertContract();
        }
    }

    @Test
    void aCallThatSucceedsAtOnceFinishesCommitted() throws Exception {
        try (EdgeRig rig = new EdgeRig(Configs.channel(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE)), true)) {
            EngineCall<SimpleRequest, SimpleResponse> call = engineCall(rig.call(Rpc.UNARY, CallOptions.DEFAULT));
            ContractListener<SimpleResponse> listener = new ContractListener<>();
            call.start(listener, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("a"));
            call.halfClose();
            assertThat(listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
            synchronized (call) {
                assertThat(call.phase()).isEqualTo(CallPhase.FINISHED);
                EngineCall<SimpleRequest, SimpleResponse>.Attempt only = Objects.requireNonNull(call.committed);
                assertThat(only.number).isEqualTo(1);
                assertThat(only.phase).isEqualTo(AttemptPhase.CLOSED);
                assertThat(only.cancel).as("never marked to be cancelled").isNull();
            }
            listener.assertContract();
        }
    }

    private static final long WAIT_SECONDS = 10;

    private static final EdgeRig.Behaviour UNAVAILABLE_AT_ONCE = new EdgeRig.Behaviour() {
        @Override
        public void started(EdgeRig.Arrival a) {
            a.fail(Status.UNAVAILABLE, new Metadata());
        }
    };

    /** Headers and one message at once, then the arrival stays open (no close at half-close). */
    private static final EdgeRig.Behaviour HEADERS_THEN_HOLD = new EdgeRig.Behaviour() {
        @Override
        public void started(EdgeRig.Arrival a) {
            a.call.request(1);
            a.call.sendHeaders(new Metadata());
            a.call.sendMessage(SimpleResponse.newBuilder().setResponseMessage("r0").build());
        }

        @Override
        public void halfClosed(EdgeRig.Arrival a) {
        }
    };

    @SuppressWarnings("unchecked")
    private static EngineCall<SimpleRequest, SimpleResponse> engineCall(ClientCall<SimpleRequest, SimpleResponse> c) {
        assertThat(c).as("the engine's own call, straight from its interceptor").isInstanceOf(EngineCall.class);
        return (EngineCall<SimpleRequest, SimpleResponse>) c;
    }

    /** Whether the committed flag matches the phase (the invariant every transition checks on what it leaves). */
    private static boolean consistent(CallPhase from, boolean committed) {
        return from == CallPhase.OPEN && !committed || from == CallPhase.COMMITTED && committed;
    }

    /** The transition refuses every phase/committed pair but those {@code allowed} names. */
    private static void refusedBut(BiFunction<CallPhase, Boolean, CallPhase> transition,
            BiPredicate<CallPhase, Boolean> allowed) {
        int refused = 0;
        for (CallPhase from : CallPhase.values()) {
            for (boolean committed : new boolean[] {false, true}) {
                if (allowed.test(from, committed)) {
                    continue;
                }
                assertThatThrownBy(() -> transition.apply(from, committed))
                        .as("%s with committed=%s", from, committed)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining(from.name());
                refused++;
            }
        }
        assertThat(refused).isGreaterThanOrEqualTo(6); // of the 8 pairs, at most two are transitions
    }
}
