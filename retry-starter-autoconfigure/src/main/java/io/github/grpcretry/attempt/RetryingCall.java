package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.commit.CallBuffer;
import io.github.grpcretry.commit.MessageSizes;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.pushback.Pushback;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One logical call of the interceptor engine: a small state machine over its attempts.
 *
 * <h2>State and threads</h2>
 * All decisions are taken under one lock per call ({@code synchronized (this)}); calls into an
 * attempt and into the application's listener happen outside it. While the call is uncommitted it
 * records what the application did (start headers, response demand, request messages, half-close)
 * and forwards it to the live attempt. A new attempt is "drained" by the thread that starts it:
 * that thread replays the record in order (demand, messages, half-close) until it has caught up,
 * and only then is the attempt marked drained, after which the application's own thread forwards
 * directly. So an attempt's send-side methods are only ever used by one thread at a time and
 * messages keep their order. A cancellation that arrives while an attempt is still being drained
 * is handed to the draining thread.
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
 * set: from then on every method is a volatile read plus a direct call.
 */
final class RetryingCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

    static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    private static final Object[] NO_MESSAGES = new Object[0];
    private static final String[] PREVIOUS_VALUES = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"};

    private final RetryingClientInterceptor engine;
    private final MethodDescriptor<ReqT, RespT> method;
    private final CallOptions callOptions;
    private final Channel next;
    /** The method's retry policy; null when {@link #decider} decides instead. */
    private final RetryPolicy policy;
    /** Decides instead of {@link #policy} (a method without a policy of its own); null otherwise. */
    private final RetryDecider decider;
    private final CallTarget target;
    private final Context context;
    private final Executor executor;
    private final RetryEventListener events;
    private final int maxAttempts;

    /** The committed, drained attempt: everything goes straight to it. */
    private volatile Attempt passThrough;

    // ---- guarded by this ----
    private Listener<RespT> listener;
    /** The decider's state for this call (set at start when {@link #decider} is set). */
    private RetryDecider.Call decisions;
    private Metadata headers;
    private Deadline deadline;
    private CallBuffer bytes;
    private Object[] buffer = NO_MESSAGES;
    private int buffered;
    private boolean halfClosed;
    private long demand;
    private Boolean messageCompression;
    /** The attempt the application's operations go to (null while waiting for a retry). */
    private Attempt live;
    private Attempt committed;
    private SuppressionReason commitReason;
    /** A buffer limit was passed while no attempt was live: the next attempt is committed at once. */
    private boolean bufferExceeded;
    private RetryScheduler.Timer timer;
    private long timerStartNanos;
    private Context.CancellationListener contextListener;
    private int attempts;
    private int retries;
    private int backoffStep;
    private long retryDelayNanos;
    private boolean cancelled;
    /** The application's listener has been (or is about to be) closed. */
    private boolean finished;

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
        this.decider = policy == null ? decider : null;
        this.target = target;
        this.context = Context.current();
        Executor e = callOptions.getExecutor();
        this.executor = e != null ? e : engine.scheduler.workExecutor();
        this.events = engine.events;
        this.maxAttempts = policy != null ? policy.maxAttempts()
                : Math.max(1, Math.min(decider.maxAttempts(), engine.maxAttemptsCap));
    }

    // ------------------------------------------------------------------ application side

    @Override
    public void start(Listener<RespT> responseListener, Metadata startHeaders) {
        if (responseListener == null || startHeaders == null) {
            throw new NullPointerException("listener and headers must not be null");
        }
        RetryDecider.Call d = decider == null ? null : decider.newCall(target);
        synchronized (this) {
            if (listener != null) {
                throw new IllegalStateException("Already started");
            }
            if (cancelled) {
                throw new IllegalStateException("call was cancelled");
            }
            listener = responseListener;
            decisions = d;
            headers = startHeaders;
            deadline = earlier(callOptions.getDeadline(), context.getDeadline());
            bytes = new CallBuffer(engine.bufferPool, engine.perRpcBufferLimit);
        }
        RetryBudget budget = engine.budget;
        if (budget != null) {
            budget.onCall();
        }
        events.callStarted(target);
        startAttempt(AttemptKind.INITIAL);
    }

    @Override
    public void request(int numMessages) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.request(numMessages);
            return;
        }
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
    public void sendMessage(ReqT message) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.sendMessage(message);
            return;
        }
        sendMessageUncommitted(message);
    }

    private void sendMessageUncommitted(ReqT message) {
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
            if (passThrough == null && committed == null && !bufferExceeded && !bytes.tryAdd(size)) {
                Attempt a = live;
                if (a != null) {
                    commitTo(a, SuppressionReason.BUFFER_LIMIT);
                    newlyCommitted = a;
                } else {
                    bufferExceeded = true; // the next attempt is the last one
                }
            }
            Attempt p = passThrough;
            forward = p != null ? p : append(message);
        }
        if (newlyCommitted != null) {
            events.committed(target, newlyCommitted.number);
        }
        if (forward != null) {
            forward.call.sendMessage(message);
        }
    }

    /** Appends to the replay record; returns the live attempt when it is drained (send to it directly). Under lock. */
    private Attempt append(ReqT message) {
        if (buffered == buffer.length) {
            buffer = Arrays.copyOf(buffer, Math.max(4, buffered * 2));
        }
        buffer[buffered++] = message;
        Attempt a = live;
        if (a != null && a.drained) {
            a.sentMessages = buffered;
            return a;
        }
        return null;
    }

    @Override
    public void halfClose() {
        Attempt p = passThrough;
        if (p != null) {
            p.call.halfClose();
            return;
        }
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

    @Override
    public void cancel(String message, Throwable cause) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.cancel(message, cause);
            return;
        }
        Status status = Status.CANCELLED.withDescription(message != null ? message : "Call cancelled without message");
        if (cause != null) {
            status = status.withCause(cause);
        }
        cancelWith(status, message, cause);
    }

    /** Cancels the call (application or Context): the live attempt is cancelled, a pending retry dropped. */
    private void cancelWith(Status status, String message, Throwable cause) {
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
                        a.cancelRequested = true;
                        a.cancelMessage = message;
                        a.cancelCause = cause;
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
                r = retries;
                delay = retryDelayNanos;
                d = decisions;
                n = attempts;
            }
            executor.execute(() -> {
                events.callEnded(target, status.getCode(), r, 0, delay);
                decisionsClosed(d, status, n);
                l.onClose(status, new Metadata());
            });
        }
    }

    @Override
    public boolean isReady() {
        Attempt p = passThrough;
        if (p != null) {
            return p.call.isReady();
        }
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
    public void setMessageCompression(boolean enabled) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.setMessageCompression(enabled);
            return;
        }
        Attempt forward = null;
        synchronized (this) {
            messageCompression = enabled;
            Attempt a = live;
            if (a != null && a.drained) {
                forward = a;
            }
        }
        if (forward != null) {
            forward.call.setMessageCompression(enabled);
        }
    }

    @Override
    public Attributes getAttributes() {
        Attempt p = passThrough;
        if (p != null) {
            return p.call.getAttributes();
        }
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
        Attempt a;
        CallOptions options = callOptions;
        Metadata attemptHeaders = new Metadata();
        boolean commitNow = false;
        synchronized (this) {
            if (finished || cancelled) {
                return;
            }
            int number = ++attempts;
            if (kind == AttemptKind.RETRY) {
                retries++;
            }
            a = new Attempt(number, kind);
            live = a;
            if (bufferExceeded && committed == null) {
                commitTo(a, SuppressionReason.BUFFER_LIMIT);
                commitNow = true;
            }
            attemptHeaders.merge(headers);
        }
        if (a.number > 1) {
            attemptHeaders.discardAll(PREVIOUS_ATTEMPTS);
            int prev = a.number - 1;
            attemptHeaders.put(PREVIOUS_ATTEMPTS, previousAttemptsValue(prev));
        }
        java.time.Duration perAttempt = policy == null ? null : policy.perAttemptReceiveTimeout();
        if (perAttempt != null) {
            long timeoutNanos = perAttempt.toNanos();
            Deadline d = deadline;
            if (d == null || d.timeRemaining(TimeUnit.NANOSECONDS) > timeoutNanos) {
                a.perAttemptDeadline = Deadline.after(timeoutNanos, TimeUnit.NANOSECONDS);
                options = options.withDeadline(a.perAttemptDeadline);
            }
        }
        events.attemptStarted(target, kind, a.number);
        if (commitNow) {
            events.committed(target, a.number);
        }
        Context previous = context == Context.current() ? null : context.attach();
        try {
            a.call = next.newCall(method, options);
            Boolean compression;
            synchronized (this) {
                compression = messageCompression;
            }
            a.call.start(a, attemptHeaders);
            if (compression != null) {
                a.call.setMessageCompression(compression);
            }
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
            Object[] messages = null;
            int from = 0;
            int to = 0;
            long moreDemand = 0;
            boolean sendHalfClose = false;
            boolean cancelNow = false;
            Attempt newlyPassThrough = null;
            synchronized (this) {
                a.started = true;
                if (a.closed) {
                    return;
                }
                if (a.cancelRequested) {
                    a.cancelRequested = false;
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
                a.call.cancel(a.cancelMessage, a.cancelCause);
                return;
            }
            while (moreDemand > 0) {
                int n = (int) Math.min(moreDemand, Integer.MAX_VALUE);
                a.call.request(n);
                moreDemand -= n;
            }
            for (int i = from; i < to; i++) {
                a.call.sendMessage((ReqT) messages[i]);
            }
            if (sendHalfClose) {
                a.call.halfClose();
            }
        }
    }

    /** A retry's timer fired: runs on the call's executor. */
    private void retryNow() {
        synchronized (this) {
            timer = null;
            retryDelayNanos += System.nanoTime() - timerStartNanos;
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

    private void failFromRetryThread(Status status) {
        Listener<RespT> l;
        Attempt a;
        int r;
        long delay;
        RetryDecider.Call d;
        int n;
        synchronized (this) {
            if (finished) {
                return;
            }
            d = decisions;
            n = attempts;
            finished = true;
            a = live;
            if (a != null) {
                a.closed = true;
            }
            live = null;
            releaseBufferLocked();
            l = listener;
            r = retries;
            delay = retryDelayNanos;
        }
        events.callEnded(target, status.getCode(), r, 0, delay);
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

    // ------------------------------------------------------------------ commit and buffer (under lock)

    private void commitTo(Attempt a, SuppressionReason reason) {
        committed = a;
        commitReason = reason;
        bufferExceeded = false;
        if (a.drained) {
            enablePassThroughLocked(a);
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

    private void cancelTimerLocked() {
        RetryScheduler.Timer t = timer;
        if (t != null) {
            timer = null;
            t.cancel();
            retryDelayNanos += System.nanoTime() - timerStartNanos;
        }
        removeContextListenerLocked();
    }

    private void removeContextListenerLocked() {
        Context.CancellationListener cl = contextListener;
        if (cl != null) {
            contextListener = null;
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
            if (granted == RetryDecider.NOT_RETRYABLE) {
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
        if (attempts >= maxAttempts || granted < 0) {
            a.reason = SuppressionReason.MAX_ATTEMPTS;
            return CLOSE;
        }
        if (!throttleAllows) {
            a.reason = SuppressionReason.THROTTLED;
            return CLOSE;
        }
        long delayNanos;
        int nextStep;
        if (pushback >= 0) {
            delayNanos = TimeUnit.MILLISECONDS.toNanos(pushback);
            nextStep = 0;
        } else if (policy == null) {
            delayNanos = granted;
            nextStep = 0;
        } else {
            delayNanos = backoffNanos(backoffStep);
            nextStep = backoffStep + 1;
        }
        Deadline d = deadline;
        if (d != null && d.timeRemaining(TimeUnit.NANOSECONDS) <= delayNanos) {
            a.reason = SuppressionReason.DEADLINE;
            return CLOSE;
        }
        RetryBudget budget = engine.budget;
        if (budget != null && !budget.tryAcquireRetry()) {
            a.reason = SuppressionReason.BUDGET;
            return CLOSE;
        }
        backoffStep = nextStep;
        live = null;
        a.scheduledDelayNanos = delayNanos;
        timerStartNanos = System.nanoTime();
        timer = engine.scheduler.schedule(this::retryNow, executor, delayNanos);
        if (context != Context.ROOT) {
            // a no-op for contexts that cannot be cancelled
            Context.CancellationListener cl = c -> cancelWith(Contexts.statusFromCancelled(c), null, null);
            contextListener = cl;
            context.addListener(cl, executor);
        }
        return RETRY;
    }

    /** The decider's answer for failed attempt {@code a} (under lock): a delay, NOT_RETRYABLE or EXHAUSTED. */
    private long askDecider(Attempt a, Status status, Metadata trailers) {
        RetryDecider.Call d = decisions;
        if (d == null) {
            return RetryDecider.NOT_RETRYABLE;
        }
        long answer;
        try {
            answer = d.onFailure(a.number, status, trailers);
        } catch (RuntimeException e) {
            return RetryDecider.NOT_RETRYABLE;
        }
        return answer >= 0 || answer == RetryDecider.EXHAUSTED ? answer : RetryDecider.NOT_RETRYABLE;
    }

    /** Whether the method's policy (or decider) would retry {@code status}; no decision taken. */
    private boolean isRetryable(Status status, Metadata trailers) {
        if (policy != null) {
            return policy.isRetryable(status.getCode());
        }
        try {
            return decider.isRetryable(status, trailers);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** {@code min(initial × multiplier^step, max) × U(0.8, 1.2)} in nanoseconds. */
    private long backoffNanos(int step) {
        double initial = policy.initialBackoff().toNanos();
        double max = policy.maxBackoff().toNanos();
        double base = Math.min(initial * Math.pow(policy.backoffMultiplier(), step), max);
        return (long) (base * ThreadLocalRandom.current().nextDouble(0.8, 1.2));
    }

    // ------------------------------------------------------------------ one attempt

    final class Attempt extends Listener<RespT> {
        final int number;
        final AttemptKind kind;
        ClientCall<ReqT, RespT> call;
        Deadline perAttemptDeadline;
        // guarded by the call's lock
        boolean started;
        boolean drained;
        boolean closed;
        boolean cancelRequested;
        String cancelMessage;
        Throwable cancelCause;
        int sentMessages;
        long sentDemand;
        boolean sentHalfClose;
        SuppressionReason reason;
        long scheduledDelayNanos;

        Attempt(int number, AttemptKind kind) {
            this.number = number;
            this.kind = kind;
        }

        @Override
        public void onHeaders(Metadata responseHeaders) {
            if (passThrough == this) {
                listener.onHeaders(responseHeaders);
                return;
            }
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
                events.committed(target, number);
            }
            if (deliver) {
                l.onHeaders(responseHeaders);
            }
        }

        @Override
        public void onMessage(RespT message) {
            if (passThrough == this) {
                listener.onMessage(message);
                return;
            }
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
                events.committed(target, number);
            }
            if (deliver) {
                l.onMessage(message);
            }
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
            int outcome;
            Listener<RespT> l;
            int r;
            long delay;
            SuppressionReason suppressed = null;
            boolean scheduled;
            RetryDecider.Call d;
            int n;
            synchronized (RetryingCall.this) {
                closed = true;
                l = listener;
                if (committed == this) {
                    outcome = CLOSE;
                    if (status.getCode() != Status.Code.OK && attempts < maxAttempts
                            && isRetryable(status, trailers)) {
                        suppressed = commitReason;
                    }
                } else if (committed != null || finished) {
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
                r = retries;
                delay = RetryingCall.this.retryDelayNanos;
                scheduled = outcome == RETRY;
                d = decisions;
                n = attempts;
            }
            Status.Code code = status.getCode();
            events.attemptEnded(target, kind, number, code);
            if (scheduled) {
                events.retryScheduled(target, number + 1, scheduledDelayNanos);
                return;
            }
            if (outcome != CLOSE) {
                return;
            }
            if (suppressed != null) {
                events.retrySuppressed(target, suppressed, code);
            }
            if (code == Status.Code.OK) {
                RetryThrottle throttle = engine.throttle;
                if (throttle != null) {
                    throttle.onSuccess();
                }
            }
            events.callEnded(target, code, r, 0, delay);
            decisionsClosed(d, status, n);
            l.onClose(status, trailers);
        }

        @Override
        public String toString() {
            return "Attempt[" + number + " " + kind + "]";
        }
    }

    private static Deadline earlier(Deadline a, Deadline b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return a.timeRemaining(TimeUnit.NANOSECONDS) <= b.timeRemaining(TimeUnit.NANOSECONDS) ? a : b;
    }
}
