package io.github.grpcretry.attempt;

import io.grpc.Status;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Everything the retry engine does, as events: the one seam through which meters, the Actuator
 * endpoint and tests observe it. Implementations must be thread-safe, fast and must not throw; the
 * engine calls them on the call's executor or the thread that ended the attempt, outside its lock, so
 * events of one call from different threads can arrive out of order (a retry sent at once after a 0 ms
 * pushback may report its own end before the thread that scheduled it reports {@code retryScheduled}):
 * read the attempt numbers, not the arrival order. The success path
 * passes only primitives, enums and the pre-built {@link CallTarget}, so a listener that keeps
 * pre-registered meters allocates nothing.
 */
public interface RetryEventListener {

    RetryEventListener NOOP = new RetryEventListener() {
    };

    /**
     * One listener for all of {@code listeners}, so an engine can be given several: each event goes to every
     * one, in order. One that throws is logged once per listener and kind of event, then counted
     * (docs/design.md §14); the others and the call go on. Listeners made by this method are taken apart
     * (their listeners are taken in their place), {@link #NOOP} and nulls are left out. Always a new
     * listener, also for one or none (both Spring Boot lines make their {@code grpcRetryEventListener} bean
     * with it).
     */
    static RetryEventListener composite(List<? extends @Nullable RetryEventListener> listeners) {
        return new CompositeRetryEventListener(listeners);
    }

    /** A logical call started (before its first attempt). */
    default void callStarted(CallTarget target) {
    }

    /** An attempt was started; {@code attemptNumber} is 1 for the first attempt. */
    default void attemptStarted(CallTarget target, AttemptKind kind, int attemptNumber) {
    }

    /** An attempt ended with {@code code} (CANCELLED for attempts the engine cancelled itself). */
    default void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
    }

    /** A retry was scheduled to start after {@code delayNanos}, a delay that came from {@code source}. */
    default void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos, DelaySource source) {
    }

    /**
     * A failed attempt was not followed by a retry (or a hedge was not sent), and why. {@code code} is
     * the status of the attempt that led to the decision; for a hedge refused by the throttle, the
     * budget or the deadline when its timer fired it is the last failed attempt's status, or OK when
     * no attempt had failed yet (the others were still running).
     */
    default void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
    }

    /**
     * A retry or a hedge went to a backend its call had already tried (the interceptor engine with
     * {@code avoid-tried-backends}): {@code reason} is {@code no_other_ready} (every backend the balancer had ready
     * had been tried) or {@code picks_exhausted} (the balancer was asked {@code backend-picks} times and gave only
     * tried ones). Reported when the attempt's stream starts.
     */
    default void backendReused(CallTarget target, AttemptKind kind, int attemptNumber, String reason) {
    }

    /** The call committed to attempt {@code attemptNumber}. */
    default void committed(CallTarget target, int attemptNumber) {
    }

    /**
     * The logical call ended.
     *
     * @param retries retry attempts started (hedges excluded)
     * @param hedges hedged attempts started after the first
     * @param transparentRetries streams grpc-java sent again transparently under the call's attempts (a stream
     *     refused before it reached the server's application: HTTP/2 {@code REFUSED_STREAM}, a {@code GOAWAY}
     *     above its stream id)
     * @param retryDelayNanos total time spent waiting between attempts
     */
    default void callEnded(CallTarget target, Status.Code code, int retries, int hedges, int transparentRetries,
            long retryDelayNanos) {
    }
}
