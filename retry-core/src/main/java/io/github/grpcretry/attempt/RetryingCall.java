package io.github.grpcretry.attempt;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.github.grpcretry.internal.pushback.Pushback;
import io.github.grpcretry.internal.pushback.RetryInfoDelay;
import io.github.grpcretry.policy.RetryPolicy;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A call retried by a gRFC A6 {@code retryPolicy}, or by a {@link RetryDecider} for a method without policy: one
 * attempt at a time, the next after a backoff once the previous one failed ({@link Decision#afterRetryFailure}), each
 * with the per-attempt receive timeout, at most the plan's attempts. The engine owns {@code grpc-previous-rpc-attempts}:
 * the application's own value is removed, and retries carry the engine's count.
 */
final class RetryingCall<ReqT, RespT> extends EngineCall<ReqT, RespT> {

    static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    private static final String[] PREVIOUS_VALUES = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"};

    /** The {@code grpc-previous-rpc-attempts} value for {@code prev} earlier attempts (no allocation up to 10). */
    static String previousAttemptsValue(int prev) {
        return prev < PREVIOUS_VALUES.length ? PREVIOUS_VALUES[prev] : Integer.toString(prev);
    }

    RetryingCall(RetryingClientInterceptor engine, RetryingClientInterceptor.MethodPlan plan,
            MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
        super(engine, plan, method, callOptions, next, false);
    }

    @Override
    void starting() {
        RetryDecider decider = plan.decider();
        if (plan.policy() == null && decider != null) {
            RetryDecider.Call decisions = decider.newCall(target());
            synchronized (this) {
                extra().decisions = decisions;
            }
        }
    }

    @Override
    @GuardedBy("this")
    void openedLocked(Attempt a) {
        Duration perAttempt = plan.policy() == null ? null : plan.policy().perAttemptReceiveTimeout();
        if (perAttempt != null) {
            long timeoutNanos = Nanos.saturated(perAttempt);
            extra().attemptDeadline = remainingNanos() > timeoutNanos
                    ? Deadline.after(timeoutNanos, TimeUnit.NANOSECONDS) // clamped by Deadline
                    : null;
        }
    }

    /** With a per-attempt receive timeout, the deadline set when the attempt was opened (unless the call's is earlier). */
    @Override
    @Nullable Deadline attemptDeadline(Attempt a) {
        if (plan.policy() == null || plan.policy().perAttemptReceiveTimeout() == null) {
            return null;
        }
        synchronized (this) {
            return extra().attemptDeadline;
        }
    }

    @Override
    @GuardedBy("this")
    Decision afterFailureLocked(Attempt a, Status status, Metadata trailers) {
        Extra s = extra();
        long pushback = Pushback.parse(trailers);
        long serverDelay = engine.retryInfo ? Decision.serverDelay(pushback, RetryInfoDelay.delayNanos(status, trailers),
                remainingNanos(), engine.retryInfoMaxDelayNanos) : Decision.NO_SERVER_DELAY;
        LongStream<ReqT, RespT> ls = stream;
        if (state().committed() != 0 && ls != null) { // the committed attempt broke, with a resumer's request
            return ls.afterBreakLocked(status.getCode(), pushback, serverDelay, engine.throttle, remainingNanos());
        }
        RetryPolicy policy = plan.policy();
        Decision.Failure failure;
        if (policy != null) {
            boolean timedOut = status.getCode() == Status.Code.DEADLINE_EXCEEDED && s.attemptDeadline != null
                    && s.attemptDeadline.isExpired();
            failure = Decision.classify(policy, status.getCode(), timedOut, pushback, serverDelay, s.backoffStep,
                    ThreadLocalRandom.current().nextDouble(0.8, 1.2));
        } else {
            failure = Decision.classify(pushback == Pushback.STOP ? 0 : askDecider(s, a, status, trailers), pushback,
                    serverDelay);
        }
        boolean allowed = Decision.record(engine.throttle, failure.qualifies());
        Decision d = Decision.afterRetryFailure(failure, allowed, state().attempts(), plan.maxAttempts(), remainingNanos());
        if (d instanceof Decision.Retry r) {
            s.backoffStep = r.nextBackoffStep();
        }
        return d;
    }

    /** The decider's answer for failed attempt {@code a} (under lock): a delay, or a {@code Decision.DECIDER_*} value. */
    private long askDecider(Extra s, Attempt a, Status status, Metadata trailers) {
        RetryDecider.Call d = s.decisions;
        if (d == null) {
            return Decision.DECIDER_NOT_RETRYABLE;
        }
        RetryDecider.Decision answer = d.onFailure(a.number, status, trailers); // guarded: a throw is "not retryable"
        if (answer instanceof RetryDecider.Decision.RetryAfter r) {
            return r.delayNanos();
        }
        return answer == RetryDecider.Decision.Stop.EXHAUSTED ? Decision.DECIDER_EXHAUSTED : Decision.DECIDER_NOT_RETRYABLE;
    }

    @Override
    @GuardedBy("this")
    boolean wouldRetry(Status status, Metadata trailers) {
        RetryPolicy policy = plan.policy();
        return state().attempts() < plan.maxAttempts() && (policy != null ? policy.isRetryable(status.getCode())
                : Objects.requireNonNull(plan.decider()).isRetryable(status, trailers)); // guarded: a throw is false
    }

    /**
     * The backoff timer fired: the retry, or the attempt that resumes the stream, starts (on the call's executor); a
     * resumption's wait that the call's deadline ended ends the call {@code DEADLINE_EXCEEDED}.
     */
    @Override
    void nextAttempt() {
        Attempt a = null;
        Status.Code expired = null;
        synchronized (this) {
            if (state().phase().ended()) {
                return;
            }
            LongStream<ReqT, RespT> ls = stream;
            if (state().committed() == 0) {
                a = openLocked(null);
            } else if (!Objects.requireNonNull(ls).deadlineWait) {
                a = openLocked(ls);
            } else {
                expired = ls.breakCode;
                finishLocked();
            }
        }
        if (expired != null) {
            suppressed(SuppressionReason.DEADLINE, expired);
            endCall(Status.DEADLINE_EXCEEDED.withDescription("the call's deadline passed while its stream waited to "
                    + "resume after " + expired), new Metadata(), false);
            return;
        }
        launch(Objects.requireNonNull(a), null);
    }

    @Override
    void ended(Status status, int attempts) {
        RetryDecider.Call d = null;
        if (plan.policy() == null) {
            synchronized (this) {
                d = extra().decisions;
            }
        }
        if (d != null) {
            d.onClose(status, attempts); // guarded: a throw is logged once and counted
        }
    }
}
