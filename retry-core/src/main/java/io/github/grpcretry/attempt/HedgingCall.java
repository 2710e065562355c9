package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.internal.commit.CallBuffer;
import io.github.grpcretry.internal.commit.MessageSizes;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.internal.pushback.Pushback;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * One logical call of the interceptor engine under a gRFC A6 {@code hedgingPolicy}
 * (docs/design.md §7): several attempts of the same request in parallel, the first to commit wins.
 *
 * <h2>What it does</h2>
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
 *       grpc-java does (grpc-java commits to the attempt whose outbound bytes passed the limit first,
 *       which is the same attempt). With no attempt in flight, the next one is committed at start.</li>
 * </ul>
 *
 * <h2>State and threads</h2>
 * All decisions are taken under one lock per call ({@code synchronized (this)}); calls into
 * attempts and into the application's listener happen outside it. A new attempt is drained (the
 * record of start demand, messages and half-close replayed into it) by the thread that started it;
 * after that the application's thread forwards its operations to every drained attempt. An attempt
 * is only cancelled by another thread when no send to it is under way (an attempt being drained or
 * being sent to is cancelled by the thread doing that, right after), since a {@code ClientCall}
 * refuses messages after its cancellation.
 *
 * <p>Callbacks of several attempts arrive on different threads. Until the call is committed and the
 * callbacks raised so far have run, every callback to the application's listener goes through a
 * small serializer (run inline when idle, queued otherwise), so the application sees one serial,
 * ordered call: no callback overlaps another, none comes after the close, headers come first. Once
 * the winner is known and the serializer is idle, the winner's callbacks go straight to the
 * application (a volatile read), and once the winner has caught up with the record its send-side
 * methods do as well: the committed path is as thin as in the retry engine.
 *
 * <p>The application's close comes as soon as the call's outcome is known; attempts cancelled at
 * that moment report their own end ({@code attemptEnded}, CANCELLED) when their cancellation
 * completes, possibly after {@code callEnded}. grpc-java holds the application's close until every
 * cancelled attempt has closed.
 */
final class HedgingCall<ReqT, RespT> extends EngineCall<ReqT, RespT, HedgingCall<ReqT, RespT>.Attempt> {

    private static final Object[] NO_MESSAGES = new Object[0];
    private static final String LOST = "hedged attempt not needed: another attempt committed";
    private static final String ENDED = "hedged attempt not needed: the call ended";

    private final RetryingClientInterceptor engine;
    private final MethodDescriptor<ReqT, RespT> method;
    private final CallOptions callOptions;
    private final Channel next;
    private final HedgingPolicy policy;
    private final CallTarget target;
    private final Context context;
    private final Executor executor;
    private final RetryEventListener events;
    private final int maxAttempts;
    private final long delayNanos;
    private final Attempt[] noAttempts;

    /** The committed attempt once the serializer is idle: its callbacks go straight to the listener. */
    private volatile Attempt deliverDirect;

    // ---- guarded by this ----
    private Listener<RespT> listener;
    private Metadata headers;
    private Deadline deadline;
    private CallBuffer bytes;
    private Object[] buffer = NO_MESSAGES;
    private int buffered;
    private boolean halfClosed;
    private long demand;
    private Boolean messageCompression;
    /** Every attempt started, by number − 1. */
    private final Attempt[] all;
    private int attempts;
    /** Attempts started and not closed. */
    private int live;
    private Attempt committed;
    private SuppressionReason commitReason;
    /** A buffer limit was passed while no attempt was in flight: the next attempt is committed at once. */
    private boolean bufferExceeded;
    /** The pending hedge. */
    private RetryScheduler.Timer timer;
    private int timerGeneration;
    /** No more hedges (pushback stop, throttle, budget, deadline). */
    private boolean frozen;
    private Status lastStatus;
    private Metadata lastTrailers;
    private long firstStartNanos;
    private long lastStartNanos;
    private Context.CancellationListener contextListener;
    private boolean cancelled;
    /** The call's outcome is decided; the application's listener is closed or about to be. */
    private boolean finished;
    /** A thread is running listener callbacks (the serializer). */
    private boolean delivering;
    private ArrayDeque<Runnable> pendingCallbacks;

    @SuppressWarnings("unchecked")
    HedgingCall(RetryingClientInterceptor engine, MethodDescriptor<ReqT, RespT> method, CallOptions callOptions,
            Channel next, HedgingPolicy policy, CallTarget target) {
        this.engine = engine;
        this.method = method;
        this.callOptions = callOptions;
        this.next = next;
        this.policy = policy;
        this.target = target;
        this.context = Context.current();
        Executor e = callOptions.getExecutor();
        this.executor = e != null ? e : engine.scheduler.workExecutor();
        this.events = engine.events;
        this.maxAttempts = Math.max(1, policy.maxAttempts());
        this.delayNanos = Math.max(0, Nanos.saturated(policy.hedgingDelay())); // a delay past 2^63-1 ns: never
        this.all = (Attempt[]) new HedgingCall.Attempt[maxAttempts];
        this.noAttempts = (Attempt[]) new HedgingCall.Attempt[0];
    }

    // ------------------------------------------------------------------ application side

    @Override
    public void start(Listener<RespT> responseListener, Metadata startHeaders) {
        CallSupport.checkStartArguments(responseListener, startHeaders);
        Attempt first;
        synchronized (this) {
            if (listener != null) {
                throw new IllegalStateException("Already started");
            }
            if (cancelled) {
                throw new IllegalStateException("call was cancelled");
            }
            listener = responseListener;
            CallSupport.discardAttemptHeader(startHeaders);
            headers = startHeaders;
            deadline = CallSupport.earlier(callOptions.getDeadline(), context.getDeadline());
            bytes = new CallBuffer(engine.bufferPool, engine.perRpcBufferLimit);
            first = newAttemptLocked(AttemptKind.INITIAL);
        }
        CallSupport.callStarted(engine, target);
        launchOrFail(first);
    }

    @Override
    void requestUncommitted(int numMessages) {
        Attempt p;
        if (numMessages < 0) {
            throw new IllegalArgumentException("numMessages must be >= 0");
        }
        Attempt[] targets;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                if (finished || cancelled) {
                    return;
                }
                demand += numMessages;
                targets = targetsLocked();
                for (Attempt a : targets) {
                    a.sentDemand += numMessages;
                }
            } else {
                targets = null;
            }
        }
        if (p != null) {
            p.call.request(numMessages);
            return;
        }
        try {
            for (Attempt a : targets) {
                a.call.request(numMessages);
            }
        } finally {
            release(targets);
        }
    }

    @Override
    void sendMessageUncommitted(ReqT message) {
        long size = MessageSizes.sizeOf(method.getRequestMarshaller(), message);
        Attempt p;
        Attempt[] targets = null;
        Attempt[] toCancel = null;
        Attempt newlyCommitted = null;
        synchronized (this) {
            if (finished || cancelled) {
                return;
            }
            if (passThrough == null && halfClosed) {
                throw new IllegalStateException("call was half-closed");
            }
            if (passThrough == null && committed == null && !bufferExceeded && !bytes.tryAdd(size)) {
                Attempt pick = mostAdvancedLocked();
                if (pick != null) {
                    toCancel = commitLocked(pick, SuppressionReason.BUFFER_LIMIT);
                    newlyCommitted = pick;
                } else {
                    bufferExceeded = true; // the next attempt is committed at start, and is the last
                }
            }
            p = passThrough;
            if (p == null) {
                if (buffered == buffer.length) {
                    buffer = Arrays.copyOf(buffer, Math.max(4, buffered * 2));
                }
                buffer[buffered++] = message;
                targets = targetsLocked();
                for (Attempt a : targets) {
                    a.sentMessages = buffered;
                }
            }
        }
        cancelAll(toCancel);
        if (newlyCommitted != null) {
            events.committed(target, newlyCommitted.number);
        }
        if (p != null) {
            p.call.sendMessage(message);
            return;
        }
        try {
            for (Attempt a : targets) {
                a.call.sendMessage(message);
            }
        } finally {
            release(targets);
        }
    }

    @Override
    void halfCloseUncommitted() {
        Attempt p;
        Attempt[] targets = null;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                if (finished || cancelled) {
                    return;
                }
                if (halfClosed) {
                    throw new IllegalStateException("call already half-closed");
                }
                halfClosed = true;
                targets = targetsLocked();
                for (Attempt a : targets) {
                    a.sentHalfClose = true;
                }
            }
        }
        if (p != null) {
            p.call.halfClose();
            return;
        }
        try {
            for (Attempt a : targets) {
                a.call.halfClose();
            }
        } finally {
            release(targets);
        }
    }

    /** Cancels the call (application or Context): every attempt in flight and the pending hedge. */
    @Override
    void cancelWith(Status status, String message, Throwable cause) {
        Attempt p;
        Attempt[] toCancel = null;
        boolean closeNow = false;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                if (cancelled || finished) {
                    return;
                }
                cancelled = true;
                if (listener == null) {
                    return; // cancelled before start: start() will refuse
                }
                cancelTimerLocked();
                removeContextListenerLocked();
                toCancel = cancelOthersLocked(null, message, cause);
                if (live == 0) {
                    // waiting for a hedge: no attempt will report, so the call ends here
                    finished = true;
                    releaseBufferLocked();
                    closeNow = true;
                }
            }
        }
        if (p != null) {
            p.call.cancel(message, cause);
            return;
        }
        cancelAll(toCancel);
        if (closeNow) {
            executor.execute(() -> endCall(status, new Metadata(), null));
        }
    }

    @Override
    boolean isReadyUncommitted() {
        Attempt p;
        Attempt[] targets;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                if (finished || cancelled) {
                    return false;
                }
                targets = targetsLocked();
            } else {
                targets = null;
            }
        }
        if (p != null) {
            return p.call.isReady();
        }
        try {
            for (Attempt a : targets) {
                if (a.call.isReady()) {
                    return true;
                }
            }
            return false;
        } finally {
            release(targets);
        }
    }

    @Override
    void setMessageCompressionUncommitted(boolean enabled) {
        Attempt p;
        Attempt[] targets;
        synchronized (this) {
            messageCompression = enabled;
            p = passThrough;
            targets = p == null ? targetsLocked() : null;
        }
        if (p != null) {
            p.call.setMessageCompression(enabled);
            return;
        }
        try {
            for (Attempt a : targets) {
                a.call.setMessageCompression(enabled);
            }
        } finally {
            release(targets);
        }
    }

    @Override
    Attributes getAttributesUncommitted() {
        Attempt a = null;
        synchronized (this) {
            if (committed != null && committed.started) {
                a = committed;
            } else {
                for (int i = 0; i < attempts; i++) {
                    if (all[i].started && !all[i].closed) {
                        a = all[i];
                        break;
                    }
                }
            }
        }
        return a == null ? Attributes.EMPTY : a.call.getAttributes();
    }

    @Override
    public String toString() {
        return "HedgingCall[" + target.fullMethodName() + "]";
    }

    // ------------------------------------------------------------------ targets of application operations

    /**
     * The drained attempts in flight that the application's operations go to; each is marked as
     * being sent to until {@link #release} (under lock).
     */
    private Attempt[] targetsLocked() {
        Attempt only = null;
        int n = 0;
        for (int i = 0; i < attempts; i++) {
            Attempt a = all[i];
            if (a.isTargetLocked()) {
                only = a;
                n++;
            }
        }
        if (n == 0) {
            return noAttempts;
        }
        Attempt[] out;
        if (n == 1) {
            out = only.self;
        } else {
            out = Arrays.copyOf(noAttempts, n);
            int k = 0;
            for (int i = 0; i < attempts; i++) {
                if (all[i].isTargetLocked()) {
                    out[k++] = all[i];
                }
            }
        }
        for (Attempt a : out) {
            a.sending++;
        }
        return out;
    }

    /** Ends the sends to {@code targets}; cancels those whose cancellation waited for them. */
    private void release(Attempt[] targets) {
        if (targets.length == 0) {
            return;
        }
        Attempt[] cancelNow = null;
        int k = 0;
        synchronized (this) {
            for (Attempt a : targets) {
                if (--a.sending == 0 && a.cancelRequested && !a.cancelIssued && !a.closed) {
                    a.cancelRequested = false;
                    a.cancelIssued = true;
                    if (cancelNow == null) {
                        cancelNow = Arrays.copyOf(noAttempts, targets.length);
                    }
                    cancelNow[k++] = a;
                }
            }
        }
        cancelAll(cancelNow);
    }

    /** The attempt in flight that has sent the most messages (the oldest on a tie), or null (under lock). */
    private Attempt mostAdvancedLocked() {
        Attempt best = null;
        for (int i = 0; i < attempts; i++) {
            Attempt a = all[i];
            if (!a.closed && !a.cancelRequested && !a.cancelIssued
                    && (best == null || a.sentMessages > best.sentMessages)) {
                best = a;
            }
        }
        return best;
    }

    // ------------------------------------------------------------------ attempts

    /** Counts and records a new attempt and schedules the hedge after it (under lock). */
    private Attempt newAttemptLocked(AttemptKind kind) {
        int number = ++attempts;
        Attempt a = new Attempt(number, kind);
        all[number - 1] = a;
        live++;
        long now = System.nanoTime();
        if (number == 1) {
            firstStartNanos = now;
        }
        lastStartNanos = now;
        if (bufferExceeded && committed == null) {
            commitLocked(a, SuppressionReason.BUFFER_LIMIT); // nothing else is in flight
            a.committedAtStart = true;
        } else if (attempts < maxAttempts && !frozen) {
            if (delayNanos == 0) {
                a.hedgeAfterStart = true;
            } else {
                scheduleHedgeLocked(delayNanos);
            }
        }
        return a;
    }

    /** Starts {@code a} on the channel and replays the record into it. */
    private void launch(Attempt a) {
        Metadata attemptHeaders = new Metadata();
        attemptHeaders.merge(headers);
        CallSupport.putAttemptHeader(attemptHeaders, a.number);
        events.attemptStarted(target, a.kind, a.number);
        if (a.committedAtStart) {
            events.committed(target, a.number);
        }
        Context previous = context == Context.current() ? null : context.attach();
        try {
            a.call = next.newCall(method, callOptions);
            Boolean compression;
            synchronized (this) {
                compression = messageCompression;
            }
            CallSupport.startAttemptCall(a.call, a, attemptHeaders, compression);
            drain(a);
        } finally {
            if (previous != null) {
                context.detach(previous);
            }
        }
        if (a.hedgeAfterStart) {
            sendHedge(-1);
        }
    }

    /** Replays the record into {@code a} until it has caught up; then {@code a} is drained. */
    @SuppressWarnings("unchecked")
    private void drain(Attempt a) {
        while (true) {
            Object[] messages = null;
            int from = 0;
            int to = 0;
            long moreDemand = 0;
            boolean sendHalfClose = false;
            boolean cancelNow = false;
            synchronized (this) {
                a.started = true;
                if (a.closed) {
                    return;
                }
                if (a.cancelRequested) {
                    a.cancelRequested = false;
                    a.cancelIssued = true;
                    cancelNow = true;
                } else if (a.sentMessages == buffered && a.sentHalfClose == halfClosed && a.sentDemand == demand) {
                    a.drained = true;
                    if (committed == a) {
                        enablePassThroughLocked(a);
                    }
                    return;
                } else {
                    messages = buffer;
                    from = a.sentMessages;
                    to = buffered;
                    a.sentMessages = to;
                    moreDemand = demand - a.sentDemand;
                    a.sentDemand = demand;
                    sendHalfClose = halfClosed && !a.sentHalfClose;
                    a.sentHalfClose = halfClosed;
                }
            }
            if (cancelNow) {
                a.cancelNow();
                return;
            }
            CallSupport.request(a.call, moreDemand);
            for (int i = from; i < to; i++) {
                a.call.sendMessage((ReqT) messages[i]);
            }
            if (sendHalfClose) {
                a.call.halfClose();
            }
        }
    }

    /**
     * Sends the next hedge if it may go: from its timer ({@code generation} of the timer) or at once
     * after a non-fatal failure ({@code -1}).
     */
    private void sendHedge(int generation) {
        Attempt a = null;
        SuppressionReason suppressed = null;
        Status.Code code = Status.Code.OK;
        boolean end = false;
        synchronized (this) {
            if (generation >= 0) {
                if (generation != timerGeneration || timer == null) {
                    return; // replaced or cancelled
                }
                timer = null;
                removeContextListenerLocked();
            }
            if (finished || cancelled || committed != null || frozen || attempts >= maxAttempts) {
                return;
            }
            Deadline d = deadline;
            RetryThrottle throttle = engine.throttle;
            RetryBudget budget = engine.budget;
            if (d != null && d.isExpired()) {
                suppressed = SuppressionReason.DEADLINE;
            } else if (throttle != null && !throttle.isRetryAllowed()) {
                suppressed = SuppressionReason.THROTTLED;
            } else if (budget != null && !budget.tryAcquireRetry()) {
                suppressed = SuppressionReason.BUDGET;
            }
            if (suppressed != null) {
                freezeLocked();
                if (lastStatus != null) {
                    code = lastStatus.getCode();
                }
                if (live == 0) {
                    end = true;
                    finishLocked();
                }
            } else {
                a = newAttemptLocked(AttemptKind.HEDGE);
            }
        }
        if (suppressed != null) {
            events.retrySuppressed(target, suppressed, code);
            if (end) {
                endCall(lastStatus, lastTrailers, null);
            }
            return;
        }
        launchOrFail(a);
    }

    /** {@link #launch}; an attempt that cannot be started closes with INTERNAL, like any failed attempt. */
    private void launchOrFail(Attempt a) {
        try {
            launch(a);
        } catch (RuntimeException e) {
            if (a.call != null) {
                a.call.cancel("could not start attempt " + a.number, e); // nobody else sends to it yet
            }
            a.onClose(Status.INTERNAL.withDescription("could not start attempt " + a.number).withCause(e), new Metadata());
        }
    }

    // ------------------------------------------------------------------ state changes (under lock)

    /**
     * Commits the call to {@code a}: no more hedges, the pending one dropped, every other attempt
     * cancelled. Returns the attempts the caller must cancel (outside the lock), or null.
     */
    private Attempt[] commitLocked(Attempt a, SuppressionReason reason) {
        committed = a;
        commitReason = reason;
        bufferExceeded = false;
        cancelTimerLocked();
        removeContextListenerLocked();
        if (a.drained) {
            enablePassThroughLocked(a);
        }
        return cancelOthersLocked(a, LOST, null);
    }

    /**
     * Asks every attempt in flight except {@code except} to be cancelled: those no other thread is
     * sending to are returned (cancel them outside the lock), the others are cancelled by the thread
     * sending to them once it is done.
     */
    private Attempt[] cancelOthersLocked(Attempt except, String message, Throwable cause) {
        Attempt[] out = null;
        int k = 0;
        for (int i = 0; i < attempts; i++) {
            Attempt b = all[i];
            if (b == except || b.closed || b.cancelIssued) {
                continue;
            }
            b.cancelMessage = message;
            b.cancelCause = cause;
            if (!b.drained || b.sending > 0) {
                b.cancelRequested = true;
            } else {
                b.cancelIssued = true;
                if (out == null) {
                    out = Arrays.copyOf(noAttempts, attempts);
                }
                out[k++] = b;
            }
        }
        return out;
    }

    private void cancelAll(Attempt[] toCancel) {
        if (toCancel == null) {
            return;
        }
        for (Attempt b : toCancel) {
            if (b == null) {
                break;
            }
            b.cancelNow();
        }
    }

    /** Schedules the next hedge after {@code nanos}, replacing a pending one; false when past the deadline. */
    private boolean scheduleHedgeLocked(long nanos) {
        cancelTimerLocked();
        Deadline d = deadline;
        if (d != null && d.timeRemaining(TimeUnit.NANOSECONDS) <= nanos) {
            return false;
        }
        int generation = ++timerGeneration;
        timer = engine.scheduler.schedule(() -> sendHedge(generation), executor, nanos);
        return true;
    }

    private void freezeLocked() {
        frozen = true;
        cancelTimerLocked();
    }

    private void cancelTimerLocked() {
        RetryScheduler.Timer t = timer;
        if (t != null) {
            timer = null;
            t.cancel();
        }
    }

    private void removeContextListenerLocked() {
        Context.CancellationListener cl = contextListener;
        if (cl != null) {
            contextListener = null;
            context.removeListener(cl);
        }
    }

    private void enablePassThroughLocked(Attempt a) {
        releaseBufferLocked();
        passThrough = a;
    }

    private void releaseBufferLocked() {
        if (bytes != null) {
            bytes.release();
        }
        buffer = NO_MESSAGES;
        buffered = 0;
    }

    /** The outcome is decided: timers, buffer and context listener go; returns the attempts to cancel. */
    private Attempt[] finishLocked() {
        finished = true;
        cancelTimerLocked();
        removeContextListenerLocked();
        releaseBufferLocked();
        return cancelOthersLocked(committed, ENDED, null);
    }

    // ------------------------------------------------------------------ decisions

    private static final int END = 0;
    private static final int GO_ON = 1;
    private static final int HEDGE_NOW = 2;

    /**
     * What follows the close of uncommitted attempt {@code a} with {@code status}: {@link #END} (the
     * call ends with this status), {@link #GO_ON} (other attempts or the pending hedge go on) or
     * {@link #HEDGE_NOW}. Sets {@code a.suppressed} when a hedge was given up (under lock).
     */
    private int decideLocked(Attempt a, Status status, Metadata trailers) {
        Status.Code code = status.getCode();
        lastStatus = status;
        lastTrailers = trailers;
        if (code == Status.Code.OK || context.isCancelled()) {
            return END;
        }
        long pushback = Pushback.parse(trailers);
        RetryThrottle throttle = engine.throttle;
        if (!policy.isNonFatal(code)) {
            if (pushback == Pushback.STOP && throttle != null) {
                throttle.onQualifiedFailureThenCheckAllowed();
            }
            a.suppressed = SuppressionReason.NON_RETRYABLE_STATUS;
            return END;
        }
        if (pushback == Pushback.STOP) {
            if (throttle != null) {
                throttle.onQualifiedFailureThenCheckAllowed();
            }
            if (!frozen) {
                freezeLocked();
                a.suppressed = SuppressionReason.PUSHBACK;
            }
        } else if (throttle != null && !throttle.onQualifiedFailureThenCheckAllowed() && !frozen) {
            freezeLocked();
            a.suppressed = SuppressionReason.THROTTLED;
        }
        boolean hedgeNow = false;
        if (!frozen && attempts < maxAttempts) {
            if (pushback > 0) {
                if (!scheduleHedgeLocked(TimeUnit.MILLISECONDS.toNanos(pushback))) {
                    freezeLocked();
                    a.suppressed = SuppressionReason.DEADLINE;
                }
            } else {
                cancelTimerLocked(); // the next hedge goes now; the ones after it every hedgingDelay
                hedgeNow = true;
            }
        }
        if (live == 0 && !hedgeNow && timer == null) {
            if (a.suppressed == null && attempts >= maxAttempts) {
                a.suppressed = SuppressionReason.MAX_ATTEMPTS;
            }
            return END;
        }
        if (live == 0 && !hedgeNow && context != Context.ROOT && contextListener == null) {
            // nothing in flight until the hedge's timer fires: watch the Context meanwhile
            Context.CancellationListener cl = c -> cancelWith(Contexts.statusFromCancelled(c), null, null);
            contextListener = cl;
            context.addListener(cl, executor);
        }
        return hedgeNow ? HEDGE_NOW : GO_ON;
    }

    // ------------------------------------------------------------------ the application's listener

    /**
     * Ends the call: reports it and closes the application's listener (through the serializer
     * unless {@code winner} already delivers directly).
     */
    private void endCall(Status status, Metadata trailers, Attempt winner) {
        int hedges;
        long delay;
        synchronized (this) {
            hedges = attempts - 1;
            delay = hedges > 0 ? lastStartNanos - firstStartNanos : 0;
        }
        CallSupport.succeeded(engine, status.isOk());
        events.callEnded(target, status.getCode(), 0, hedges, delay);
        if (winner != null && deliverDirect == winner) {
            listener.onClose(status, trailers);
            return;
        }
        synchronized (this) {
            if (delivering) {
                enqueueLocked(() -> listener.onClose(status, trailers));
                return;
            }
            delivering = true;
        }
        try {
            listener.onClose(status, trailers);
        } finally {
            serialExit();
        }
    }

    private void enqueueLocked(Runnable r) {
        if (pendingCallbacks == null) {
            pendingCallbacks = new ArrayDeque<>(4);
        }
        pendingCallbacks.add(r);
    }

    /** Runs the callbacks queued while this thread delivered; then the serializer is idle again. */
    private void serialExit() {
        RuntimeException failure = null;
        while (true) {
            Runnable r;
            synchronized (this) {
                r = pendingCallbacks == null ? null : pendingCallbacks.poll();
                if (r == null) {
                    delivering = false;
                    if (committed != null) {
                        deliverDirect = committed;
                    }
                    break;
                }
            }
            try {
                r.run();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    // ------------------------------------------------------------------ one attempt

    final class Attempt extends EngineAttempt<ReqT, RespT> {
        final int number;
        final AttemptKind kind;
        final Attempt[] self;
        boolean committedAtStart;
        boolean hedgeAfterStart;
        // guarded by the call's lock
        boolean started;
        boolean drained;
        boolean closed;
        /** Threads sending to this attempt now (the application's, outside the lock). */
        int sending;
        boolean cancelRequested;
        boolean cancelIssued;
        String cancelMessage;
        Throwable cancelCause;
        int sentMessages;
        long sentDemand;
        boolean sentHalfClose;
        SuppressionReason suppressed;

        @SuppressWarnings("unchecked")
        Attempt(int number, AttemptKind kind) {
            this.number = number;
            this.kind = kind;
            this.self = (Attempt[]) new HedgingCall.Attempt[] {this};
        }

        /**
         * Cancels this attempt (by the one thread allowed to at this moment). Unlimited demand first:
         * a transport may hold the close of a stream the server already ended behind response messages
         * nobody asked for (grpc-java's in-process transport ignores the cancel then), and a loser's
         * messages are dropped anyway.
         */
        void cancelNow() {
            try {
                call.request(Integer.MAX_VALUE);
            } finally {
                call.cancel(cancelMessage, cancelCause);
            }
        }

        boolean isTargetLocked() {
            return drained && !closed && !cancelRequested && !cancelIssued;
        }

        @Override
        public void onHeaders(Metadata responseHeaders) {
            if (deliverDirect == this) {
                listener.onHeaders(responseHeaders);
                return;
            }
            if (winning()) {
                synchronized (HedgingCall.this) {
                    if (delivering) {
                        enqueueLocked(() -> listener.onHeaders(responseHeaders));
                        return;
                    }
                    delivering = true;
                }
                try {
                    listener.onHeaders(responseHeaders);
                } finally {
                    serialExit();
                }
            }
        }

        @Override
        public void onMessage(RespT message) {
            if (deliverDirect == this) {
                listener.onMessage(message);
                return;
            }
            if (winning()) {
                synchronized (HedgingCall.this) {
                    if (delivering) {
                        enqueueLocked(() -> listener.onMessage(message));
                        return;
                    }
                    delivering = true;
                }
                try {
                    listener.onMessage(message);
                } finally {
                    serialExit();
                }
            }
        }

        /** Commits the call to this attempt if nothing else did; whether this attempt is the winner. */
        private boolean winning() {
            Attempt[] toCancel = null;
            boolean newly = false;
            boolean mine;
            synchronized (HedgingCall.this) {
                if (committed == null && !finished && !closed) {
                    toCancel = commitLocked(this, SuppressionReason.COMMITTED);
                    newly = true;
                }
                mine = committed == this;
            }
            cancelAll(toCancel);
            if (newly) {
                events.committed(target, number);
            }
            return mine;
        }

        @Override
        public void onReady() {
            if (deliverDirect == this) {
                listener.onReady();
                return;
            }
            synchronized (HedgingCall.this) {
                if (closed || finished || (committed != null && committed != this)) {
                    return;
                }
                if (delivering) {
                    enqueueLocked(listener::onReady);
                    return;
                }
                delivering = true;
            }
            try {
                listener.onReady();
            } finally {
                serialExit();
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            int outcome;
            Attempt[] toCancel = null;
            SuppressionReason suppress = null;
            synchronized (HedgingCall.this) {
                if (closed) {
                    return;
                }
                closed = true;
                live--;
                if (committed == this) {
                    outcome = END;
                    if (status.getCode() != Status.Code.OK && policy.isNonFatal(status.getCode())
                            && attempts < maxAttempts && !frozen) {
                        suppress = commitReason;
                    }
                } else if (committed != null || finished) {
                    outcome = GO_ON;
                } else if (cancelled) {
                    outcome = END;
                } else {
                    outcome = decideLocked(this, status, trailers);
                    suppress = suppressed;
                }
                if (outcome == END) {
                    toCancel = finishLocked();
                }
            }
            Status.Code code = status.getCode();
            events.attemptEnded(target, kind, number, code);
            cancelAll(toCancel);
            if (suppress != null) {
                events.retrySuppressed(target, suppress, code);
            }
            if (outcome == END) {
                endCall(status, trailers, this);
            } else if (outcome == HEDGE_NOW) {
                sendHedge(-1);
            }
        }

        @Override
        public String toString() {
            return "Attempt[" + number + " " + kind + "]";
        }
    }
}
