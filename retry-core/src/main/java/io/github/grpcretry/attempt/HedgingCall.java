package io.github.grpcretry.attempt;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.internal.pushback.Pushback;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A call under a gRFC A6 {@code hedgingPolicy}: attempts of the same request in parallel, the first to
 * commit wins and the others are cancelled. The call itself is the {@link EngineCall} core; this strategy
 * decides when the next hedge goes ({@link Decision#afterHedgeFailure}, {@link Decision#beforeHedge}):
 * the rules are docs/design.md §7, and where they differ from grpc-java, docs/differences.md. The
 * application's close comes as soon as the outcome is known; cancelled attempts report their end later.
 */
final class HedgingCall<ReqT, RespT> extends EngineCall<ReqT, RespT> {

    private final HedgingPolicy policy;
    private final long delayNanos;
    /** The method's adaptive delay (null: the configured delay), and when the call started on its ticker. */
    private final @Nullable AdaptiveDelay adaptive;
    private volatile long startTicks;
    @GuardedBy("this") private boolean sampled; // its latency is in the adaptive delay's window

    @GuardedBy("this") private @Nullable Status lastStatus;
    @GuardedBy("this") private @Nullable Metadata lastTrailers;
    @GuardedBy("this") private long firstStartNanos;
    @GuardedBy("this") private long lastStartNanos;

    HedgingCall(RetryingClientInterceptor engine, RetryingClientInterceptor.MethodPlan plan,
            MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
        super(engine, plan, method, callOptions, next, true);
        this.policy = Objects.requireNonNull(plan.hedging(), "hedging"); // a plan with a hedging policy only
        long configured = Math.max(0, Nanos.saturated(policy.hedgingDelay())); // a delay past 2^63-1 ns: never
        this.adaptive = plan.adaptive();
        this.delayNanos = adaptive == null ? configured : adaptive.delayNanos(configured);
    }

    /** With an adaptive delay: the call counts toward the hedges' share, and its latency is measured from now. */
    @Override
    void starting() {
        if (adaptive != null) {
            startTicks = adaptive.now();
            adaptive.onCall();
        }
    }

    /**
     * With an adaptive delay: what the caller waited for the answer to begin is the call's latency (a winning hedge
     * ends the wait early; a hedge can only go before the commit, so a stream's length after it does not count).
     */
    @Override
    void answered() {
        sample();
    }

    /** A call that ended with no response committing it (a failure, a cancel): its latency is the wait until then. */
    @Override
    void ended(Status status, int attempts) {
        sample();
    }

    private void sample() {
        if (adaptive == null) {
            return;
        }
        synchronized (this) {
            if (sampled) {
                return;
            }
            sampled = true;
        }
        adaptive.record(adaptive.now() - startTicks);
    }

    /** A new attempt: the hedge after it is scheduled (one that could only start after the deadline is not). */
    @Override
    @GuardedBy("this")
    void openedLocked(Attempt a) {
        long now = System.nanoTime();
        if (a.number == 1) {
            firstStartNanos = now;
        }
        lastStartNanos = now;
        if (!state().frozen() && state().attempts() < plan.maxAttempts() && delayNanos > 0 && remainingNanos() > delayNanos) {
            scheduleLocked(delayNanos);
        }
    }

    /** Without a hedging delay the next hedge follows each attempt at once. */
    @Override
    void launched(Attempt a) {
        if (delayNanos == 0) {
            nextAttempt();
        }
    }

    @Override
    @GuardedBy("this")
    Decision afterFailureLocked(Attempt a, Status status, Metadata trailers) {
        lastStatus = status;
        lastTrailers = trailers;
        long pushback = Pushback.parse(trailers);
        boolean nonFatal = policy.isNonFatal(status.getCode());
        boolean allowed = Decision.record(engine.throttle, Decision.qualifies(nonFatal, pushback));
        Decision d = Decision.afterHedgeFailure(nonFatal, pushback, allowed, state().frozen(), state().attempts(),
                plan.maxAttempts(), liveLocked(), remainingNanos());
        if (d instanceof Decision.Stop) {
            freezeLocked();
        }
        return d;
    }

    @Override
    @GuardedBy("this")
    boolean wouldRetry(Status status, Metadata trailers) {
        return policy.isNonFatal(status.getCode()) && state().attempts() < plan.maxAttempts() && !state().frozen();
    }

    /** The next hedge, if deadline, throttle and budget let it go; else hedging freezes (none in flight: the end). */
    @Override
    void nextAttempt() {
        Attempt a = null;
        Decision d;
        Status last;
        Metadata lastTrailersSeen;
        boolean end = false;
        synchronized (this) {
            last = lastStatus;
            lastTrailersSeen = lastTrailers;
            if (state().phase() != CallState.Phase.OPEN || state().frozen() || state().attempts() >= plan.maxAttempts()) {
                return;
            }
            RetryThrottle throttle = engine.throttle;
            d = Decision.beforeHedge(remainingNanos(), throttle == null || throttle.isRetryAllowed());
            if (d instanceof Decision.Hedge && adaptive != null && !adaptive.tryAcquireHedge()) {
                d = new Decision.Stop(SuppressionReason.MAX_EXTRA_LOAD);
            }
            d = Decision.admit(d, engine.budget);
            if (d instanceof Decision.Stop) {
                freezeLocked();
                if (liveLocked() == 0) {
                    end = true;
                    finishLocked(); // nothing in flight: nothing to cancel
                }
            } else {
                a = openLocked(null);
            }
        }
        if (a != null) {
            launch(a, null);
            return;
        }
        // a stop before a hedge names its reason; the call ends only after an attempt closed
        suppressed(Objects.requireNonNull(((Decision.Stop) d).reason()),
                last == null ? Status.Code.OK : last.getCode());
        if (end) {
            endCall(Objects.requireNonNull(last), Objects.requireNonNull(lastTrailersSeen), false);
        }
    }

    @Override
    @GuardedBy("this")
    long waitedNanos() {
        return state().attempts() > 1 ? lastStartNanos - firstStartNanos : 0;
    }
}
