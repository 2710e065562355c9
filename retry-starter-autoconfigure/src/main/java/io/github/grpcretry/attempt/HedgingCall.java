package io.github.grpcretry.attempt;

import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.pushback.Pushback;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;

/**
 * A call under a gRFC A6 {@code hedgingPolicy}: several attempts of the same request in parallel, the
 * first to commit wins. The call itself (record, commit, serialised listener, timer, end) is the
 * {@link EngineCall} core; this strategy decides when the next hedge goes.
 *
 * <ul>
 *   <li>The first attempt goes at once; another one every {@code hedgingDelay} while fewer than
 *       {@code maxAttempts} (capped) were sent, the call is not committed and hedging is not frozen.
 *       Each hedge carries {@code grpc-previous-rpc-attempts} (its attempt number − 1).</li>
 *   <li>Response headers or a response message commit the call to that attempt; every other attempt
 *       is cancelled at once (the server sees the cancellation) and no hedge is sent any more. A
 *       Trailers-Only OK ends the call with OK the same way.</li>
 *   <li>A status not in {@code nonFatalStatusCodes} ends the whole call with that status at once (the
 *       others are cancelled). A non-fatal status sends the next pending hedge at once, as A6 says
 *       (grpc-java waits for the pending hedging delay instead); later hedges resume every
 *       {@code hedgingDelay}. When every attempt has failed and no hedge is left to send, the call
 *       ends with the last attempt's status.</li>
 *   <li>Pushback: "stop" (negative, malformed, repeated) freezes hedging: no more hedges, the ones in
 *       flight go on. A value n ≥ 0 after a non-fatal status sends the next hedge after exactly n ms
 *       (A6; grpc-java sends it at once) and the ones after that every {@code hedgingDelay}.</li>
 *   <li>Throttle (A6): a non-fatal failure, or a pushback "stop", is a qualified failure; when the
 *       bucket is then at or below its threshold hedging freezes (the hedges in flight go on, as A6
 *       says; grpc-java ends the call with that failure and cancels them). Every hedge after the first
 *       attempt also needs the throttle above its threshold and a withdrawal from the budget when it
 *       is about to be sent, else hedging freezes ({@code suppressed{reason=throttled|budget}}). A call
 *       that ends OK gives the throttle its token ratio.</li>
 *   <li>The call's deadline bounds everything: no hedge is scheduled to start at or after it, and
 *       every attempt runs with it.</li>
 *   <li>Buffering: request messages are kept for replay to later hedges under the per-RPC and the
 *       channel limits. A message that passes a limit commits the call to the attempt that has sent
 *       the most (on a tie the oldest), cancels the others and stops hedging, as A6 says and
 *       grpc-java does. With no attempt in flight, the next one is committed at start.</li>
 * </ul>
 *
 * <p>The application's close comes as soon as the call's outcome is known; attempts cancelled at that
 * moment report their own end ({@code attemptEnded}, CANCELLED) when their cancellation completes,
 * possibly after {@code callEnded}. grpc-java holds the application's close until every cancelled
 * attempt has closed.
 */
final class HedgingCall<ReqT, RespT> extends EngineCall<ReqT, RespT> {

    private final HedgingPolicy policy;
    private final int maxAttempts;
    private final long delayNanos;

    // ---- guarded by this ----
    /** No more hedges (pushback stop, throttle, budget, deadline). */
    private boolean frozen;
    private Status lastStatus;
    private Metadata lastTrailers;
    private long firstStartNanos;
    private long lastStartNanos;

    HedgingCall(RetryingClientInterceptor engine, RetryingClientInterceptor.MethodPlan plan,
            MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
        super(engine, plan, method, callOptions, next);
        this.policy = plan.hedging();
        this.maxAttempts = Math.max(1, policy.maxAttempts());
        this.delayNanos = Math.max(0, Nanos.saturated(policy.hedgingDelay())); // a delay past 2^63-1 ns: never
    }

    @Override
    AttemptKind laterKind() {
        return AttemptKind.HEDGE;
    }

    @Override
    boolean parallel() {
        return true;
    }

    /** A new attempt: the hedge after it is scheduled (one that could only start after the deadline is not). */
    @Override
    void openedLocked(Attempt a) {
        long now = System.nanoTime();
        if (a.number == 1) {
            firstStartNanos = now;
        }
        lastStartNanos = now;
        long left = remainingNanos();
        if (committed == null && attempts < maxAttempts && !frozen && delayNanos > 0
                && (left == Decision.NO_DEADLINE || left > delayNanos)) {
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
    Decision afterFailureLocked(Attempt a, Status status, Metadata trailers) {
        lastStatus = status;
        lastTrailers = trailers;
        long pushback = Pushback.parse(trailers);
        boolean nonFatal = policy.isNonFatal(status.getCode());
        boolean allowed = Decision.record(engine.throttle, nonFatal || pushback == Pushback.STOP);
        Decision d = Decision.afterHedgeFailure(nonFatal, pushback, allowed, frozen, attempts, maxAttempts, live,
                remainingNanos());
        if (d instanceof Decision.Stop) {
            freezeLocked();
        }
        return d;
    }

    @Override
    boolean wouldRetry(Status status, Metadata trailers) {
        return policy.isNonFatal(status.getCode()) && attempts < maxAttempts && !frozen;
    }

    /**
     * Sends the next hedge if it may go (its timer fired, or a failure sends it at once): the
     * throttle, the deadline and the budget are checked now; a refusal freezes hedging and, with
     * nothing in flight, ends the call with the last failure.
     */
    @Override
    void nextAttempt() {
        Attempt a = null;
        Decision d;
        Status.Code code = Status.Code.OK;
        boolean end = false;
        synchronized (this) {
            if (finished || cancelled || committed != null || frozen || attempts >= maxAttempts) {
                return;
            }
            RetryThrottle throttle = engine.throttle;
            d = Decision.admit(Decision.beforeHedge(remainingNanos(), throttle == null || throttle.isRetryAllowed()),
                    engine.budget);
            if (d instanceof Decision.Stop) {
                freezeLocked();
                if (lastStatus != null) {
                    code = lastStatus.getCode();
                }
                if (live == 0) {
                    end = true;
                    finishLocked(); // nothing in flight: nothing to cancel
                }
            } else {
                a = openLocked();
            }
        }
        if (a != null) {
            launch(a, null);
            return;
        }
        engine.events.retrySuppressed(target(), ((Decision.Stop) d).reason(), code);
        if (end) {
            endCall(lastStatus, lastTrailers, false);
        }
    }

    private void freezeLocked() {
        frozen = true;
        cancelTimerLocked();
    }

    @Override
    long waitedNanos() {
        return attempts > 1 ? lastStartNanos - firstStartNanos : 0;
    }

    @Override
    public String toString() {
        return "HedgingCall[" + target().fullMethodName() + "]";
    }
}
