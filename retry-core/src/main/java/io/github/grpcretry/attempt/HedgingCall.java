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

/**
 * A call under a gRFC A6 {@code hedgingPolicy}: attempts of the same request in parallel, the first to
 * commit wins (the others are cancelled). The call itself is the {@link EngineCall} core; this strategy
 * decides when the next hedge goes ({@link Decision#afterHedgeFailure}, {@link Decision#beforeHedge}):
 * <ul>
 *   <li>the first attempt at once, another every {@code hedgingDelay} while fewer than
 *       {@code maxAttempts} (capped) went out, the call is uncommitted and hedging not frozen; none is
 *       scheduled to start at or after the call's deadline;</li>
 *   <li>a fatal status (not in {@code nonFatalStatusCodes}) ends the call at once; a non-fatal one sends
 *       the next hedge at once (A6; grpc-java waits for the delay), and when nothing is left in flight or
 *       to send, the call ends with the last status;</li>
 *   <li>a pushback "stop" freezes hedging (the attempts in flight go on); n &ge; 0 ms sends the next hedge
 *       after exactly n ms (A6; grpc-java at once);</li>
 *   <li>a non-fatal failure or a "stop" is a qualified throttle failure; the throttle at its threshold
 *       freezes hedging (A6; grpc-java ends the call); each hedge needs the throttle above its threshold
 *       and a budget withdrawal when it is about to be sent, else hedging freezes;</li>
 *   <li>a message past a buffer limit commits to the attempt that has sent the most (the oldest on a
 *       tie), as grpc-java does.</li>
 * </ul>
 * The application's close comes as soon as the outcome is known (grpc-java waits for the cancelled
 * attempts to close); those report their end when their cancellation completes.
 */
final class HedgingCall<ReqT, RespT> extends EngineCall<ReqT, RespT> {

    private final HedgingPolicy policy;
    private final int maxAttempts;
    private final long delayNanos;

    /** No more hedges (pushback stop, throttle, budget, deadline). */
    @GuardedBy("this")
    private boolean frozen;
    @GuardedBy("this")
    private Status lastStatus;
    @GuardedBy("this")
    private Metadata lastTrailers;
    @GuardedBy("this")
    private long firstStartNanos;
    @GuardedBy("this")
    private long lastStartNanos;

    HedgingCall(RetryingClientInterceptor engine, RetryingClientInterceptor.MethodPlan plan,
            MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
        super(engine, plan, method, callOptions, next, true);
        this.policy = plan.hedging();
        this.maxAttempts = Math.max(1, policy.maxAttempts());
        this.delayNanos = Math.max(0, Nanos.saturated(policy.hedgingDelay())); // a delay past 2^63-1 ns: never
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
        boolean more = committed == null && attempts() < maxAttempts && !frozen;
        if (more && delayNanos > 0 && remainingNanos() > delayNanos) {
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
        Decision d = Decision.afterHedgeFailure(nonFatal, pushback, allowed, frozen, attempts(), maxAttempts,
                liveLocked(), remainingNanos());
        if (d instanceof Decision.Stop) {
            freezeLocked();
        }
        return d;
    }

    @Override
    @GuardedBy("this")
    boolean wouldRetry(Status status, Metadata trailers) {
        return policy.isNonFatal(status.getCode()) && attempts() < maxAttempts && !frozen;
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
            if (finished || cancelled || committed != null || frozen || attempts() >= maxAttempts) {
                return;
            }
            RetryThrottle throttle = engine.throttle;
            d = Decision.admit(Decision.beforeHedge(remainingNanos(), throttle == null || throttle.isRetryAllowed()),
                    engine.budget);
            if (d instanceof Decision.Stop) {
                freezeLocked();
                if (liveLocked() == 0) {
                    end = true;
                    finishLocked(); // nothing in flight: nothing to cancel
                }
            } else {
                a = openLocked();
            }
        }
        if (a != null) {
            launch(a);
            return;
        }
        suppressed(((Decision.Stop) d).reason(), last == null ? Status.Code.OK : last.getCode());
        if (end) {
            endCall(last, lastTrailersSeen);
        }
    }

    @GuardedBy("this")
    private void freezeLocked() {
        frozen = true;
        cancelTimerLocked();
    }

    @Override
    @GuardedBy("this")
    long waitedNanos() {
        return attempts() > 1 ? lastStartNanos - firstStartNanos : 0;
    }

    @Override
    public String toString() {
        return "HedgingCall[" + target().fullMethodName() + "]";
    }
}
