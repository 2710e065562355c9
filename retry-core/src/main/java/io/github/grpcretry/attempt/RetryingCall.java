package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.internal.commit.MessageSizes;
import io.github.grpcretry.policy.RetryPolicy;
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
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One logical call of the interceptor engine: a small state machine over its attempts.
 *
 * <h2>State and threads</h2>
 * All decisions are taken under one lock per call ({@code synchronized (this)}), except that the
 * close of the attempt the call passes through to reads, without it, state that no longer changes;
 * calls into an attempt and into the application's listener happen outside it. While the call is
 * uncommitted it records what the application did (start headers, response demand, request
 * messages, half-close) and forwards it to the live attempt. A new attempt is "drained" by the
 * thread that starts it: that thread replays the record in order (demand, messages, half-close)
 * until it has caught up, and only then is the attempt marked drained, after which the
 * application's own thread forwards directly. So an attempt's send-side methods are only ever used
 * by one thread at a time and messages keep their order. A cancellation that arrives while an
 * attempt is still being drained is handed to the draining thread.
 *
 * <p>Callbacks to the application listener come from the live attempt's own (serialising) call
 * executor; only one attempt is live at a time, and a new one starts only after the previous one
 * closed, so the application sees one serial, ordered call. The only callback raised elsewhere is
 * the close of a call cancelled while it waits for a retry (no attempt is live then), which runs on
 * the call's executor. Hedged calls, whose attempts run in parallel, are {@link HedgingCall}s.
 *
 * <h2>Commit</h2>
 * Response headers or a message commit the call to that attempt; so does passing a buffer limit.
 * Once the committed attempt has been drained, the buffer is released and {@link #passThrough} is
 * set: from then on every method is a volatile read plus a direct call, and the attempt's close reads
 * the call's state without the lock (nothing changes it any more).
 *
 * <h2>Lock round trips</h2>
 * An uncontended {@code synchronized} costs two atomic instructions (enter and exit), a large share of
 * what the engine adds to an in-process call. A call that succeeds at once takes the lock six times:
 * {@code start} (which also opens the first attempt), the first attempt's drain, {@code request},
 * {@code sendMessage}, {@code halfClose} and the commit by the response headers; its close takes none.
 *
 * <h2>Footprint</h2>
 * A call that succeeds at once allocates this object, its first {@link Attempt} and that attempt's
 * copy of the start headers, nothing else: the one request of a unary or server-streaming call is
 * kept in a field (an array only from the second message on), the bytes held for replay are counted
 * in a field, and whatever only a retry, a buffer limit, a cancellation during a replay or
 * {@link #setMessageCompression} needs lives in a {@link RetryState} created on first use.
 *
 * <h2>The attempt header</h2>
 * The engine owns {@code grpc-previous-rpc-attempts}: a value the application put in its start
 * headers (a proxy forwarding its caller's headers, say) is removed before the first attempt, and
 * retries carry only the engine's own count.
 */
final class RetryingCall<ReqT, RespT> extends EngineCall<ReqT, RespT, RetryingCall<ReqT, RespT>.Attempt> {

    static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    private static final String[] PREVIOUS_VALUES = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"};

    private final RetryingClientInterceptor engine;
    private final MethodDescriptor<ReqT, RespT> method;
    private final CallOptions callOptions;
    private final Channel next;
    /** The method's retry policy; null when a {@link RetryDecider} decides instead (kept in the state). */
    private final RetryPolicy policy;
    private final CallTarget target;
    private final Context context;

    // ---- guarded by this ----
    private Listener<RespT> listener;
    /** The application's start headers (without an attempt header of its own); each attempt gets a copy. */
    private Metadata headers;
    /** The replay record: the first request message (the ones after it are in the state). */
    private Object firstMessage;
    private int buffered;
    /** Request bytes held for replay, counted against the per-RPC limit and reserved in the channel's pool. */
    private long heldBytes;
    private long demand;
    /** The attempt the application's operations go to (null while waiting for a retry). */
    private Attempt live;
    private Attempt committed;
    private int attempts;
    private boolean halfClosed;
    private boolean cancelled;
    /**
     * The application's listener has been (or is about to be) closed; not set when the attempt the
     * call passes through to closes, after which nothing reads it.
     */
    private boolean finished;
    /**
     * Created on first use: by a failed attempt, a second request message, a buffer limit, a cancel
     * during a replay, a compression setting.
     */
    private RetryState state;

    /** The part of the call's state that a call succeeding at once never needs (guarded by the call). */
    private static final class RetryState {
        /** Why the call was committed when it was not by a response (null: by a response). */
        SuppressionReason commitReason;
        /** A buffer limit was passed while no attempt was live: the next attempt is committed at once. */
        boolean bufferExceeded;
        Boolean messageCompression;
        /** {@link #messageCompression} changed while the live attempt was being drained: its drainer applies it. */
        boolean compressionForDrain;
        RetryScheduler.Timer timer;
        long timerStartNanos;
        Context.CancellationListener contextListener;
        int retries;
        int backoffStep;
        long retryDelayNanos;
        /** The delay of the retry scheduled last. */
        long scheduledDelayNanos;
        /** Decides instead of the policy (a method without a policy of its own); null otherwise. */
        RetryDecider decider;
        /** The decider's state for this call (set at start). */
        RetryDecider.Call decisions;
        /** The decider's attempts, capped (when there is a decider). */
        int deciderMaxAttempts;
        /** The request messages after the first (null until there is a second). */
        Object[] laterMessages;
        /** Why the live attempt, cancelled after it failed while being started, ends the call. */
        Status startFailure;
        /** An attempt whose cancellation was handed to the thread draining it, with its message and cause. */
        Object cancelRequested;
        String cancelMessage;
        Throwable cancelCause;
    }

    /** The {@code grpc-previous-rpc-attempts} value for {@code prev} earlier attempts (no allocation up to 10). */
    static String previousAttemptsValue(int prev) {
        return prev < PREVIOUS_VALUES.length ? PREVIOUS_VALUES[prev] : Integer.toString(prev);
    }

    RetryingCall(RetryingClientInterceptor engine, MethodDescriptor<ReqT, RespT> method, CallOptions callOptions,
            Channel next, RetryPolicy policy, CallTarget target) {
        this(engine, method, callOptions, next, policy, null, target);
    }

    /** A call retried by {@code policy}, or, when {@code policy} is null, by {@code decider}. */
    RetryingCall(RetryingClientInterceptor engine, MethodDescriptor<ReqT, RespT> method, CallOptions callOptions,
            Channel next, RetryPolicy policy, RetryDecider decider, CallTarget target) {
        this.engine = engine;
        this.method = method;
        this.callOptions = callOptions;
        this.next = next;
        this.policy = policy;
        this.target = target;
        this.context = Context.current();
        if (policy == null) {
            RetryState s = state();
            s.decider = decider;
            s.deciderMaxAttempts = Math.max(1, Math.min(decider.maxAttempts(), engine.maxAttemptsCap));
        }
    }

    /** Attempts in all: the policy's, or the decider's within the channel's cap (fixed when the call is made). */
    private int maxAttempts() {
        return policy != null ? policy.maxAttempts() : state.deciderMaxAttempts;
    }

    /** The decider's state for this call, or null (under lock). */
    private RetryDecider.Call decisionsLocked() {
        RetryState s = state;
        return s == null ? null : s.decisions;
    }

    /** The call's state beyond the success path, created on first use (under lock). */
    private RetryState state() {
        RetryState s = state;
        if (s == null) {
            s = new RetryState();
            state = s;
        }
        return s;
    }

    /** Where timer-triggered work and a close without a live attempt run. */
    private Executor executor() {
        Executor e = callOptions.getExecutor();
        return e != null ? e : engine.scheduler.workExecutor();
    }

    /** The effective deadline: the earlier of the call's and the Context's (both fixed for the call). */
    private Deadline deadline() {
        return CallSupport.earlier(callOptions.getDeadline(), context.getDeadline());
    }

    private boolean bufferExceededLocked() {
        RetryState s = state;
        return s != null && s.bufferExceeded;
    }

    // ------------------------------------------------------------------ application side

    @Override
    public void start(Listener<RespT> responseListener, Metadata startHeaders) {
        CallSupport.checkStartArguments(responseListener, startHeaders);
        RetryDecider.Call d = policy != null ? null : state.decider.newCall(target);
        startAttempt(AttemptKind.INITIAL, responseListener, startHeaders, d);
    }

    @Override
    void requestUncommitted(int numMessages) {
        Attempt p;
        if (numMessages < 0) {
            throw new IllegalArgumentException("numMessages must be >= 0");
        }
        Attempt forward = null;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                if (finished || cancelled) {
                    return;
                }
                demand += numMessages;
                Attempt a = live;
                if (a != null && a.drained) {
                    forward = a;
                    a.sentDemand += numMessages;
                }
            }
        }
        if (p != null) {
            p.call.request(numMessages);
        } else if (forward != null) {
            forward.call.request(numMessages);
        }
    }

    @Override
    void sendMessageUncommitted(ReqT message) {
        long size = MessageSizes.sizeOf(method.getRequestMarshaller(), message);
        Attempt forward = null;
        Attempt newlyCommitted = null;
        synchronized (this) {
            if (finished || cancelled) {
                return;
            }
            if (passThrough == null && halfClosed) {
                throw new IllegalStateException("call was half-closed");
            }
            if (passThrough == null && committed == null && !bufferExceededLocked() && !tryHoldLocked(size)) {
                Attempt a = live;
                if (a != null) {
                    commitTo(a, SuppressionReason.BUFFER_LIMIT);
                    newlyCommitted = a;
                } else {
                    state().bufferExceeded = true; // the next attempt is the last one
                }
            }
            Attempt p = passThrough;
            forward = p != null ? p : append(message);
        }
        if (newlyCommitted != null) {
            engine.events.committed(target, newlyCommitted.number);
        }
        if (forward != null) {
            forward.call.sendMessage(message);
        }
    }

    /**
     * Holds {@code size} more request bytes for replay: {@code true} when they fit under the per-RPC
     * limit and the channel's pool (now reserved), {@code false} (nothing reserved) otherwise. Under lock.
     */
    private boolean tryHoldLocked(long size) {
        if (heldBytes + size > engine.perRpcBufferLimit || !engine.bufferPool.tryReserve(size)) {
            return false;
        }
        heldBytes += size;
        return true;
    }

    /** Appends to the replay record; returns the live attempt when it is drained (send to it directly). Under lock. */
    private Attempt append(ReqT message) {
        int n = buffered;
        if (n == 0) {
            firstMessage = message;
        } else {
            RetryState s = state();
            Object[] later = s.laterMessages;
            if (later == null) {
                later = new Object[4];
                s.laterMessages = later;
            } else if (n - 1 == later.length) {
                later = Arrays.copyOf(later, later.length * 2);
                s.laterMessages = later;
            }
            later[n - 1] = message;
        }
        buffered = n + 1;
        Attempt a = live;
        if (a != null && a.drained) {
            a.sentMessages = buffered;
            return a;
        }
        return null;
    }

    @Override
    void halfCloseUncommitted() {
        Attempt p;
        Attempt forward = null;
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
                Attempt a = live;
                if (a != null && a.drained) {
                    a.sentHalfClose = true;
                    forward = a;
                }
            }
        }
        if (p != null) {
            p.call.halfClose();
        } else if (forward != null) {
            forward.call.halfClose();
        }
    }

    /** Cancels the call (application or Context): the live attempt is cancelled, a pending retry dropped. */
    @Override
    void cancelWith(Status status, String message, Throwable cause) {
        Attempt toCancel = null;
        Attempt p;
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
                Attempt a = live;
                if (a != null) {
                    if (a.drained) {
                        toCancel = a;
                    } else {
                        RetryState s = state();
                        s.cancelRequested = a;
                        s.cancelMessage = message;
                        s.cancelCause = cause;
                    }
                } else {
                    // waiting for a retry: no attempt will report, so the call ends here
                    cancelTimerLocked();
                    finished = true;
                    releaseBufferLocked();
                    closeNow = true;
                }
            }
        }
        if (p != null) {
            p.call.cancel(message, cause);
        } else if (toCancel != null) {
            toCancel.call.cancel(message, cause);
        } else if (closeNow) {
            Listener<RespT> l;
            int r;
            long delay;
            RetryDecider.Call d;
            int n;
            synchronized (this) {
                l = listener;
                r = retriesLocked();
                delay = retryDelayNanosLocked();
                d = decisionsLocked();
                n = attempts;
            }
            executor().execute(() -> {
                engine.events.callEnded(target, status.getCode(), r, 0, delay);
                decisionsClosed(d, status, n);
                l.onClose(status, new Metadata());
            });
        }
    }

    @Override
    boolean isReadyUncommitted() {
        Attempt p;
        Attempt a;
        synchronized (this) {
            p = passThrough;
            a = p != null ? p : live;
            if (a == null || !a.started || finished || cancelled) {
                return false;
            }
        }
        return a.call.isReady();
    }

    @Override
    void setMessageCompressionUncommitted(boolean enabled) {
        Attempt p;
        Attempt forward = null;
        synchronized (this) {
            p = passThrough;
            if (p != null) {
                forward = p; // the call passes through now: its state no longer changes
            } else {
                RetryState s = state();
                s.messageCompression = enabled;
                Attempt a = live;
                if (a != null && a.drained) {
                    forward = a;
                } else if (a != null) {
                    s.compressionForDrain = true;
                }
            }
        }
        if (forward != null) {
            forward.call.setMessageCompression(enabled);
        }
    }

    @Override
    Attributes getAttributesUncommitted() {
        Attempt a;
        synchronized (this) {
            a = committed != null ? committed : live;
            if (a == null || !a.started) {
                return Attributes.EMPTY;
            }
        }
        return a.call.getAttributes();
    }

    @Override
    public String toString() {
        return "RetryingCall[" + target.fullMethodName() + "]";
    }

    // ------------------------------------------------------------------ attempts

    private void startAttempt(AttemptKind kind) {
        startAttempt(kind, null, null, null);
    }

    /**
     * Starts attempt {@code kind}; the first one also takes the application's {@link #start}
     * arguments, in the same locked section (one lock round trip fewer on every call).
     */
    private void startAttempt(AttemptKind kind, Listener<RespT> startListener, Metadata startHeaders,
            RetryDecider.Call decisions) {
        Attempt a;
        CallOptions options = callOptions;
        Metadata attemptHeaders = new Metadata();
        boolean commitNow = false;
        Boolean compression;
        synchronized (this) {
            if (startListener != null) {
                if (listener != null) {
                    throw new IllegalStateException("Already started");
                }
                if (cancelled) {
                    throw new IllegalStateException("call was cancelled");
                }
                listener = startListener;
                if (decisions != null) {
                    state.decisions = decisions;
                }
                CallSupport.discardAttemptHeader(startHeaders); // the call owns these headers now
                headers = startHeaders;
            } else if (finished || cancelled) {
                return;
            }
            int number = ++attempts;
            if (kind == AttemptKind.RETRY) {
                state().retries++;
            }
            RetryState s = state;
            a = new Attempt(number);
            live = a;
            if (s != null && s.bufferExceeded && committed == null) {
                commitTo(a, SuppressionReason.BUFFER_LIMIT);
                commitNow = true;
            }
            compression = s == null ? null : s.messageCompression;
            attemptHeaders.merge(headers); // stripped of any attempt header of the application's in start()
        }
        if (startListener != null) {
            CallSupport.callStarted(engine, target);
        }
        CallSupport.putAttemptHeader(attemptHeaders, a.number);
        Duration perAttempt = policy == null ? null : policy.perAttemptReceiveTimeout();
        if (perAttempt != null) {
            long timeoutNanos = Nanos.saturated(perAttempt);
            Deadline d = deadline();
            if (d == null || d.timeRemaining(TimeUnit.NANOSECONDS) > timeoutNanos) {
                a.perAttemptDeadline = Deadline.after(timeoutNanos, TimeUnit.NANOSECONDS); // clamped by Deadline
                options = options.withDeadline(a.perAttemptDeadline);
            }
        }
        RetryEventListener events = engine.events;
        events.attemptStarted(target, kind, a.number);
        if (commitNow) {
            events.committed(target, a.number);
        }
        Context previous = context == Context.current() ? null : context.attach();
        try {
            a.call = next.newCall(method, options);
            CallSupport.startAttemptCall(a.call, a, attemptHeaders, compression);
            drain(a);
        } finally {
            if (previous != null) {
                context.detach(previous);
            }
        }
    }

    /** Replays the record into {@code a} until it has caught up; then {@code a} is drained. */
    @SuppressWarnings("unchecked")
    private void drain(Attempt a) {
        while (true) {
            Object first = null;
            Object[] later = null;
            int from = 0;
            int to = 0;
            long moreDemand = 0;
            boolean sendHalfClose = false;
            boolean cancelNow = false;
            String cancelMessage = null;
            Throwable cancelCause = null;
            Boolean compression = null;
            synchronized (this) {
                a.started = true;
                if (a.closed) {
                    return;
                }
                RetryState s = state;
                if (s != null && s.cancelRequested == a) {
                    s.cancelRequested = null;
                    cancelNow = true;
                    cancelMessage = s.cancelMessage;
                    cancelCause = s.cancelCause;
                } else if (s != null && s.compressionForDrain) {
                    // set by the application while this attempt was catching up: applied before the next sends
                    s.compressionForDrain = false;
                    compression = s.messageCompression;
                } else if (a.sentMessages == buffered && a.sentHalfClose == halfClosed && a.sentDemand == demand) {
                    a.drained = true;
                    if (committed == a) {
                        enablePassThroughLocked(a);
                    }
                    return;
                } else {
                    first = firstMessage;
                    later = s == null ? null : s.laterMessages;
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
                a.call.cancel(cancelMessage, cancelCause);
                return;
            }
            if (compression != null) {
                a.call.setMessageCompression(compression);
                continue;
            }
            CallSupport.request(a.call, moreDemand);
            for (int i = from; i < to; i++) {
                a.call.sendMessage((ReqT) (i == 0 ? first : later[i - 1]));
            }
            if (sendHalfClose) {
                a.call.halfClose();
            }
        }
    }

    /** A retry's timer fired: runs on the call's executor. */
    private void retryNow() {
        synchronized (this) {
            RetryState s = state();
            s.timer = null;
            s.retryDelayNanos += System.nanoTime() - s.timerStartNanos;
            removeContextListenerLocked();
            if (finished || cancelled) {
                return;
            }
        }
        try {
            startAttempt(AttemptKind.RETRY);
        } catch (RuntimeException e) {
            failFromRetryThread(Status.INTERNAL.withDescription("could not start a retry attempt").withCause(e));
        }
    }

    /**
     * Ends the call from the retry thread with {@code status}. When the attempt being started got
     * as far as a started channel call, that call may still deliver callbacks (response headers may
     * already have committed the call to it): it is cancelled, and its own close, which comes after
     * those callbacks on its executor, ends the call with {@code status}. Otherwise the call ends here.
     */
    private void failFromRetryThread(Status status) {
        Listener<RespT> l;
        Attempt handOff = null;
        int r = 0;
        long delay = 0;
        RetryDecider.Call d = null;
        int n = 0;
        synchronized (this) {
            if (finished) {
                return;
            }
            Attempt a = live;
            if (a != null && a.started && !a.closed) {
                state().startFailure = status;
                handOff = a;
                l = null;
            } else {
                d = decisionsLocked();
                n = attempts;
                finished = true;
                if (a != null) {
                    a.closed = true;
                }
                live = null;
                releaseBufferLocked();
                l = listener;
                r = retriesLocked();
                delay = retryDelayNanosLocked();
            }
        }
        if (handOff != null) {
            handOff.call.cancel(status.getDescription(), status.getCause());
            return;
        }
        engine.events.callEnded(target, status.getCode(), r, 0, delay);
        decisionsClosed(d, status, n);
        l.onClose(status, new Metadata());
    }

    private static void decisionsClosed(RetryDecider.Call d, Status status, int attempts) {
        if (d != null) {
            try {
                d.onClose(status, attempts);
            } catch (RuntimeException e) {
                // a decider must not throw; the call ends regardless
            }
        }
    }

    private int retriesLocked() {
        RetryState s = state;
        return s == null ? 0 : s.retries;
    }

    private long retryDelayNanosLocked() {
        RetryState s = state;
        return s == null ? 0 : s.retryDelayNanos;
    }

    // ------------------------------------------------------------------ commit and buffer (under lock)

    private void commitTo(Attempt a, SuppressionReason reason) {
        committed = a;
        RetryState s = state;
        if (reason != SuppressionReason.COMMITTED) {
            s = state();
            s.commitReason = reason;
        }
        if (s != null) {
            s.bufferExceeded = false;
        }
        if (a.drained) {
            enablePassThroughLocked(a);
        }
    }

    private void enablePassThroughLocked(Attempt a) {
        releaseBufferLocked();
        passThrough = a;
    }

    private void releaseBufferLocked() {
        long held = heldBytes;
        if (held != 0) {
            heldBytes = 0;
            engine.bufferPool.release(held);
        }
        firstMessage = null;
        RetryState s = state;
        if (s != null) {
            s.laterMessages = null;
        }
        buffered = 0;
    }

    private void cancelTimerLocked() {
        RetryState s = state;
        if (s == null) {
            return;
        }
        RetryScheduler.Timer t = s.timer;
        if (t != null) {
            s.timer = null;
            t.cancel();
            s.retryDelayNanos += System.nanoTime() - s.timerStartNanos;
        }
        removeContextListenerLocked();
    }

    private void removeContextListenerLocked() {
        RetryState s = state;
        Context.CancellationListener cl = s == null ? null : s.contextListener;
        if (cl != null) {
            s.contextListener = null;
            context.removeListener(cl);
        }
    }

    // ------------------------------------------------------------------ retry decision

    /** What to do after an attempt closed. */
    private static final int RETRY = 0;
    private static final int CLOSE = 1;
    private static final int NOTHING = 2;

    /**
     * Decides under lock what follows the close of uncommitted attempt {@code a}: schedules the
     * retry and returns {@link #RETRY}, or sets {@code a.reason} and returns {@link #CLOSE}.
     */
    private int decideLocked(Attempt a, Status status, Metadata trailers) {
        Status.Code code = status.getCode();
        if (code == Status.Code.OK) {
            return CLOSE;
        }
        if (context.isCancelled()) {
            return CLOSE;
        }
        long pushback = Pushback.parse(trailers);
        RetryThrottle throttle = engine.throttle;
        if (pushback == Pushback.STOP) {
            if (throttle != null) {
                throttle.onQualifiedFailureThenCheckAllowed();
            }
            a.reason = SuppressionReason.PUSHBACK;
            return CLOSE;
        }
        long granted = 0;
        if (policy == null) {
            granted = askDecider(a, status, trailers);
            if (granted == DECIDER_NOT_RETRYABLE) {
                a.reason = SuppressionReason.NON_RETRYABLE_STATUS;
                return CLOSE;
            }
        } else {
            boolean perAttemptTimeout = code == Status.Code.DEADLINE_EXCEEDED && a.perAttemptDeadline != null
                    && a.perAttemptDeadline.isExpired();
            if (!perAttemptTimeout && !policy.isRetryable(code)) {
                a.reason = SuppressionReason.NON_RETRYABLE_STATUS;
                return CLOSE;
            }
        }
        boolean throttleAllows = throttle == null || throttle.onQualifiedFailureThenCheckAllowed();
        if (attempts >= maxAttempts() || granted < 0) {
            a.reason = SuppressionReason.MAX_ATTEMPTS;
            return CLOSE;
        }
        if (!throttleAllows) {
            a.reason = SuppressionReason.THROTTLED;
            return CLOSE;
        }
        RetryState s = state();
        int backoffStep = s.backoffStep;
        long delayNanos;
        int nextStep;
        if (pushback >= 0) {
            delayNanos = TimeUnit.MILLISECONDS.toNanos(pushback); // at most 2^31-1 ms: fits
            nextStep = 0;
        } else if (policy == null) {
            delayNanos = granted;
            nextStep = 0;
        } else {
            delayNanos = backoffNanos(backoffStep);
            nextStep = backoffStep + 1;
        }
        Deadline d = deadline();
        if (d != null && d.timeRemaining(TimeUnit.NANOSECONDS) <= delayNanos) {
            a.reason = SuppressionReason.DEADLINE;
            return CLOSE;
        }
        RetryBudget budget = engine.budget;
        if (budget != null && !budget.tryAcquireRetry()) {
            a.reason = SuppressionReason.BUDGET;
            return CLOSE;
        }
        s.backoffStep = nextStep;
        live = null;
        s.scheduledDelayNanos = delayNanos;
        s.timerStartNanos = System.nanoTime();
        Executor executor = executor();
        s.timer = engine.scheduler.schedule(this::retryNow, executor, delayNanos);
        if (context != Context.ROOT) {
            // a no-op for contexts that cannot be cancelled
            Context.CancellationListener cl = c -> cancelWith(Contexts.statusFromCancelled(c), null, null);
            s.contextListener = cl;
            context.addListener(cl, executor);
        }
        return RETRY;
    }

    /** {@link #askDecider}'s answers besides a delay (&ge; 0). */
    private static final long DECIDER_NOT_RETRYABLE = -1L;
    private static final long DECIDER_EXHAUSTED = -2L;

    /** The decider's answer for failed attempt {@code a} (under lock): a delay, DECIDER_NOT_RETRYABLE or DECIDER_EXHAUSTED. */
    private long askDecider(Attempt a, Status status, Metadata trailers) {
        RetryDecider.Call d = decisionsLocked();
        if (d == null) {
            return DECIDER_NOT_RETRYABLE;
        }
        RetryDecider.Decision answer;
        try {
            answer = d.onFailure(a.number, status, trailers);
        } catch (RuntimeException e) {
            return DECIDER_NOT_RETRYABLE;
        }
        if (answer instanceof RetryDecider.Decision.RetryAfter r) {
            return r.delayNanos();
        }
        return answer == RetryDecider.Decision.Stop.EXHAUSTED ? DECIDER_EXHAUSTED : DECIDER_NOT_RETRYABLE;
    }

    /** Whether the method's policy (or decider) would retry {@code status}; no decision taken, no state read. */
    private boolean isRetryable(Status status, Metadata trailers) {
        if (policy != null) {
            return policy.isRetryable(status.getCode());
        }
        try {
            return state.decider.isRetryable(status, trailers);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * {@code min(initial × multiplier^step, max) × U(0.8, 1.2)} in nanoseconds, saturated: durations
     * past 2^63-1 ns count as 2^63-1 ns, a product past that is {@link Long#MAX_VALUE} (the call's
     * deadline still ends the call at the decision), and a multiplier that is not a number gives max.
     */
    private long backoffNanos(int step) {
        double initial = Nanos.saturated(policy.initialBackoff());
        double max = Nanos.saturated(policy.maxBackoff());
        double grown = initial * Math.pow(policy.backoffMultiplier(), step);
        double base = grown < max ? grown : max;
        return (long) (base * ThreadLocalRandom.current().nextDouble(0.8, 1.2));
    }

    // ------------------------------------------------------------------ one attempt

    final class Attempt extends EngineAttempt<ReqT, RespT> {
        final int number;
        Deadline perAttemptDeadline;
        // guarded by the call's lock
        boolean started;
        boolean drained;
        boolean closed;
        int sentMessages;
        long sentDemand;
        boolean sentHalfClose;
        SuppressionReason reason;

        Attempt(int number) {
            this.number = number;
        }

        AttemptKind kind() {
            return number == 1 ? AttemptKind.INITIAL : AttemptKind.RETRY;
        }

        @Override
        public void onHeaders(Metadata responseHeaders) {
            Listener<RespT> l = passThrough == this ? listener : commitForResponse();
            if (l != null) {
                l.onHeaders(responseHeaders);
            }
        }

        @Override
        public void onMessage(RespT message) {
            Listener<RespT> l = passThrough == this ? listener : commitForResponse();
            if (l != null) {
                l.onMessage(message);
            }
        }

        /**
         * A response arrived: commits the call to this attempt if nothing else did; the application's
         * listener when this attempt is the committed one (deliver to it), null otherwise.
         */
        private Listener<RespT> commitForResponse() {
            boolean deliver;
            boolean newly = false;
            Listener<RespT> l;
            synchronized (RetryingCall.this) {
                if (committed == null && !closed) {
                    commitTo(this, SuppressionReason.COMMITTED);
                    newly = true;
                }
                deliver = committed == this;
                l = listener;
            }
            if (newly) {
                engine.events.committed(target, number);
            }
            return deliver ? l : null;
        }

        @Override
        public void onReady() {
            if (passThrough == this) {
                listener.onReady();
                return;
            }
            Listener<RespT> l;
            synchronized (RetryingCall.this) {
                if (live != this || finished || closed) {
                    return;
                }
                l = listener;
            }
            l.onReady();
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            if (passThrough == this) {
                closePassedThrough(status, trailers);
                return;
            }
            int outcome;
            Listener<RespT> l;
            int r;
            long delay;
            long scheduledDelay = 0;
            SuppressionReason suppressed = null;
            boolean scheduled;
            RetryDecider.Call d;
            int n;
            synchronized (RetryingCall.this) {
                closed = true;
                l = listener;
                RetryState st = state;
                Status startFailure = st == null || live != this ? null : st.startFailure;
                if (finished) {
                    outcome = NOTHING;
                } else if (startFailure != null) {
                    // this attempt failed while it was being started and was cancelled: its close ends the call
                    outcome = CLOSE;
                    status = startFailure;
                    trailers = new Metadata();
                } else if (committed == this) {
                    outcome = CLOSE;
                    if (status.getCode() != Status.Code.OK && attempts < maxAttempts()
                            && isRetryable(status, trailers)) {
                        RetryState s = state;
                        suppressed = s == null || s.commitReason == null ? SuppressionReason.COMMITTED : s.commitReason;
                    }
                } else if (committed != null) {
                    outcome = NOTHING;
                } else if (cancelled) {
                    outcome = CLOSE;
                } else {
                    outcome = decideLocked(this, status, trailers);
                    suppressed = reason;
                }
                if (outcome == CLOSE) {
                    finished = true;
                    if (live == this) {
                        live = null;
                    }
                    releaseBufferLocked();
                }
                r = retriesLocked();
                delay = retryDelayNanosLocked();
                scheduled = outcome == RETRY;
                if (scheduled) {
                    scheduledDelay = state.scheduledDelayNanos;
                }
                d = decisionsLocked();
                n = attempts;
            }
            Status.Code code = status.getCode();
            RetryEventListener events = engine.events;
            events.attemptEnded(target, kind(), number, code);
            if (scheduled) {
                events.retryScheduled(target, number + 1, scheduledDelay);
                return;
            }
            if (outcome != CLOSE) {
                return;
            }
            if (suppressed != null) {
                events.retrySuppressed(target, suppressed, code);
            }
            CallSupport.succeeded(engine, code == Status.Code.OK);
            events.callEnded(target, code, r, 0, delay);
            decisionsClosed(d, status, n);
            l.onClose(status, trailers);
        }

        /**
         * The close of the attempt the call passes through to: no lock. Everything read here was
         * written before {@link #passThrough} was set (a volatile write) and nothing changes it
         * afterwards: no other attempt can start, every method of the call goes straight to this
         * attempt, and the buffer was released when the pass-through began.
         */
        private void closePassedThrough(Status status, Metadata trailers) {
            Status.Code code = status.getCode();
            RetryState s = state;
            SuppressionReason suppressed = null;
            if (code != Status.Code.OK && attempts < maxAttempts() && isRetryable(status, trailers)) {
                suppressed = s == null || s.commitReason == null ? SuppressionReason.COMMITTED : s.commitReason;
            }
            RetryEventListener events = engine.events;
            events.attemptEnded(target, kind(), number, code);
            if (suppressed != null) {
                events.retrySuppressed(target, suppressed, code);
            }
            CallSupport.succeeded(engine, code == Status.Code.OK);
            events.callEnded(target, code, s == null ? 0 : s.retries, 0, s == null ? 0 : s.retryDelayNanos);
            decisionsClosed(s == null ? null : s.decisions, status, attempts);
            listener.onClose(status, trailers);
        }

        @Override
        public String toString() {
            return "Attempt[" + number + " " + kind() + "]";
        }
    }
}
