package io.github.grpcretry.attempt;

import io.github.grpcretry.internal.time.Durations;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.Objects;

/**
 * A source of retry decisions that takes the place of a {@code retryPolicy}'s attempt count,
 * exponential backoff and retryable status codes, for methods that have no retry policy (and no
 * hedging policy) of their own. The interceptor engine gets one per method from the function given to
 * {@link RetryingClientInterceptor.Builder#fallbackRetryDecider}; the resilience4j bridge is one.
 *
 * <h2>What stays with the engine</h2>
 * Only the three policy questions move to the decider: how many attempts, whether a failure may be
 * retried, and how long to wait. Everything else still applies exactly as for a retry policy:
 * commitment (response headers or a message end the retrying; so do the buffer limits), a server's
 * pushback (a "stop" ends the call without asking the decider; a delay replaces the decider's delay),
 * the A6 throttle (a failure the decider calls retryable is a qualified failure), the retry budget,
 * the call's deadline, {@code max-attempts-cap} (the engine makes at most
 * {@code min(maxAttempts(), cap)} attempts) and every {@link RetryEventListener} event and meter.
 *
 * <h2>One call</h2>
 * The engine calls {@link #newCall} once when a call starts and then, for that call:
 * <ol>
 *   <li>{@link Call#onFailure} for every failed attempt it decides on (the call is uncommitted and not
 *       cancelled, and the server did not push back with "stop"), before its own checks. A delay
 *       {@link Decision#retryAfter} is a grant: the engine retries after the delay unless one of its own
 *       checks (attempt cap, throttle, deadline, budget) refuses; {@link Decision#notRetryable()} and
 *       {@link Decision#exhausted()} end the call with reason {@code non_retryable_status} and
 *       {@code max_attempts};</li>
 *   <li>{@link Call#onClose} exactly once when the call ends, however it ends.</li>
 * </ol>
 * {@code onFailure} runs under the call's lock, on the thread that ended the attempt (a transport or
 * executor thread): it must be fast, must not block and must not call into the call. Both methods must
 * not throw (a throw from {@code onFailure} counts as {@link Decision#notRetryable()}; one from {@code onClose}
 * is ignored).
 */
public interface RetryDecider {

    /** Attempts in all, the first included (the engine applies the channel's {@code max-attempts-cap}). */
    int maxAttempts();

    /**
     * Whether a failure with this status and these trailers is of a retryable kind, without taking a
     * decision or changing state. The engine uses it to tell, for a call that failed after it was
     * committed, whether a retry was given up because of the commitment.
     */
    boolean isRetryable(Status status, Metadata trailers);

    /** The per-call state of one logical call, made when the call starts. */
    Call newCall(CallTarget target);

    /** The decisions for one logical call. */
    interface Call {

        /**
         * Attempt {@code attemptNumber} (1 = the first) failed with {@code status}: may the call be
         * retried, and after how long?
         *
         * @return {@link Decision#retryAfter} with the delay before the next attempt, or
         *     {@link Decision#notRetryable()}, or {@link Decision#exhausted()}
         */
        Decision onFailure(int attemptNumber, Status status, Metadata trailers);

        /**
         * The call ended with {@code status} (OK, the final failure, a cancellation); called once, on
         * the thread that closes the application's listener, outside the call's lock.
         *
         * @param attempts attempts started in all
         */
        void onClose(Status status, int attempts);
    }

    /**
     * A decider's answer to one failed attempt: retry after a delay, or stop, and why.
     */
    sealed interface Decision permits Decision.RetryAfter, Decision.Stop {

        /** Retry after {@code delay} (&ge; 0; a delay longer than about 292 years is taken as that). */
        static Decision retryAfter(Duration delay) {
            Objects.requireNonNull(delay, "delay");
            if (delay.isNegative()) {
                throw new IllegalArgumentException("negative retry delay " + delay);
            }
            return new RetryAfter(Durations.saturatedNanos(delay));
        }

        /** Retry after {@code delayNanos} nanoseconds (&ge; 0). */
        static Decision retryAfterNanos(long delayNanos) {
            return new RetryAfter(delayNanos);
        }

        /** The failure may not be retried (reason {@code non_retryable_status}). */
        static Decision notRetryable() {
            return Stop.NOT_RETRYABLE;
        }

        /**
         * The failure was retryable but the decider allows no further attempt (reason
         * {@code max_attempts}). A retryable failure, so it counts toward the A6 throttle.
         */
        static Decision exhausted() {
            return Stop.EXHAUSTED;
        }

        /** Retry after {@code delayNanos} nanoseconds. */
        record RetryAfter(long delayNanos) implements Decision {

            public RetryAfter {
                if (delayNanos < 0) {
                    throw new IllegalArgumentException("negative retry delay " + delayNanos + "ns");
                }
            }
        }

        /** No further attempt, and why. */
        enum Stop implements Decision {
            /** The failure may not be retried (reason {@code non_retryable_status}). */
            NOT_RETRYABLE,
            /** The decider allows no further attempt (reason {@code max_attempts}). */
            EXHAUSTED
        }
    }
}
