package io.github.grpcretry.attempt;

/**
 * Where one engine call stands, as one immutable value replaced under the call's lock by the named transitions below
 * (their table is docs/design.md §18); each checks what must hold before it, the constructor what holds of every
 * state. {@code committed} is an attempt's number (0: none). Values up to {@link #CACHED} attempts are made once.
 */
record CallState(Phase phase, int attempts, int committed, boolean passThrough, boolean frozen) {

    /** The call's phase. */
    enum Phase {
        /** No attempt committed, the outcome open: attempts may start. */
        OPEN,
        /** One attempt is the call's (a response, or a write past a buffer limit); no other starts. */
        COMMITTED,
        /** The outcome is decided: the listener is closed or about to be. */
        FINISHED,
        /** The application, its listener, the Context or a shut-down ended the call: only the close follows. */
        CANCELLED;

        /** Finished or cancelled: nothing more starts, commits or is recorded. */
        boolean ended() {
            return this == FINISHED || this == CANCELLED;
        }
    }

    static final int CACHED = 7;
    private static final CallState[] VALUES = new CallState[(CACHED + 1) * (CACHED + 1) * 16];
    static final CallState INITIAL;

    static {
        for (int a = 0; a <= CACHED; a++) {
            for (int c = 0; c <= a; c++) {
                for (Phase p : Phase.values()) {
                    for (int flags = 0; flags < 4; flags++) {
                        if (valid(p, a, c, (flags & 2) != 0)) {
                            VALUES[index(p, a, c, (flags & 2) != 0, (flags & 1) != 0)] =
                                    new CallState(p, a, c, (flags & 2) != 0, (flags & 1) != 0);
                        }
                    }
                }
            }
        }
        INITIAL = of(Phase.OPEN, 0, 0, false, false);
    }

    /** What holds of every state. */
    CallState {
        if (!valid(phase, attempts, committed, passThrough)) {
            throw new IllegalStateException("engine call: no such state " + phase + " attempts=" + attempts
                    + " committed=" + committed + " passThrough=" + passThrough + " frozen=" + frozen);
        }
    }

    /** A committed attempt is one of the call's, only a committed (or ended) call has one; only it passes through. */
    private static boolean valid(Phase phase, int attempts, int committed, boolean passThrough) {
        boolean counted = attempts >= 0 && committed >= 0 && committed <= attempts;
        boolean commitment = phase == Phase.OPEN ? committed == 0 : phase != Phase.COMMITTED || committed > 0;
        boolean through = !passThrough || committed > 0 && phase != Phase.CANCELLED;
        return counted && commitment && through;
    }

    private static int index(Phase p, int attempts, int committed, boolean passThrough, boolean frozen) {
        return (((attempts * (CACHED + 1) + committed) * 4 + p.ordinal()) * 2 + (passThrough ? 1 : 0)) * 2 + (frozen ? 1 : 0);
    }

    private static CallState of(Phase p, int attempts, int committed, boolean passThrough, boolean frozen) {
        CallState s = attempts <= CACHED ? VALUES[index(p, attempts, committed, passThrough, frozen)] : null;
        return s != null ? s : new CallState(p, attempts, committed, passThrough, frozen);
    }

    /** Attempt {@code attempts + 1} starts: the call is open (no attempt committed, not ended) and not frozen. */
    CallState opened() {
        require(phase == Phase.OPEN && !frozen, "opened");
        return of(phase, attempts + 1, 0, false, false);
    }

    /** A response, or a write past a buffer limit, makes attempt {@code number} the call's: the call is open. */
    CallState commit(int number) {
        require(phase == Phase.OPEN && number >= 1 && number <= attempts, "commit");
        return of(Phase.COMMITTED, attempts, number, false, frozen);
    }

    /** The committed attempt caught up and nothing is being delivered: every operation goes straight to it. */
    CallState passingThrough() {
        require(phase == Phase.COMMITTED && !passThrough, "passingThrough");
        return of(phase, attempts, committed, true, frozen);
    }

    /** The committed attempt of a call that may resume its stream broke or was cut: the pass-through ends. */
    CallState interrupted() {
        require(phase == Phase.COMMITTED, "interrupted");
        return of(phase, attempts, committed, false, frozen);
    }

    /** Attempt {@code attempts + 1} resumes the stream, the call's from its start: committed, not passing through. */
    CallState resumed() {
        require(phase == Phase.COMMITTED && !passThrough, "resumed");
        return of(phase, attempts + 1, attempts + 1, false, frozen);
    }

    /** No further attempt starts (hedging stopped by pushback, throttle, budget or deadline): the call is open. */
    CallState freeze() {
        require(phase == Phase.OPEN, "freeze");
        return of(phase, attempts, 0, false, true);
    }

    /** The outcome is decided (an attempt's end, a stop before a hedge): the call started and has not ended. */
    CallState finished() {
        require(!phase.ended() && attempts > 0, "finished");
        return of(Phase.FINISHED, attempts, committed, passThrough, frozen);
    }

    /** The call ends now, before it settled by itself: it has not ended; the pass-through ends. */
    CallState cancelled() {
        require(!phase.ended(), "cancelled");
        return of(Phase.CANCELLED, attempts, committed, false, frozen);
    }

    private void require(boolean holds, String transition) {
        if (!holds) {
            throw new IllegalStateException("engine call: " + transition + " is not a transition from " + this);
        }
    }
}
