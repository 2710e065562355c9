package io.github.grpcretry.attempt;

import io.github.grpcretry.internal.callback.CallbackFailures;
import io.github.grpcretry.internal.commit.CallBuffer;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * What a long stream of one engine call needs beyond A6: the idle timeout of its attempts and the resumption of a
 * server stream that breaks after its commit (docs/design.md §18, "Long streams"). The resumer is called off the call's
 * lock; a throw is logged once and counted (§14): the call is not resumed. Fields marked so are guarded by the call's lock.
 */
final class LongStream<ReqT, RespT> {

    private static final String ROLE = "StreamResumption";

    /**
     * What the idle timeout keeps of one attempt (made with the attempt when the channel has one): when it last heard
     * from the attempt (headers or a message; written on its callback thread), its one pending idle timer (guarded by
     * the call's lock), and whether it cut the attempt.
     */
    static final class Watch {
        volatile long lastHeard;
        /** Its callback thread is delivering one of its callbacks (the application's code may be running in it). */
        volatile boolean inCallback;
        RetryScheduler.@Nullable Timer timer;
        volatile boolean cut;
    }

    /** What {@link #beforeBreak} answers when a resumption applies but the resumer gives no request. */
    static final Object REFUSED = new Object();

    private final @Nullable StreamResumption<ReqT, RespT> resumption;
    private final @Nullable RetryPolicy policy;
    /** The idle timeout (0: none) and the status of an attempt it cuts. */
    final long idleNanos;
    final @Nullable Status idleStatus;
    private final int maxResumes;
    /** The demand the application asked for in all (written under the call's lock), and the responses it was served. */
    private volatile long requested;
    private volatile long received;
    /** When the application's demand last rose from none: an attempt is not idle for the time before. */
    private volatile long demandSinceNanos;
    private volatile StreamResumption.@Nullable Resumer<ReqT, RespT> resumer;
    private volatile boolean resumerFailed;
    // guarded by the call's lock
    boolean halfClosed;
    private volatile int resumes; // read off the lock by beforeBreak
    private int backoffStep;
    private long receivedAtBreak;
    @Nullable Object next; // the request of the resumed attempt that follows the break (set at the break)
    Status.Code breakCode = Status.Code.UNKNOWN; // of the break that the resumption waits to continue
    /** The wait for the resumed attempt ends at the call's deadline: it ends the call {@code DEADLINE_EXCEEDED}. */
    boolean deadlineWait;

    private LongStream(@Nullable StreamResumption<ReqT, RespT> resumption, @Nullable RetryPolicy policy, long idleNanos,
            @Nullable Status idleStatus, int maxResumes) {
        this.resumption = resumption;
        this.policy = policy;
        this.idleNanos = idleNanos;
        this.idleStatus = idleStatus;
        this.maxResumes = maxResumes;
    }

    /**
     * The long stream of a call to {@code method}, or null when neither applies: the idle timeout to server- and
     * bidi-streaming calls, a resumption to a server-streaming call retried under a retry policy (not hedged).
     */
    static <ReqT, RespT> @Nullable LongStream<ReqT, RespT> of(RetryingClientInterceptor engine,
            RetryingClientInterceptor.MethodPlan plan, MethodDescriptor<ReqT, RespT> method, boolean parallel) {
        MethodDescriptor.MethodType type = method.getType();
        boolean streams = type == MethodDescriptor.MethodType.SERVER_STREAMING
                || type == MethodDescriptor.MethodType.BIDI_STREAMING;
        long idle = streams ? engine.idleTimeoutNanos : 0;
        StreamResumption<ReqT, RespT> r = parallel || plan.policy() == null
                || type != MethodDescriptor.MethodType.SERVER_STREAMING ? null : engine.resumption(method);
        return idle == 0 && r == null ? null
                : new LongStream<>(r, plan.policy(), idle, engine.idleStatus, engine.maxResumes);
    }

    /**
     * The application sends {@code request} (on its thread, before it is logged: the message itself, not its log entry,
     * which wraps an Integer or a Boolean message): its one request makes the resumer.
     */
    void sending(ReqT request) {
        StreamResumption<ReqT, RespT> r = resumption;
        if (r == null || resumer != null || resumerFailed) {
            return;
        }
        try {
            resumer = r.start(request);
            resumerFailed = resumer == null;
        } catch (RuntimeException | Error e) { // an Error too (as the listener's, §14): none reaches the application
            failed(r, "start", e);
        }
    }

    /** Under the call's lock: the application's operation is logged or passed through; its demand is counted. */
    void loggedLocked(Object entry) {
        if (entry instanceof Integer n) {
            if (idleNanos > 0 && requested == received) {
                demandSinceNanos = System.nanoTime();
            }
            requested += n;
        } else if (entry == CallBuffer.HALF_CLOSE) {
            halfClosed = true;
        }
    }

    /**
     * The application is served a response of the call's (on the attempt's callback thread, in order); the resumer is
     * told the same, null too when the method's marshaller parses a message to null.
     */
    @SuppressWarnings({"unchecked", "NullAway"})
    void served(@Nullable Object response) {
        received++; // one writer: the committed attempt's callback thread, attempts one after the other
        StreamResumption.Resumer<ReqT, RespT> r = resumer;
        if (r != null && !resumerFailed) {
            try {
                r.delivered((RespT) response);
            } catch (RuntimeException | Error e) { // an Error too: the listener's delivery waits on this thread
                failed(resumption, "delivered", e);
            }
        }
    }

    /**
     * Nanoseconds until the attempt {@code w} watches is idle (&le; 0: it is): the idle timeout since it last heard
     * something (or its last callback returned) or the application's demand last rose from none; a full timeout while
     * the application asks for nothing or the attempt's callback thread is in a callback (it cannot hear anything then).
     */
    long idleLeft(Watch w) {
        return requested > received && !w.inCallback
                ? Math.max(w.lastHeard, demandSinceNanos) + idleNanos - System.nanoTime() : idleNanos;
    }

    /**
     * Off the lock, on the callback thread of the committed attempt that ended with {@code status} (after every response
     * it delivered): null when no resumption applies (none for the method, a status the policy does not retry), else the
     * request that resumes the stream, or {@link #REFUSED} (no resumer, or every resumption taken: not asked).
     */
    @Nullable Object beforeBreak(Status status) {
        StreamResumption.Resumer<ReqT, RespT> r = resumer;
        RetryPolicy p = policy;
        if (resumption == null || status.isOk() || p == null || !p.isRetryable(status.getCode())) {
            return null;
        }
        if (r == null || resumerFailed || resumes >= maxResumes) { // every resumption taken: MAX_ATTEMPTS below
            return REFUSED;
        }
        try {
            ReqT request = r.resumeRequest();
            return request == null ? REFUSED : request;
        } catch (RuntimeException | Error e) { // an Error too: the break is still decided
            failed(resumption, "resumeRequest", e);
            return REFUSED;
        }
    }

    /**
     * Under the call's lock: what follows the break of the committed attempt with {@code code} ({@link #next}): as a retry's failure (pushback, RetryInfo, the throttle's token), its backoff from
     * the policy's initial one again after a break that followed progress; a resumption the resumer refused is
     * {@code Stop(RESUME_REFUSED)}. A wait the call's deadline cuts short is taken to the deadline ({@link #deadlineWait}).
     */
    Decision afterBreakLocked(Status.Code code, long pushback, long serverDelay,
            @Nullable RetryThrottle throttle, long remainingNanos) {
        RetryPolicy p = Objects.requireNonNull(policy); // beforeBreak answered: a policy retries the call
        Object request = Objects.requireNonNull(next, "no break");
        next = null;
        long served = received;
        backoffStep = served > receivedAtBreak ? 0 : backoffStep;
        receivedAtBreak = served;
        breakCode = code;
        Decision.Failure failure = Decision.classify(p, code, false, pushback, serverDelay, backoffStep,
                ThreadLocalRandom.current().nextDouble(0.8, 1.2));
        boolean allowed = Decision.record(throttle, failure.qualifies());
        Decision d = Decision.afterRetryFailure(failure, allowed, resumes, maxResumes, Decision.NO_DEADLINE);
        if (!(d instanceof Decision.Retry r)) {
            return d;
        }
        if (request == REFUSED) {
            return new Decision.Stop(SuppressionReason.RESUME_REFUSED);
        }
        resumes = resumes + 1; // under the call's lock: the one writer
        backoffStep = r.nextBackoffStep();
        next = request;
        deadlineWait = remainingNanos != Decision.NO_DEADLINE && remainingNanos <= r.delayNanos();
        return deadlineWait ? new Decision.Retry(Math.max(0, remainingNanos), r.nextBackoffStep(), r.source()) : d;
    }

    /** What the application asked for and was not served yet (up to MAX_VALUE). */
    int outstanding() {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, requested - received));
    }

    private void failed(@Nullable Object callback, String kind, Throwable e) {
        resumerFailed = true;
        CallbackFailures.SHARED.failed(ROLE, callback == null ? this : callback, kind, e,
                "the call is not resumed: a break ends it with its status");
    }
}
