package io.github.grpcretry.deadline;

import io.github.grpcretry.attempt.CallTarget;

/**
 * What the {@link DeadlineClientInterceptor} observes, as events (the seam for the
 * {@code grpc.client.deadline.remaining} timer and the {@code grpc.client.deadline.fast_fail}
 * counter). Implementations must be thread-safe, fast, and must not throw; they are called on the
 * thread that starts the call. The interceptor builds one {@link CallTarget} per method and reuses
 * it.
 */
public interface DeadlineEventListener {

    DeadlineEventListener NOOP = new DeadlineEventListener() {
    };

    /**
     * A call with a deadline is being started (after reserve, default and method timeout were
     * applied) with {@code remainingNanos} left; also reported for calls that are then refused by
     * {@code min-remaining}, so the distribution shows the low tail. Zero or negative when the deadline
     * has already passed.
     */
    default void deadlineRemaining(CallTarget target, long remainingNanos) {
    }

    /** A call was refused by {@code min-remaining}: it failed with DEADLINE_EXCEEDED and was never sent. */
    default void fastFail(CallTarget target) {
    }
}
