package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.attempt.CallState.Phase;
import io.github.grpcretry.testing.ContractListener;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The engine's state machines on their own, as grpc-java's {@code RetriableStreamTest} tests its {@code State}: the
 * call's ({@link CallState}) and each attempt's ({@link AttemptPhase}). Every transition is taken from every reachable
 * state and either lands where docs/design.md §18's table says or is refused; no state breaks the invariants; the paths
 * a call takes (success, failure, cancel before and after commit, a hedge frozen) end where they must; and a real call
 * walks through them.
 */
class EngineStateMachineTest {

    @Test
    void openedCountsTheNextAttemptOfAnOpenCallThatIsNotFrozen() {
        CallState s = CallState.INITIAL.opened();
        assertThat(s).isEqualTo(new CallState(Phase.OPEN, 1, 0, false, false));
        assertThat(s.opened().attempts()).isEqualTo(2);
        refusedBut(CallState::opened, from -> from.phase() == Phase.OPEN && !from.frozen());
    }

    @Test
    void commitNamesOneOfTheAttemptsOfAnOpenCall() {
        CallState two = CallState.INITIAL.opened().opened();
        assertThat(two.commit(1)).isEqualTo(new CallState(Phase.COMMITTED, 2, 1, false, false));
        assertThat(two.commit(2).committed()).isEqualTo(2);
        assertThatThrownBy(() -> two.commit(3)).as("an attempt the call has not started")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("commit");
        assertThatThrownBy(() -> two.commit(0)).isInstanceOf(IllegalStateException.class);
        refusedBut(s -> s.commit(1), from -> from.phase() == Phase.OPEN && from.attempts() >= 1);
    }

    @Test
    void theCommittedAttemptPassesThroughOnceAndNeverAfterACancel() {
        CallState committed = CallState.INITIAL.opened().commit(1);
        CallState through = committed.passingThrough();
        assertThat(through.passThrough()).isTrue();
        assertThat(through.finished().passThrough()).as("a finished call keeps passing its last callbacks through").isTrue();
        assertThat(through.cancelled().passThrough()).as("after a cancel every callback goes through the lock").isFalse();
        refusedBut(CallState::passingThrough, from -> from.phase() == Phase.COMMITTED && !from.passThrough());
    }

    @Test
    void freezeStopsFurtherAttemptsOfAnOpenCall() {
        CallState frozen = CallState.INITIAL.opened().freeze();
        assertThat(frozen.frozen()).isTrue();
        assertThat(frozen.freeze()).isSameAs(frozen);
        assertThatThrownBy(frozen::opened).isInstanceOf(IllegalStateException.class).hasMessageContaining("opened");
        assertThat(frozen.commit(1).frozen()).as("an attempt in flight may still win").isTrue();
        refusedBut(CallState::freeze, from -> from.phase() == Phase.OPEN);
    }

    @Test
    void aBreakOfTheCommittedAttemptEndsThePassThroughAndAResumedAttemptIsTheCallsFromItsStart() {
        CallState through = CallState.INITIAL.opened().commit(1).passingThrough();
        CallState broken = through.interrupted();
        assertThat(broken).isEqualTo(new CallState(Phase.COMMITTED, 1, 1, false, false));
        assertThat(broken.interrupted()).as("a committed call that does not pass through").isSameAs(broken);
        CallState resumed = broken.resumed();
        assertThat(resumed).as("attempt 2 opened committed: no commit transition, no other attempt")
                .isEqualTo(new CallState(Phase.COMMITTED, 2, 2, false, false));
        assertThat(resumed.passingThrough().interrupted().resumed()).isEqualTo(new CallState(Phase.COMMITTED, 3, 3, false, false));
        assertThatThrownBy(through::resumed).as("the committed attempt still passes through: it has not broken")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("resumed");
        assertThatThrownBy(resumed::opened).as("no retry after the commit: only a resumption")
                .isInstanceOf(IllegalStateException.class);
        // the paths of a resumed stream: it ends, it is cancelled during a resumed attempt or during the backoff
        assertThat(resumed.passingThrough().finished()).isEqualTo(new CallState(Phase.FINISHED, 2, 2, true, false));
        assertThat(resumed.cancelled()).isEqualTo(new CallState(Phase.CANCELLED, 2, 2, false, false));
        assertThat(broken.cancelled()).isEqualTo(new CallState(Phase.CANCELLED, 1, 1, false, false));
        assertThat(broken.finished()).as("no resumption: the break ends it").isEqualTo(new CallState(Phase.FINISHED, 1, 1, false, false));
        refusedBut(CallState::interrupted, from -> from.phase() == Phase.COMMITTED);
        refusedBut(CallState::resumed, from -> from.phase() == Phase.COMMITTED && !from.passThrough());
    }

    @Test
    void finishedAndCancelledEndACallThatHasNotEnded() {
        refusedBut(CallState::finished, from -> !from.phase().ended() && from.attempts() > 0);
        refusedBut(CallState::cancelled, from -> !from.phase().ended());
        assertThat(CallState.INITIAL.cancelled().phase()).as("cancelled before start").isEqualTo(Phase.CANCELLED);
        for (CallState s : reachable()) {
            if (s.phase().ended()) {
                assertThatThrownBy(s::opened).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> s.commit(1)).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(s::finished).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(s::cancelled).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(s::interrupted).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(s::resumed).isInstanceOf(IllegalStateException.class);
            }
        }
    }

    @Test
    void everyStateKeepsTheInvariants() {
        for (CallState s : reachable()) {
            assertThat(s.committed()).as("%s", s).isBetween(0, s.attempts());
            if (s.phase() == Phase.OPEN) {
                assertThat(s.committed()).as("%s: an open call has no committed attempt", s).isZero();
            }
            if (s.phase() == Phase.COMMITTED) {
                assertThat(s.committed()).as("%s", s).isPositive();
            }
            if (s.passThrough()) {
                assertThat(s.committed()).as("%s", s).isPositive();
                assertThat(s.phase()).as("%s", s).isNotEqualTo(Phase.CANCELLED);
            }
        }
        assertThatThrownBy(() -> new CallState(Phase.OPEN, 1, 1, false, false)).as("open with a committed attempt")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new CallState(Phase.COMMITTED, 1, 0, false, false)).as("committed to none")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new CallState(Phase.COMMITTED, 1, 2, false, false)).as("committed to one never started")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new CallState(Phase.OPEN, 1, 0, true, false)).as("passing through to none")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new CallState(Phase.CANCELLED, 1, 1, true, false)).as("passing through after a cancel")
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theCallsPathsEndWhereTheyMustWithoutAllocatingAState() {
        CallState one = CallState.INITIAL.opened();
        // success at once: a response commits, the caught-up attempt passes through, its close finishes
        CallState success = one.commit(1).passingThrough().finished();
        assertThat(success).isEqualTo(new CallState(Phase.FINISHED, 1, 1, true, false));
        assertThat(success).as("made once, shared by every call").isSameAs(one.commit(1).passingThrough().finished());
        // every attempt failed: finished without a commit; cancelled in a backoff; cancelled after a commit
        assertThat(one.opened().opened().finished()).isEqualTo(new CallState(Phase.FINISHED, 3, 0, false, false));
        assertThat(one.cancelled()).isEqualTo(new CallState(Phase.CANCELLED, 1, 0, false, false));
        assertThat(one.commit(1).passingThrough().cancelled()).isEqualTo(new CallState(Phase.CANCELLED, 1, 1, false, false));
        // a hedge frozen by the throttle, the attempt in flight wins
        assertThat(one.opened().freeze().commit(2).finished()).isEqualTo(new CallState(Phase.FINISHED, 2, 2, false, true));
        // a second commit (two hedges answering) is refused: the second one must lose
        assertThatThrownBy(() -> one.opened().commit(1).commit(2)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("commit");
        // beyond the cached values a transition still checks and lands
        CallState many = CallState.INITIAL;
        for (int i = 0; i < CallState.CACHED + 3; i++) {
            many = many.opened();
        }
        assertThat(many.commit(CallState.CACHED + 2).finished().committed()).isEqualTo(CallState.CACHED + 2);
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
            assertThat(open.markCancel()).isEqualTo(AttemptPhase.CANCELLING);
            assertThatThrownBy(open::issueCancel).isInstanceOf(IllegalStateException.class); // not marked
        }
        assertThatThrownBy(AttemptPhase.CANCELLING::markCancel).isInstanceOf(IllegalStateException.class);
        assertThat(AttemptPhase.CANCELLING.issueCancel()).isEqualTo(AttemptPhase.CANCEL_SENT);
        assertThat(AttemptPhase.CANCELLING.takesNothing()).as("its drain's owner still issues the cancel").isFalse();
        for (AttemptPhase from : EnumSet.of(AttemptPhase.CANCEL_SENT, AttemptPhase.CLOSED)) {
            assertThat(from.takesNothing()).isTrue();
            assertThat(from.open()).isFalse();
            assertThatThrownBy(from::issueCancel).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(from::markCancel).isInstanceOf(IllegalStateException.class);
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
        assertThat(AttemptPhase.STARTING.caughtUp().markCancel().issueCancel().close()).isEqualTo(AttemptPhase.CLOSED);
    }

    @Test
    void aRealCallWalksThroughTheStates() throws Exception {
        // the first attempt fails UNAVAILABLE at once, the retry answers headers and a message and stays open
        try (EdgeRig rig = new EdgeRig(Configs.channel(Configs.policy(3, 10, 10, 1, Status.Code.UNAVAILABLE)), true)
                .script(i -> i == 0 ? UNAVAILABLE_AT_ONCE : HEADERS_THEN_HOLD)) {
            EngineCall<SimpleRequest, SimpleResponse> call = engineCall(rig.call(Rpc.SERVER_STREAMING, CallOptions.DEFAULT));
            assertThat(call.state()).isSameAs(CallState.INITIAL);
            ContractListener<SimpleResponse> listener = new ContractListener<>();
            call.start(listener, new Metadata());
            call.request(1);
            call.sendMessage(Rpc.request("a"));
            call.halfClose();
            assertThat(rig.committed.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the retry's headers commit").isTrue();
            // the headers may commit the retry while its launcher still replays the record to it
            RetryEngineTest.waitFor(() -> call.state().passThrough());
            CallState committed = call.state();
            assertThat(committed).isEqualTo(new CallState(Phase.COMMITTED, 2, 2, true, false));
            synchronized (call) {
                EngineCall<SimpleRequest, SimpleResponse>.Attempt retry = call.attempt(2);
                assertThat(retry.phase).as("the committed retry caught up").isEqualTo(AttemptPhase.LIVE);
                assertThat(call.attempt(1).phase).as("the failed first attempt").isEqualTo(AttemptPhase.CLOSED);
            }
            call.cancel("enough", null);
            assertThat(call.state()).isEqualTo(new CallState(Phase.CANCELLED, 2, 2, false, false));
            synchronized (call) {
                assertThat(call.attempt(2).phase).as("its cancel issued by the cancel's drain")
                        .isIn(AttemptPhase.CANCEL_SENT, AttemptPhase.CLOSED);
                assertThatThrownBy(call::finishLocked).as("a cancelled call does not finish")
                        .isInstanceOf(IllegalStateException.class);
            }
            assertThat(listener.awaitClose(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.CANCELLED);
            assertThat(rig.attemptEnds.tryAcquire(2, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            synchronized (call) {
                assertThat(call.attempt(2).phase).isEqualTo(AttemptPhase.CLOSED);
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
            CallState end = call.state();
            CallState committed = CallState.INITIAL.opened().commit(1);
            // passing through once the response came while nothing else was delivered, else committed only
            assertThat(end).as("a value made once, no allocation")
                    .isSameAs(end.passThrough() ? committed.passingThrough().finished() : committed.finished());
            synchronized (call) {
                EngineCall<SimpleRequest, SimpleResponse>.Attempt only = call.attempt(1);
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

    /** Every state a call reaches with up to three attempts, by every sequence of transitions from the initial one. */
    private static List<CallState> reachable() {
        List<CallState> seen = new ArrayList<>(List.of(CallState.INITIAL));
        List<Function<CallState, CallState>> transitions = List.of(CallState::opened, s -> s.commit(1), s -> s.commit(2),
                CallState::passingThrough, CallState::freeze, CallState::finished, CallState::cancelled,
                CallState::interrupted, CallState::resumed);
        for (int i = 0; i < seen.size(); i++) {
            for (Function<CallState, CallState> t : transitions) {
                try {
                    CallState next = t.apply(seen.get(i));
                    if (next.attempts() <= 3 && !seen.contains(next)) {
                        seen.add(next);
                    }
                } catch (IllegalStateException refused) {
                    // not a transition from there: refusedBut checks which
                }
            }
        }
        assertThat(seen).hasSizeGreaterThan(20);
        return seen;
    }

    /** The transition is taken from every reachable state {@code allowed} names, and refused from every other. */
    private static void refusedBut(Function<CallState, CallState> transition, Predicate<CallState> allowed) {
        int refused = 0;
        for (CallState from : reachable()) {
            if (allowed.test(from)) {
                assertThat(transition.apply(from)).as("from %s", from).isNotNull();
            } else {
                assertThatThrownBy(() -> transition.apply(from)).as("from %s", from)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining(from.phase().name());
                refused++;
            }
        }
        assertThat(refused).as("states it is refused from").isPositive();
    }
}
