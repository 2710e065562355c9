package io.github.grpcretry.resilience4j;

import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.RetryDecider;
import io.github.resilience4j.retry.Retry;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A resilience4j {@link Retry} instance as the interceptor engine's {@link RetryDecider}: its
 * {@code maxAttempts}, its interval function and its exception predicate govern a gRPC method, and
 * every call is reported to the instance, so its metrics ({@code resilience4j.retry.calls}) and events
 * ({@code /actuator/retryevents}) show gRPC calls.
 *
 * <h2>How the two interact</h2>
 * Each call gets its own {@link Retry#asyncContext()} (never the blocking {@code Retry.context()}, which
 * sleeps). A failed attempt that the engine decides on (uncommitted, not cancelled, no pushback "stop")
 * becomes a {@link StatusRuntimeException} built from the attempt's status and trailers and goes to
 * {@code AsyncContext.onError}; its answer is the engine's:
 * <ul>
 *   <li>a delay &ge; 0 (resilience4j publishes a RETRY event): the engine retries after it, unless
 *       its own checks refuse (max-attempts-cap, throttle, deadline, budget; a server pushback delay
 *       replaces it);</li>
 *   <li>-1 and the exception predicate rejects the exception (resilience4j: IGNORED_ERROR,
 *       {@code failed_without_retry}): the call ends, reason {@code non_retryable_status};</li>
 *   <li>-1 otherwise (the attempts are used up, or the interval function declined; resilience4j: ERROR,
 *       {@code failed_with_retry}): the call ends, reason {@code max_attempts}.</li>
 * </ul>
 * A call that ends OK is reported with {@code AsyncContext.onComplete()} ({@code successful_without_retry}
 * or {@code successful_with_retry}, SUCCESS event after retries). A call that ends in a way resilience4j
 * has no word for (committed to an attempt that then failed, pushback "stop", cancelled, or a retry
 * resilience4j granted but the engine's throttle, budget, cap or deadline refused) leaves resilience4j's
 * books at its last event: it is counted by this starter's {@code grpc.client.retry.suppressed} meter
 * with the reason instead. resilience4j's result predicate is not used (gRPC responses are not seen).
 *
 * <p>Thread-safe; one instance per resilience4j Retry.
 */
final class Resilience4jRetryDecider implements RetryDecider {

    private final Retry retry;
    private final Predicate<Throwable> exceptionPredicate;
    private final int maxAttempts;

    public Resilience4jRetryDecider(Retry retry) {
        this.retry = Objects.requireNonNull(retry, "retry");
        this.exceptionPredicate = retry.getRetryConfig().getExceptionPredicate();
        this.maxAttempts = retry.getRetryConfig().getMaxAttempts();
    }

    /** The resilience4j instance. */
    public Retry retry() {
        return retry;
    }

    @Override
    public int maxAttempts() {
        return maxAttempts;
    }

    @Override
    public boolean isRetryable(Status status, Metadata trailers) {
        return exceptionPredicate.test(status.asRuntimeException(trailers));
    }

    @Override
    public RetryDecider.Call newCall(CallTarget target) {
        return new Call(retry.asyncContext());
    }

    @Override
    public String toString() {
        return "Resilience4jRetryDecider[" + retry.getName() + "]";
    }

    private final class Call implements RetryDecider.Call {

        private final Retry.AsyncContext<Object> context;

        Call(Retry.AsyncContext<Object> context) {
            this.context = context;
        }

        @Override
        public Decision onFailure(int attemptNumber, Status status, Metadata trailers) {
            StatusRuntimeException failure = status.asRuntimeException(trailers);
            long millis = context.onError(failure);
            if (millis >= 0) {
                return Decision.retryAfterNanos(TimeUnit.MILLISECONDS.toNanos(millis));
            }
            return exceptionPredicate.test(failure) ? Decision.exhausted() : Decision.notRetryable();
        }

        @Override
        public void onClose(Status status, int attempts) {
            if (status.isOk()) {
                context.onComplete();
            }
        }
    }
}
