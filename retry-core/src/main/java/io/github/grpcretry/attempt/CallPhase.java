package io.github.grpcretry.attempt;

/**
 * Where one engine call stands, as one value that changes only by its named transitions (docs/design.md §18).
 * Each transition checks the phase it leaves and whether the call holds a committed attempt, and throws
 * {@link IllegalStateException} when either is wrong: a broken invariant fails where it breaks instead of
 * showing later as a lost callback. The call swaps its phase under its lock.
 */
enum CallPhase {
    /** Started or not, no attempt committed, the outcome open: attempts may still start. */
    OPEN,
    /** One attempt is the call's (a response, or a write past a buffer limit); no other starts. */
    COMMITTED,
    /** The outcome is decided: the listener is closed or about to be; nothing else starts or is delivered. */
    FINISHED,
    /** The application, its listener, the Context or a shut-down ended the call: only the close follows. */
    CANCELLED;

    /** Every phase by its ordinal. */
    static final CallPhase[] ALL = values();

    /** A response or a buffer limit picks the call's attempt: only an open call with none committed. */
    CallPhase commit(boolean hadCommitted) {
        require(this == OPEN && !hadCommitted, "commit");
        return COMMITTED;
    }

    /** The outcome is decided by an attempt's end or a stop: the call is open or committed. */
    CallPhase finish(boolean hasCommitted) {
        require(this == OPEN && !hasCommitted || this == COMMITTED && hasCommitted, "finish");
        return FINISHED;
    }

    /** The call ends now, before it settled by itself: the call is open or committed. */
    CallPhase cancel(boolean hasCommitted) {
        require(this == OPEN && !hasCommitted || this == COMMITTED && hasCommitted, "cancel");
        return CANCELLED;
    }

    /** Whether the call's end is decided (finished or cancelled): nothing more starts, commits or is recorded. */
    boolean ended() {
        return this == FINISHED || this == CANCELLED;
    }

    private void require(boolean holds, String transition) {
        if (!holds) {
            throw new IllegalStateException("engine call: " + transition + " is not a transition from " + this);
        }
    }
}
