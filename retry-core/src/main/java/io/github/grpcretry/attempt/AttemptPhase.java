package io.github.grpcretry.attempt;

/**
 * Where one attempt of an engine call stands, changed under the call's lock by the named transitions below (their
 * table is docs/design.md §18); each throws {@link IllegalStateException} from a phase it does not leave.
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

    /** Its drain ended caught up with the record: the attempt is open. */
    AttemptPhase caughtUp() {
        return to(LIVE, open(), "caughtUp");
    }

    /** Marked to be cancelled (a hedge lost, the call ended, its call threw): the attempt is open. */
    AttemptPhase markCancel() {
        return to(CANCELLING, open(), "markCancel");
    }

    /** Its drain's owner issues the cancel: marked, once. */
    AttemptPhase issueCancel() {
        return to(CANCEL_SENT, this == CANCELLING, "issueCancel");
    }

    /** Its close is reported: once, from any phase but closed. */
    AttemptPhase close() {
        return to(CLOSED, this != CLOSED, "close");
    }

    /** Started and neither marked to be cancelled nor closed. */
    boolean open() {
        return this == STARTING || this == LIVE;
    }

    /** Its cancel was issued or it closed: nothing more is sent to it, its drain is not taken again. */
    boolean takesNothing() {
        return this == CANCEL_SENT || this == CLOSED;
    }

    private AttemptPhase to(AttemptPhase next, boolean allowed, String transition) {
        if (!allowed) {
            throw new IllegalStateException("engine attempt: " + transition + " is not a transition from " + this);
        }
        return next;
    }
}
