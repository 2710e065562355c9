package io.github.grpcretry.attempt;

/**
 * Where one attempt of an engine call stands (docs/design.md §18), changed only by its named transitions under
 * the call's lock; each checks the phase it leaves and throws {@link IllegalStateException} from any other.
 * Why an attempt is cancelled is kept beside it (the attempt's {@code cancel} status).
 */
enum AttemptPhase {
    /** Started; its launcher owns its drain until it has caught up with the record for the first time. */
    STARTING,
    /** It caught up with the record once: it may be the call's ready source and the committed attempt's pass-through. */
    LIVE,
    /** Marked to be cancelled; the thread that owns its drain issues the cancel, and nothing more is sent to it. */
    CANCELLING,
    /** Its cancel was issued: it waits for its close. */
    CANCEL_SENT,
    /** Its close was reported (once): nothing of it counts any more. */
    CLOSED;

    /** Its drain ended caught up with the record: from a started attempt not marked to be cancelled. */
    AttemptPhase caughtUp() {
        require(open(), "caughtUp");
        return LIVE;
    }

    /** Marked to be cancelled: from an open attempt (a start that failed may mark it again with its own status). */
    AttemptPhase markCancel(boolean again) {
        require(open() || again && this == CANCELLING, "markCancel");
        return CANCELLING;
    }

    /** Its drain's owner issues the cancel: from a marked attempt only, once. */
    AttemptPhase issueCancel() {
        require(this == CANCELLING, "issueCancel");
        return CANCEL_SENT;
    }

    /** Its close is reported: once, from any phase but closed. */
    AttemptPhase close() {
        require(this != CLOSED, "close");
        return CLOSED;
    }

    /** Started and neither marked to be cancelled nor closed. */
    boolean open() {
        return this == STARTING || this == LIVE;
    }

    /** Its cancel was issued or it closed: nothing more is sent to it, its drain is not taken again. */
    boolean takesNothing() {
        return this == CANCEL_SENT || this == CLOSED;
    }

    private void require(boolean holds, String transition) {
        if (!holds) {
            throw new IllegalStateException("engine attempt: " + transition + " is not a transition from " + this);
        }
    }
}
