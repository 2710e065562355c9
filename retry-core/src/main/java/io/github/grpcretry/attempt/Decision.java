package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.internal.pushback.Pushback;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.Status;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * What follows a failed attempt (or a hedge's timer), as a value. A call decides in four steps, in this
 * order: {@link #classify} reads the failure (pure); {@link #record} tells the A6 throttle of a
 * qualified failure and answers whether a retry is still allowed (the throttle's only write);
 * {@link #afterRetryFailure}, {@link #afterHedgeFailure} or {@link #beforeHedge} decide (pure: from the
 * verdict, the throttle's answer, the attempt count and the time left); {@link #admit} withdraws a retry
 * or hedge from the budget (its only withdrawal). The call then schedules or sends ({@link EngineCall}).
 */
sealed interface Decision {

    /** The time left of a call without deadline. */
    long NO_DEADLINE = Long.MAX_VALUE;

    /** Retry after {@code delayNanos} (from {@code source}); the exponential backoff goes on at {@code nextBackoffStep}. */
    record Retry(long delayNanos, int nextBackoffStep, DelaySource source) implements Decision {
    }

    /** Send the next hedge after {@code delayNanos} (0: at once). */
    record Hedge(long delayNanos) implements Decision {
    }

    /** No further attempt, for {@code reason} (null: nothing new to report); the call ends once none is in flight. */
    record Stop(@Nullable SuppressionReason reason) implements Decision {
    }

    /** The call ends now with the failure; attempts still in flight are cancelled. */
    record End(SuppressionReason reason) implements Decision {
    }

    /** What the policy (or decider) and the server's pushback make of a failed attempt. */
    enum Verdict { RETRYABLE, NOT_RETRYABLE, EXHAUSTED, PUSHBACK_STOP }

    /** A failed attempt as a retry policy sees it: the verdict, the delay a retry waits and its source, the backoff step after. */
    record Failure(Verdict verdict, long delayNanos, int nextBackoffStep, DelaySource source) {

        Failure(Verdict verdict) {
            this(verdict, 0, 0);
        }

        /** A failure whose delay is the policy's own. */
        public Failure(Verdict verdict, long delayNanos, int nextBackoffStep) {
            this(verdict, delayNanos, nextBackoffStep, DelaySource.POLICY);
        }

        /** A qualified failure (A6: a retryable status, or a pushback "stop") costs a throttle token. */
        boolean qualifies() {
            return verdict != Verdict.NOT_RETRYABLE;
        }
    }

    /** A server-requested delay ({@link #serverDelay}): none, or one too long to wait. */
    long NO_SERVER_DELAY = -1L;
    long SERVER_DELAY_TOO_LONG = -2L;

    /**
     * The delay of a {@code google.rpc.RetryInfo} ({@code retryInfoNanos}, &lt; 0: none) unless a pushback was sent
     * ({@link Pushback#parse}'s result): nanoseconds, {@link #NO_SERVER_DELAY} or {@link #SERVER_DELAY_TOO_LONG} (§3).
     */
    static long serverDelay(long pushback, long retryInfoNanos, long remainingNanos, long maxNanos) {
        if (pushback != Pushback.ABSENT || retryInfoNanos < 0) {
            return NO_SERVER_DELAY;
        }
        return remainingNanos == NO_DEADLINE && retryInfoNanos > maxNanos ? SERVER_DELAY_TOO_LONG : retryInfoNanos;
    }

    /**
     * A failure under {@code policy}: a pushback "stop", the status (a per-attempt timeout always retryable), a server
     * delay too long, then the delay: the server's (the backoff restarts) or {@link #backoffNanos} (§1, §3, §4).
     */
    static Failure classify(RetryPolicy policy, Status.Code code, boolean attemptTimedOut, long pushback,
            long serverDelay, int backoffStep, double jitter) {
        if (pushback == Pushback.STOP) {
            return new Failure(Verdict.PUSHBACK_STOP);
        }
        if (!attemptTimedOut && !policy.isRetryable(code)) {
            return new Failure(Verdict.NOT_RETRYABLE);
        }
        Failure server = serverFailure(pushback, serverDelay);
        return server != null ? server
                : new Failure(Verdict.RETRYABLE, backoffNanos(policy, backoffStep, jitter), backoffStep + 1);
    }

    /** A retryable failure whose delay the server set (pushback, else RetryInfo), or null: the policy's delay. */
    private static @Nullable Failure serverFailure(long pushback, long serverDelay) {
        if (pushback >= 0) {
            return new Failure(Verdict.RETRYABLE, TimeUnit.MILLISECONDS.toNanos(pushback), 0, DelaySource.PUSHBACK);
        }
        if (serverDelay == SERVER_DELAY_TOO_LONG) {
            return new Failure(Verdict.PUSHBACK_STOP);
        }
        return serverDelay >= 0 ? new Failure(Verdict.RETRYABLE, serverDelay, 0, DelaySource.RETRY_INFO) : null;
    }

    /** {@link RetryingCall}'s encoding of a decider's answer besides a delay (&ge; 0). */
    static final long DECIDER_NOT_RETRYABLE = -1L;
    static final long DECIDER_EXHAUSTED = -2L;

    /**
     * A failure under a {@link RetryDecider} that answered {@code answer} ({@link RetryDecider.Call#onFailure};
     * not asked after a pushback "stop"); a server's delay (pushback, else RetryInfo) replaces the decider's.
     */
    static Failure classify(long answer, long pushback, long serverDelay) {
        if (pushback == Pushback.STOP) {
            return new Failure(Verdict.PUSHBACK_STOP);
        }
        if (answer < 0) {
            return new Failure(answer == DECIDER_EXHAUSTED ? Verdict.EXHAUSTED : Verdict.NOT_RETRYABLE);
        }
        Failure server = serverFailure(pushback, serverDelay);
        return server != null ? server : new Failure(Verdict.RETRYABLE, answer, 0);
    }

    /** Whether a hedged attempt's failure qualifies (A6): a non-fatal status, or a pushback "stop". */
    static boolean qualifies(boolean nonFatal, long pushback) {
        return nonFatal || pushback == Pushback.STOP;
    }

    /** Records a qualified failure with the channel's throttle (the last attempt's too); whether a retry is allowed. */
    static boolean record(@Nullable RetryThrottle throttle, boolean qualifies) {
        return !qualifies || throttle == null || throttle.onQualifiedFailureThenCheckAllowed();
    }

    /** After a failed retried attempt: stop for pushback, status, cap, throttle or deadline (reached by the delay). */
    static Decision afterRetryFailure(Failure failure, boolean throttleAllows, int attempts, int maxAttempts,
            long remainingNanos) {
        SuppressionReason reason = switch (failure.verdict()) {
            case PUSHBACK_STOP -> SuppressionReason.PUSHBACK;
            case NOT_RETRYABLE -> SuppressionReason.NON_RETRYABLE_STATUS;
            case EXHAUSTED -> SuppressionReason.MAX_ATTEMPTS;
            case RETRYABLE -> attempts >= maxAttempts ? SuppressionReason.MAX_ATTEMPTS
                    : !throttleAllows ? SuppressionReason.THROTTLED
                    : reaches(remainingNanos, failure.delayNanos()) ? SuppressionReason.DEADLINE : null;
        };
        return reason != null ? new Stop(reason)
                : new Retry(failure.delayNanos(), failure.nextBackoffStep(), failure.source());
    }

    /**
     * After a failed hedged attempt (§7): a fatal status ends the call, a pushback "stop" or the throttle stops hedging
     * (reported unless {@code frozen}), else the next hedge goes after the pushback, or at once; a cap reached is
     * reported once nothing is in flight.
     */
    static Decision afterHedgeFailure(boolean nonFatal, long pushback, boolean throttleAllows, boolean frozen,
            int attempts, int maxAttempts, int inFlight, long remainingNanos) {
        if (!nonFatal) {
            return new End(SuppressionReason.NON_RETRYABLE_STATUS);
        }
        SuppressionReason reason = frozen ? null : pushback == Pushback.STOP ? SuppressionReason.PUSHBACK
                : !throttleAllows ? SuppressionReason.THROTTLED : null;
        if (reason != null || frozen || attempts >= maxAttempts) {
            boolean capped = reason == null && inFlight == 0 && attempts >= maxAttempts;
            return new Stop(capped ? SuppressionReason.MAX_ATTEMPTS : reason);
        }
        long delay = pushback > 0 ? TimeUnit.MILLISECONDS.toNanos(pushback) : 0;
        return reaches(remainingNanos, delay) && delay > 0 ? new Stop(SuppressionReason.DEADLINE) : new Hedge(delay);
    }

    /** Before a hedge is sent (its timer fired, or a failure sends it at once): the deadline, then the throttle. */
    static Decision beforeHedge(long remainingNanos, boolean throttleAllows) {
        if (remainingNanos <= 0) {
            return new Stop(SuppressionReason.DEADLINE);
        }
        return throttleAllows ? new Hedge(0) : new Stop(SuppressionReason.THROTTLED);
    }

    /** A retry or hedge withdraws from the budget (if any): unchanged when granted, else {@code Stop(BUDGET)}. */
    static Decision admit(Decision decision, @Nullable RetryBudget budget) {
        if (budget == null || !(decision instanceof Retry || decision instanceof Hedge) || budget.tryAcquireRetry()) {
            return decision;
        }
        return new Stop(SuppressionReason.BUDGET);
    }

    /** The committed attempt failed: suppressed for the commit's reason if the policy would retry it, else null. */
    static @Nullable SuppressionReason afterCommit(@Nullable SuppressionReason commitReason, boolean wouldRetry) {
        return !wouldRetry ? null : commitReason == null ? SuppressionReason.COMMITTED : commitReason;
    }

    /**
     * {@code min(initial × multiplier^step, max) × jitter} in nanoseconds (§1), saturated at {@link Long#MAX_VALUE};
     * a multiplier that is not a number gives max.
     */
    static long backoffNanos(RetryPolicy policy, int step, double jitter) {
        double initial = Nanos.saturated(policy.initialBackoff());
        double max = Nanos.saturated(policy.maxBackoff());
        double grown = initial * Math.pow(policy.backoffMultiplier(), step);
        return (long) ((grown < max ? grown : max) * jitter);
    }

    /** Whether waiting {@code delayNanos} reaches a deadline {@code remainingNanos} away. */
    private static boolean reaches(long remainingNanos, long delayNanos) {
        return remainingNanos != NO_DEADLINE && remainingNanos <= delayNanos;
    }
}
