package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.pushback.Pushback;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.Status;
import java.util.concurrent.TimeUnit;

/**
 * What follows a failed attempt (or a hedge's timer), as a value. A call takes a decision in four
 * steps, in this order: {@link #classify} reads the failure (pure); {@link #record} tells the A6
 * throttle of a qualifying failure and returns whether a retry is still allowed (the only throttle
 * write); {@link #afterRetryFailure}, {@link #afterHedgeFailure} or {@link #beforeHedge} decide (pure:
 * from the verdict, the throttle's answer, the attempt count and the time left); {@link #admit}
 * withdraws a retry or hedge from the budget (the only budget withdrawal). The call then schedules
 * the timer or sends the attempt ({@link EngineCall}).
 */
sealed interface Decision {

    /** The time left when the call has no deadline. */
    long NO_DEADLINE = Long.MAX_VALUE;

    /** Retry after {@code delayNanos}; the exponential backoff goes on at {@code nextBackoffStep}. */
    record Retry(long delayNanos, int nextBackoffStep) implements Decision {
    }

    /** Send the next hedge after {@code delayNanos} (0: at once). */
    record Hedge(long delayNanos) implements Decision {
    }

    /**
     * Send no further attempt, for {@code reason} (null: nothing new to report); the call ends with
     * the failure once no attempt is in flight.
     */
    record Stop(SuppressionReason reason) implements Decision {
    }

    /** The call ends now with the failure; the attempts still in flight are cancelled. */
    record End(SuppressionReason reason) implements Decision {
    }

    /** What the policy (or decider) and the server's pushback make of a failed attempt. */
    enum Verdict {
        /** May be retried. */
        RETRYABLE,
        /** A status the policy does not retry. */
        NOT_RETRYABLE,
        /** Retryable, but the decider allows no further attempt. */
        EXHAUSTED,
        /** The server's pushback said not to retry (negative, malformed or repeated). */
        PUSHBACK_STOP
    }

    /**
     * A failed attempt as the retry policy sees it, with the delay a retry would wait and the backoff
     * step after it.
     */
    record Failure(Verdict verdict, long delayNanos, int nextBackoffStep) {

        /** A qualified failure (A6): a retryable status, or a pushback "stop"; it costs a throttle token. */
        boolean qualifies() {
            return verdict != Verdict.NOT_RETRYABLE;
        }
    }

    /**
     * A failed attempt of a call retried by {@code policy}: a pushback "stop" first, then the status
     * (DEADLINE_EXCEEDED from the per-attempt receive timeout always retryable), then the delay: the
     * pushback's (the backoff restarts) or {@code min(initial × multiplier^step, max) × jitter}.
     *
     * @param pushback {@link Pushback#parse}'s result
     * @param jitter a factor in [0.8, 1.2)
     */
    static Failure classify(RetryPolicy policy, Status.Code code, boolean attemptTimedOut, long pushback,
            int backoffStep, double jitter) {
        if (pushback == Pushback.STOP) {
            return new Failure(Verdict.PUSHBACK_STOP, 0, 0);
        }
        if (!attemptTimedOut && !policy.isRetryable(code)) {
            return new Failure(Verdict.NOT_RETRYABLE, 0, 0);
        }
        if (pushback >= 0) {
            return new Failure(Verdict.RETRYABLE, TimeUnit.MILLISECONDS.toNanos(pushback), 0); // <= 2^31-1 ms: fits
        }
        return new Failure(Verdict.RETRYABLE, backoffNanos(policy, backoffStep, jitter), backoffStep + 1);
    }

    /**
     * A failed attempt of a call retried by a {@link RetryDecider}: {@code answer} is the decider's
     * ({@link RetryDecider.Call#onFailure}; not asked after a pushback "stop"); a pushback delay
     * replaces the decider's.
     */
    static Failure classify(long answer, long pushback) {
        if (pushback == Pushback.STOP) {
            return new Failure(Verdict.PUSHBACK_STOP, 0, 0);
        }
        if (answer == RetryDecider.EXHAUSTED) {
            return new Failure(Verdict.EXHAUSTED, 0, 0);
        }
        if (answer < 0) {
            return new Failure(Verdict.NOT_RETRYABLE, 0, 0);
        }
        return new Failure(Verdict.RETRYABLE, pushback >= 0 ? TimeUnit.MILLISECONDS.toNanos(pushback) : answer, 0);
    }

    /**
     * Records a failure with the channel's throttle (A6: a qualified failure takes a token, the last
     * attempt's included); whether a retry is still allowed (tokens above the threshold). A failure
     * that does not qualify, or a channel without throttle, changes nothing and allows.
     */
    static boolean record(RetryThrottle throttle, boolean qualifies) {
        return !qualifies || throttle == null || throttle.onQualifiedFailureThenCheckAllowed();
    }

    /**
     * After a failed attempt of a retried call: stop for the pushback, the status, the attempt cap
     * ({@code attempts} started of {@code maxAttempts}), the throttle or the deadline (when the
     * delay would reach it), else retry.
     */
    static Decision afterRetryFailure(Failure failure, boolean throttleAllows, int attempts, int maxAttempts,
            long remainingNanos) {
        switch (failure.verdict()) {
            case PUSHBACK_STOP:
                return new Stop(SuppressionReason.PUSHBACK);
            case NOT_RETRYABLE:
                return new Stop(SuppressionReason.NON_RETRYABLE_STATUS);
            case EXHAUSTED:
                return new Stop(SuppressionReason.MAX_ATTEMPTS);
            default:
                break;
        }
        if (attempts >= maxAttempts) {
            return new Stop(SuppressionReason.MAX_ATTEMPTS);
        }
        if (!throttleAllows) {
            return new Stop(SuppressionReason.THROTTLED);
        }
        if (reaches(remainingNanos, failure.delayNanos())) {
            return new Stop(SuppressionReason.DEADLINE);
        }
        return new Retry(failure.delayNanos(), failure.nextBackoffStep());
    }

    /**
     * After a failed attempt of a hedged call: a fatal status ends the call; a pushback "stop" or a
     * throttle at its threshold stops hedging ({@code frozen}: stopped before, nothing new to
     * report); with hedges left, a pushback n &gt; 0 sends the next one after n ms (unless that reaches
     * the deadline), anything else at once. Once no hedge is left and none is in flight
     * ({@code inFlight}), a cap reached is reported.
     *
     * @param pushback {@link Pushback#parse}'s result
     */
    static Decision afterHedgeFailure(boolean nonFatal, long pushback, boolean throttleAllows, boolean frozen,
            int attempts, int maxAttempts, int inFlight, long remainingNanos) {
        if (!nonFatal) {
            return new End(SuppressionReason.NON_RETRYABLE_STATUS);
        }
        SuppressionReason reason = null;
        if (pushback == Pushback.STOP) {
            reason = frozen ? null : SuppressionReason.PUSHBACK;
        } else if (!throttleAllows) {
            reason = frozen ? null : SuppressionReason.THROTTLED;
        }
        if (reason != null || frozen || attempts >= maxAttempts) {
            if (reason == null && inFlight == 0 && attempts >= maxAttempts) {
                reason = SuppressionReason.MAX_ATTEMPTS;
            }
            return new Stop(reason);
        }
        if (pushback > 0) {
            long delay = TimeUnit.MILLISECONDS.toNanos(pushback);
            return reaches(remainingNanos, delay) ? new Stop(SuppressionReason.DEADLINE) : new Hedge(delay);
        }
        return new Hedge(0);
    }

    /** Before a hedge is sent (its timer fired, or a failure sends it at once): not past the deadline, throttle above its threshold. */
    static Decision beforeHedge(long remainingNanos, boolean throttleAllows) {
        if (remainingNanos <= 0) {
            return new Stop(SuppressionReason.DEADLINE);
        }
        return throttleAllows ? new Hedge(0) : new Stop(SuppressionReason.THROTTLED);
    }

    /**
     * A retry or hedge withdraws from the channel's budget (if any): {@code decision} when granted,
     * else {@code Stop(BUDGET)}. Any other decision passes unchanged and withdraws nothing.
     */
    static Decision admit(Decision decision, RetryBudget budget) {
        if (budget == null || !(decision instanceof Retry || decision instanceof Hedge)) {
            return decision;
        }
        return budget.tryAcquireRetry() ? decision : new Stop(SuppressionReason.BUDGET);
    }

    /**
     * The committed attempt failed: reported as suppressed for the commitment's reason (null: by a
     * response) when the policy would have retried it ({@code wouldRetry}), else nothing (null).
     */
    static SuppressionReason afterCommit(SuppressionReason commitReason, boolean wouldRetry) {
        if (!wouldRetry) {
            return null;
        }
        return commitReason == null ? SuppressionReason.COMMITTED : commitReason;
    }

    /**
     * {@code min(initial × multiplier^step, max) × jitter} in nanoseconds, saturated: durations past
     * 2^63-1 ns count as 2^63-1 ns, a product past that is {@link Long#MAX_VALUE} (the call's deadline
     * still stops the retry), and a multiplier that is not a number gives max.
     */
    static long backoffNanos(RetryPolicy policy, int step, double jitter) {
        double initial = Nanos.saturated(policy.initialBackoff());
        double max = Nanos.saturated(policy.maxBackoff());
        double grown = initial * Math.pow(policy.backoffMultiplier(), step);
        double base = grown < max ? grown : max;
        return (long) (base * jitter);
    }

    /** Whether waiting {@code delayNanos} reaches a deadline {@code remainingNanos} away. */
    private static boolean reaches(long remainingNanos, long delayNanos) {
        return remainingNanos != NO_DEADLINE && remainingNanos <= delayNanos;
    }
}
