package io.github.grpcretry.attempt;

import io.github.grpcretry.commit.CallBuffer;
import io.github.grpcretry.commit.MessageSizes;
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
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * One logical call of the interceptor engine: the core that {@link RetryingCall} (one attempt at a
 * time) and {@link HedgingCall} (attempts in parallel) share. The strategies decide what follows a
 * failure ({@link Decision}); the core does everything else.
 *
 * <h2>State and threads</h2>
 * All state changes happen under one lock per call ({@code synchronized (this)}); calls into attempts
 * and into the application's listener happen outside it. While the call is uncommitted it keeps a
 * replay record of what the application did (response demand, request messages, half-close,
 * compression) and forwards each operation to the attempts that have caught up with it. A new attempt
 * is drained by the thread that starts it: that thread replays the record into it until it has caught
 * up, and only then is the attempt a target of the application's own operations, so an attempt's
 * send-side methods are used by one thread at a time and messages keep their order. An attempt is
 * cancelled by whichever thread may send to it at that moment: the draining thread, or (for parallel
 * attempts) the last application thread sending to it; otherwise at once.
 *
 * <h2>Commit</h2>
 * Response headers or a message commit the call to that attempt (unless the application cancelled);
 * so does a request passing a buffer limit (the attempt that has sent the most). The other attempts
 * are cancelled and no further attempt starts. Once the committed attempt has caught up, the record is
 * released; once no callback is being delivered either, {@link #passThrough} is set: from then on
 * every method is a volatile read plus a direct call, and the attempt's close reads the call's state
 * without the lock (nothing changes it any more).
 *
 * <h2>The application's listener</h2>
 * Callbacks of parallel attempts arrive on different threads: until the call passes through, each goes
 * through a small serializer (run inline when idle, queued otherwise), so the application sees one
 * serial, ordered call. Attempts that run one at a time need none: a new one starts only after the
 * previous one closed. The close comes as soon as the outcome is known; attempts cancelled at that
 * moment report their end a little later.
 *
 * <h2>Every attempt ends once</h2>
 * An attempt is closed exactly once, under the lock ({@link #closed}), or by the pass-through close:
 * by its own {@code onClose}, or, when its channel call never started, by {@link #startFailed}. Each
 * close reports {@code attemptEnded}; the one that decides the outcome ends the call ({@link #endCall}).
 *
 * <h2>Footprint</h2>
 * A call that succeeds at once allocates this object and one {@link Attempt} (and a copy of non-empty
 * start headers): the one request of a unary call is kept in a field, the bytes held for replay are
 * counted in a field, and whatever only a failure, a second message, a buffer limit, a cancellation or
 * a compression setting needs lives in an {@link Extra} created on first use.
 */
abstract class EngineCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

    final RetryingClientInterceptor engine;
    final RetryingClientInterceptor.MethodPlan plan;
    private final MethodDescriptor<ReqT, RespT> method;
    final CallOptions callOptions;
    private final Channel next;
    final Context context;

    /** The committed attempt once it has caught up and no callback is being delivered: every call goes straight to it. */
    volatile Attempt passThrough;

    // ---- guarded by this ----
    Listener<RespT> listener;
    /** The application's start headers without an attempt header of its own; null when empty. */
    private Metadata headers;
    /** The attempt started last; each links to the one before. */
    private Attempt newest;
    Attempt committed;
    private Extra extra;
    /** The replay record: the first request message (later ones in the extra), demand, half-close. */
    private Object firstMessage;
    private int buffered;
    /** Request bytes held for replay, counted against the per-RPC limit and reserved in the channel's pool. */
    private long heldBytes;
    private long demand;
    private boolean halfClosed;
    /** Attempts started, and of those not closed. */
    int attempts;
    int live;
    boolean cancelled;
    /** The outcome is decided: the application's listener is closed or about to be. */
    boolean finished;

    /** The call's state beyond the success path (guarded by the call); strategies may extend it. */
    static class Extra {
        /** Why the call was committed, when not by a response. */
        SuppressionReason commitReason;
        /** A buffer limit was passed while no attempt was in flight: the next attempt is committed at once. */
        boolean bufferExceeded;
        Boolean compression;
        /** The request messages after the first (null until there is a second). */
        Object[] laterMessages;
        /** The call's one pending timer (a retry's backoff or the next hedge) and its generation. */
        RetryScheduler.Timer timer;
        int timerGeneration;
        long timerStartNanos;
        long waitedNanos;
        Context.CancellationListener contextListener;
        /** How the application (or the Context) cancelled the call. */
        Status cancelStatus;
        String cancelMessage;
        Throwable cancelCause;
        /** The status an attempt that failed while being started ends the call with. */
        Status startFailure;
        /** A thread is running listener callbacks (parallel attempts only), and what waits for it. */
        boolean delivering;
        ArrayDeque<Runnable> pending;
    }

    /** Why an attempt is cancelled; the message it is cancelled with. */
    enum Cancel {
        LOST("hedged attempt not needed: another attempt committed"),
        ENDED("hedged attempt not needed: the call ended"),
        /** The application's (or Context's) cancellation: its message and cause. */
        APPLICATION(null),
        /** It failed while being started: the start failure's description and cause. */
        START_FAILURE(null);

        final String message;

        Cancel(String message) {
            this.message = message;
        }
    }

    /** A callback to the application's listener. */
    private enum Signal { HEADERS, MESSAGE, READY, CLOSE }

    /** An operation of the application's forwarded to attempts. */
    private enum Op { REQUEST, MESSAGE, HALF_CLOSE, COMPRESSION }

    EngineCall(RetryingClientInterceptor engine, RetryingClientInterceptor.MethodPlan plan,
            MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
        this.engine = engine;
        this.plan = plan;
        this.method = method;
        this.callOptions = callOptions;
        this.next = next;
        this.context = Context.current();
    }

    // ------------------------------------------------------------------ the strategy

    /** The kind of every attempt after the first. */
    abstract AttemptKind laterKind();

    /** Whether attempts run in parallel (their callbacks are serialised, sends to them guarded against cancellation). */
    abstract boolean parallel();

    /**
     * Under lock: what follows the failure of uncommitted attempt {@code a} (the call not cancelled,
     * its Context neither). A {@link Decision.Retry} is admitted by the budget and scheduled here
     * afterwards, a {@link Decision.Hedge} scheduled or sent.
     */
    abstract Decision afterFailureLocked(Attempt a, Status status, Metadata trailers);

    /** Whether the policy would have retried a failure of the committed attempt (nothing changes any more). */
    abstract boolean wouldRetry(Status status, Metadata trailers);

    /** Sends the next attempt: the timer fired, or a hedge goes at once. */
    abstract void nextAttempt();

    /** Time spent between attempts, for {@code callEnded} (the call has ended). */
    abstract long waitedNanos();

    /** Before {@link #start}'s locked section. */
    void starting() {
    }

    /** Under lock, after attempt {@code a} was opened. */
    void openedLocked(Attempt a) {
    }

    /** The options of attempt {@code a}'s channel call. */
    CallOptions attemptOptions(Attempt a) {
        return callOptions;
    }

    /** After attempt {@code a} started and caught up. */
    void launched(Attempt a) {
    }

    /** The call ended with {@code status} (after {@code callEnded}, before the listener's close). */
    void ended(Status status) {
    }

    Extra newExtra() {
        return new Extra();
    }

    // ------------------------------------------------------------------ application side

    @Override
    public final void start(Listener<RespT> responseListener, Metadata startHeaders) {
        CallSupport.checkStartArguments(responseListener, startHeaders);
        starting();
        Attempt first;
        synchronized (this) {
            if (listener != null) {
                throw new IllegalStateException("Already started");
            }
            if (cancelled) {
                throw new IllegalStateException("call was cancelled");
            }
            listener = responseListener;
            CallSupport.discardAttemptHeader(startHeaders); // the call owns these headers now
            headers = startHeaders.keys().isEmpty() ? null : startHeaders;
            first = openLocked();
        }
        CallSupport.callStarted(engine, target());
        // empty headers need no copy kept for later attempts: the first attempt takes them
        launch(first, headers == null ? startHeaders : null);
    }

    @Override
    public final void request(int numMessages) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.request(numMessages);
            return;
        }
        if (numMessages < 0) {
            throw new IllegalArgumentException("numMessages must be >= 0");
        }
        Object targets = null;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                if (finished || cancelled) {
                    return;
                }
                demand += numMessages;
                targets = targetsLocked();
                for (int i = 0, n = count(targets); i < n; i++) {
                    at(targets, i).sentDemand += numMessages;
                }
            }
        }
        if (p != null) {
            p.call.request(numMessages);
        } else {
            send(targets, Op.REQUEST, numMessages, null);
        }
    }

    @Override
    public final void sendMessage(ReqT message) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.sendMessage(message);
            return;
        }
        long size = MessageSizes.sizeOf(method.getRequestMarshaller(), message);
        Object targets = null;
        Object toCancel = null;
        Attempt newlyCommitted = null;
        synchronized (this) {
            if (finished || cancelled) {
                return;
            }
            if (passThrough == null && halfClosed) {
                throw new IllegalStateException("call was half-closed");
            }
            if (passThrough == null && committed == null && !bufferExceeded() && !holdLocked(size)) {
                Attempt pick = mostAdvancedLocked();
                if (pick != null) {
                    toCancel = commitLocked(pick, SuppressionReason.BUFFER_LIMIT);
                    newlyCommitted = pick;
                } else {
                    extra().bufferExceeded = true; // the next attempt is committed at start, and is the last
                }
            }
            p = passThrough;
            if (p == null) {
                Attempt c = committed;
                boolean record = c == null || !c.drained; // else the record is released: forward only
                if (record) {
                    append(message);
                }
                targets = targetsLocked();
                for (int i = 0, n = record ? count(targets) : 0; i < n; i++) {
                    at(targets, i).sentMessages = buffered;
                }
            }
        }
        cancelAll(toCancel);
        if (newlyCommitted != null) {
            engine.events.committed(target(), newlyCommitted.number);
        }
        if (p != null) {
            p.call.sendMessage(message);
        } else {
            send(targets, Op.MESSAGE, 0, message);
        }
    }

    @Override
    public final void halfClose() {
        Attempt p = passThrough;
        if (p != null) {
            p.call.halfClose();
            return;
        }
        Object targets = null;
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
                for (int i = 0, n = count(targets); i < n; i++) {
                    at(targets, i).sentHalfClose = true;
                }
            }
        }
        if (p != null) {
            p.call.halfClose();
        } else {
            send(targets, Op.HALF_CLOSE, 0, null);
        }
    }

    @Override
    public final void setMessageCompression(boolean enabled) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.setMessageCompression(enabled);
            return;
        }
        Object targets = null;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                extra().compression = enabled;
                for (Attempt a = newest; a != null; a = a.prev) {
                    a.compressionStale = !a.drained; // an attempt catching up applies it before its next sends
                }
                targets = targetsLocked();
            }
        }
        if (p != null) {
            p.call.setMessageCompression(enabled);
        } else {
            send(targets, Op.COMPRESSION, enabled ? 1 : 0, null);
        }
    }

    @Override
    public final boolean isReady() {
        Attempt p = passThrough;
        if (p != null) {
            return p.call.isReady();
        }
        Object started = null;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                if (finished || cancelled) {
                    return false;
                }
                for (Attempt a = newest; a != null; a = a.prev) {
                    if (a.started && !a.closed && a.cancel == null && (committed == null || committed == a)) {
                        started = add(started, a);
                    }
                }
            }
        }
        if (p != null) {
            return p.call.isReady();
        }
        for (int i = 0, n = count(started); i < n; i++) {
            if (at(started, i).call.isReady()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public final Attributes getAttributes() {
        Attempt p = passThrough;
        if (p != null) {
            return p.call.getAttributes();
        }
        Attempt a = null;
        synchronized (this) {
            if (committed != null && committed.started) {
                a = committed;
            } else {
                for (Attempt b = newest; b != null; b = b.prev) {
                    if (b.started && !b.closed) {
                        a = b; // the oldest
                    }
                }
            }
        }
        return a == null ? Attributes.EMPTY : a.call.getAttributes();
    }

    @Override
    public final void cancel(String message, Throwable cause) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.cancel(message, cause);
            return;
        }
        cancelWith(CallSupport.cancelStatus(message, cause), message, cause);
    }

    /** Cancels the call (application or Context): every attempt in flight and the pending timer. */
    private void cancelWith(Status status, String message, Throwable cause) {
        Attempt p;
        Object toCancel = null;
        boolean closeNow = false;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                if (cancelled || finished) {
                    return;
                }
                cancelled = true;
                Extra x = extra();
                x.cancelStatus = status;
                x.cancelMessage = message;
                x.cancelCause = cause;
                if (listener == null) {
                    return; // cancelled before start: start() will refuse
                }
                stopWaitingLocked();
                toCancel = cancelOthersLocked(null, Cancel.APPLICATION);
                if (live == 0) {
                    // waiting for the next attempt: none will report, so the call ends here
                    finished = true;
                    releaseRecordLocked();
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
            endLater(status);
        }
    }

    // ------------------------------------------------------------------ attempts

    /** Counts and links a new attempt (committed at once when a buffer limit was passed meanwhile). Under lock. */
    final Attempt openLocked() {
        Attempt a = new Attempt(++attempts, newest);
        newest = a;
        live++;
        Extra x = extra;
        if (x != null) {
            a.compressionStale = x.compression != null;
            if (x.bufferExceeded && committed == null) {
                commitLocked(a, SuppressionReason.BUFFER_LIMIT); // nothing else in flight: nothing to cancel
                a.committedAtStart = true;
            }
        }
        openedLocked(a);
        return a;
    }

    /**
     * Starts attempt {@code a} on the channel in the call's Context and replays the record into it;
     * {@code own} are the headers it may take as they are (else a copy of the start headers).
     */
    final void launch(Attempt a, Metadata own) {
        Metadata attemptHeaders = own;
        if (attemptHeaders == null) {
            attemptHeaders = new Metadata();
            if (headers != null) {
                attemptHeaders.merge(headers); // never changed after start
            }
        }
        CallSupport.putAttemptHeader(attemptHeaders, a.number);
        RetryEventListener events = engine.events;
        events.attemptStarted(target(), kind(a), a.number);
        if (a.committedAtStart) {
            events.committed(target(), a.number);
        }
        Context previous = context == Context.current() ? null : context.attach();
        boolean callStarted = false;
        try {
            ClientCall<ReqT, RespT> call = next.newCall(method, attemptOptions(a));
            a.call = call;
            call.start(a, attemptHeaders);
            callStarted = true;
            drain(a);
        } catch (RuntimeException e) {
            startFailed(a, callStarted, e);
            return;
        } finally {
            if (previous != null) {
                context.detach(previous);
            }
        }
        launched(a);
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
            Boolean compression = null;
            synchronized (this) {
                a.started = true;
                if (a.closed) {
                    return;
                }
                if (a.cancel != null && !a.cancelIssued) {
                    a.cancelIssued = true;
                    cancelNow = true;
                } else if (a.compressionStale) {
                    // set while this attempt was catching up: applied before its next sends
                    a.compressionStale = false;
                    compression = extra.compression;
                } else if (a.sentMessages == buffered && a.sentHalfClose == halfClosed && a.sentDemand == demand) {
                    a.drained = true;
                    if (committed == a) {
                        caughtUpLocked(a);
                    }
                    return;
                } else {
                    first = firstMessage;
                    later = extra == null ? null : extra.laterMessages;
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

    /**
     * Attempt {@code a} failed while being started. When its channel call started, that call may
     * still deliver callbacks (response headers may even commit the call to it): it is cancelled, and
     * its own close, which follows them, ends the call with the failure. Otherwise it is closed here
     * and the call ends (unless it ended already or another attempt won).
     */
    private void startFailed(Attempt a, boolean callStarted, RuntimeException e) {
        Status status = Status.INTERNAL.withDescription("could not start " + (a.number == 1 ? "the first attempt"
                : laterKind() == AttemptKind.RETRY ? "a retry attempt" : "a hedged attempt")).withCause(e);
        boolean cancelNow = false;
        boolean closedHere = false;
        Object toCancel = null;
        boolean end = false;
        synchronized (this) {
            if (a.closed) {
                return;
            }
            if (callStarted) {
                Extra x = extra();
                if (x.startFailure == null) {
                    x.startFailure = status;
                }
                a.cancel = Cancel.START_FAILURE;
                cancelNow = !a.cancelIssued;
                a.cancelIssued = true;
            } else {
                a.closed = true;
                live--;
                closedHere = true;
                if (!finished && (committed == null || committed == a)) {
                    end = true;
                    toCancel = finishLocked();
                }
            }
        }
        if (cancelNow) {
            a.cancelNow();
            return;
        }
        if (a.call != null) {
            a.call.cancel(status.getDescription(), e); // its start threw: nothing else sends to it
        }
        if (closedHere) {
            engine.events.attemptEnded(target(), kind(a), a.number, Status.Code.INTERNAL);
        }
        cancelAll(toCancel);
        if (end) {
            endLater(status);
        }
    }

    // ------------------------------------------------------------------ attempt callbacks

    /**
     * A response from {@code a}: commits the call to it if nothing else did (and the application did
     * not cancel); whether {@code a} is the call's attempt (deliver).
     */
    private boolean respond(Attempt a) {
        Object toCancel = null;
        boolean newly = false;
        boolean mine;
        synchronized (this) {
            if (committed == null && !finished && !a.closed && !cancelled) {
                toCancel = commitLocked(a, SuppressionReason.COMMITTED);
                newly = true;
            }
            mine = committed == a;
        }
        cancelAll(toCancel);
        if (newly) {
            engine.events.committed(target(), a.number);
        }
        return mine;
    }

    private void ready(Attempt a) {
        synchronized (this) {
            if (a.closed || finished || (committed != null && committed != a) || !enterLocked(Signal.READY, null, null)) {
                return;
            }
        }
        deliverEntered(Signal.READY, null, null);
    }

    /** The close of an attempt the call does not pass through to. */
    private void closed(Attempt a, Status attemptStatus, Metadata attemptTrailers) {
        Status status = attemptStatus;
        Metadata trailers = attemptTrailers;
        Decision d = null;
        boolean end = false;
        SuppressionReason suppressed = null;
        Object toCancel = null;
        synchronized (this) {
            if (a.closed) {
                return;
            }
            a.closed = true;
            live--;
            boolean startFailure = a.cancel == Cancel.START_FAILURE;
            if (startFailure) {
                status = extra.startFailure;
                trailers = new Metadata();
                attemptStatus = status;
            }
            if (finished || (committed != null && committed != a)) {
                end = false; // the outcome is known: this attempt only reports its end
            } else if (startFailure) {
                end = true;
            } else if (committed == a) {
                end = true;
                suppressed = Decision.afterCommit(commitReasonLocked(), !status.isOk() && wouldRetry(status, trailers));
            } else if (cancelled) {
                end = true;
                if (status.isOk()) {
                    // the server answered before the cancellation reached it: the call was cancelled
                    status = extra.cancelStatus;
                    trailers = new Metadata();
                }
            } else if (status.isOk() || context.isCancelled()) {
                end = true;
            } else {
                d = afterFailureLocked(a, status, trailers);
                if (d instanceof Decision.Retry r) {
                    d = Decision.admit(d, engine.budget);
                    if (d == r) {
                        scheduleLocked(r.delayNanos());
                    }
                } else if (d instanceof Decision.Hedge h) {
                    if (h.delayNanos() > 0) {
                        scheduleLocked(h.delayNanos());
                    } else {
                        cancelTimerLocked(); // the next hedge goes now
                    }
                }
                if (d instanceof Decision.Stop s) {
                    suppressed = s.reason();
                    end = live == 0 && !timerPendingLocked();
                } else if (d instanceof Decision.End e) {
                    suppressed = e.reason();
                    end = true;
                } else if (live == 0 && timerPendingLocked()) {
                    watchContextLocked(); // nothing in flight until the timer fires
                }
            }
            if (end) {
                toCancel = finishLocked();
            }
        }
        Status.Code code = attemptStatus.getCode();
        RetryEventListener events = engine.events;
        events.attemptEnded(target(), kind(a), a.number, code);
        cancelAll(toCancel);
        if (d instanceof Decision.Retry r) {
            events.retryScheduled(target(), a.number + 1, r.delayNanos());
        }
        if (suppressed != null) {
            events.retrySuppressed(target(), suppressed, code);
        }
        if (end) {
            endCall(status, trailers, false);
        } else if (d instanceof Decision.Hedge h && h.delayNanos() == 0) {
            nextAttempt();
        }
    }

    /**
     * The close of the attempt the call passes through to: no lock. Everything read here was written
     * before {@link #passThrough} was set (a volatile write) and nothing changes it afterwards: no other
     * attempt can start, every method of the call goes straight to this attempt, and the record was
     * released when the pass-through began.
     */
    private void closePassedThrough(Attempt a, Status status, Metadata trailers) {
        Status.Code code = status.getCode();
        Extra x = extra;
        SuppressionReason suppressed = Decision.afterCommit(x == null ? null : x.commitReason,
                code != Status.Code.OK && wouldRetry(status, trailers));
        RetryEventListener events = engine.events;
        events.attemptEnded(target(), kind(a), a.number, code);
        if (suppressed != null) {
            events.retrySuppressed(target(), suppressed, code);
        }
        endCall(status, trailers, true);
    }

    // ------------------------------------------------------------------ the end and the listener

    /**
     * Ends the call (it is finished, or passes through to the attempt that closed): reports it and
     * closes the application's listener, directly or through the serializer.
     */
    final void endCall(Status status, Metadata trailers, boolean direct) {
        Status.Code code = status.getCode();
        CallSupport.succeeded(engine, code == Status.Code.OK);
        int later = attempts - 1; // no attempt starts any more
        boolean retries = laterKind() == AttemptKind.RETRY;
        engine.events.callEnded(target(), code, retries ? later : 0, retries ? 0 : later, waitedNanos());
        ended(status);
        if (direct) {
            listener.onClose(status, trailers);
        } else {
            deliver(Signal.CLOSE, status, trailers);
        }
    }

    /**
     * Ends the call on its executor (or here when the executor refuses: the listener must be closed
     * either way). Only where no attempt of the call can deliver any more.
     */
    private void endLater(Status status) {
        CallSupport.executeOrRunHere(executor(), () -> endCall(status, new Metadata(), false));
    }

    private void deliver(Signal s, Object value, Metadata trailers) {
        if (parallel()) {
            synchronized (this) {
                if (!enterLocked(s, value, trailers)) {
                    return;
                }
            }
        }
        deliverEntered(s, value, trailers);
    }

    /** Under lock: whether this thread calls the listener now; false when queued for the thread delivering. */
    private boolean enterLocked(Signal s, Object value, Metadata trailers) {
        if (!parallel()) {
            return true;
        }
        Extra x = extra();
        if (x.delivering) {
            if (x.pending == null) {
                x.pending = new ArrayDeque<>(4);
            }
            x.pending.add(() -> emit(s, value, trailers));
            return false;
        }
        x.delivering = true;
        return true;
    }

    /** Calls the listener (after {@link #enterLocked} said so), then what was queued meanwhile. */
    private void deliverEntered(Signal s, Object value, Metadata trailers) {
        if (!parallel()) {
            emit(s, value, trailers);
            return;
        }
        RuntimeException failure = null;
        Runnable r = () -> emit(s, value, trailers);
        while (r != null) {
            try {
                r.run();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                }
            }
            synchronized (this) {
                Extra x = extra;
                r = x.pending == null ? null : x.pending.poll();
                if (r == null) {
                    x.delivering = false;
                    Attempt c = committed;
                    if (c != null && c.drained && !finished) {
                        passThrough = c;
                    }
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @SuppressWarnings("unchecked")
    private void emit(Signal s, Object value, Metadata trailers) {
        switch (s) {
            case HEADERS -> listener.onHeaders((Metadata) value);
            case MESSAGE -> listener.onMessage((RespT) value);
            case READY -> listener.onReady();
            default -> listener.onClose((Status) value, trailers);
        }
    }

    // ------------------------------------------------------------------ state changes (under lock)

    /**
     * Commits the call to {@code a}: no further attempt, the timer dropped, every other attempt
     * cancelled. Returns the attempts the caller must cancel (outside the lock).
     */
    private Object commitLocked(Attempt a, SuppressionReason reason) {
        committed = a;
        if (reason != SuppressionReason.COMMITTED || extra != null) {
            Extra x = extra();
            x.commitReason = reason;
            x.bufferExceeded = false;
        }
        stopWaitingLocked();
        if (a.drained) {
            caughtUpLocked(a);
        }
        return cancelOthersLocked(a, Cancel.LOST);
    }

    /** Committed attempt {@code a} has caught up: the record goes; it passes through unless a callback is being delivered. */
    private void caughtUpLocked(Attempt a) {
        releaseRecordLocked();
        Extra x = extra;
        if (x == null || !x.delivering) {
            passThrough = a;
        }
    }

    /** The outcome is decided: the timer, the record and the Context listener go; returns the attempts to cancel. */
    final Object finishLocked() {
        finished = true;
        stopWaitingLocked();
        releaseRecordLocked();
        return cancelOthersLocked(committed, Cancel.ENDED);
    }

    /**
     * Asks every attempt in flight except {@code except} to be cancelled: those no other thread may be
     * sending to are returned (cancel them outside the lock); the others are cancelled by the thread
     * draining or sending to them once it is done.
     */
    private Object cancelOthersLocked(Attempt except, Cancel why) {
        Object out = null;
        for (Attempt a = newest; a != null; a = a.prev) {
            if (a == except || a.closed || a.cancelIssued) {
                continue;
            }
            a.cancel = why;
            if (a.drained && a.sending == 0) {
                a.cancelIssued = true;
                out = add(out, a);
            }
        }
        return out;
    }

    /** The attempt in flight that has sent the most messages (the oldest on a tie), or null. */
    private Attempt mostAdvancedLocked() {
        Attempt best = null;
        for (Attempt a = newest; a != null; a = a.prev) {
            if (!a.closed && a.cancel == null && (best == null || a.sentMessages >= best.sentMessages)) {
                best = a;
            }
        }
        return best;
    }

    /**
     * The attempts the application's operations go to now (caught up, open, not being cancelled): null,
     * one {@link Attempt} or an array; for parallel attempts each is marked as being sent to until
     * {@link #send} releases it.
     */
    private Object targetsLocked() {
        Object out = null;
        boolean mark = parallel();
        for (Attempt a = newest; a != null; a = a.prev) {
            if (a.drained && !a.closed && a.cancel == null) {
                out = add(out, a);
                if (mark) {
                    a.sending++;
                }
            }
        }
        return out;
    }

    /** Forwards an operation to {@code targets}; then cancels those whose cancellation waited for it. */
    @SuppressWarnings("unchecked")
    private void send(Object targets, Op op, int n, Object message) {
        int count = count(targets);
        try {
            for (int i = 0; i < count; i++) {
                ClientCall<ReqT, RespT> call = at(targets, i).call;
                switch (op) {
                    case REQUEST -> call.request(n);
                    case MESSAGE -> call.sendMessage((ReqT) message);
                    case HALF_CLOSE -> call.halfClose();
                    default -> call.setMessageCompression(n != 0);
                }
            }
        } finally {
            if (count > 0 && parallel()) {
                Object cancelNow = null;
                synchronized (this) {
                    for (int i = 0; i < count; i++) {
                        Attempt a = at(targets, i);
                        if (--a.sending == 0 && a.cancel != null && !a.cancelIssued && !a.closed) {
                            a.cancelIssued = true;
                            cancelNow = add(cancelNow, a);
                        }
                    }
                }
                cancelAll(cancelNow);
            }
        }
    }

    private void cancelAll(Object attempts) {
        for (int i = 0, n = count(attempts); i < n; i++) {
            at(attempts, i).cancelNow();
        }
    }

    /** Schedules the call's timer after {@code delayNanos} (replacing a pending one); it runs {@link #nextAttempt}. */
    final void scheduleLocked(long delayNanos) {
        cancelTimerLocked();
        Extra x = extra();
        int generation = ++x.timerGeneration;
        x.timerStartNanos = System.nanoTime();
        x.timer = engine.scheduler.schedule(() -> timerFired(generation), executor(), delayNanos);
    }

    /** The timer fired (on the call's executor); a timer replaced or cancelled since does nothing. */
    private void timerFired(int generation) {
        synchronized (this) {
            Extra x = extra;
            if (x.timer == null || generation != x.timerGeneration) {
                return;
            }
            x.timer = null;
            x.waitedNanos += System.nanoTime() - x.timerStartNanos;
            removeContextListenerLocked();
        }
        nextAttempt();
    }

    final void cancelTimerLocked() {
        Extra x = extra;
        RetryScheduler.Timer t = x == null ? null : x.timer;
        if (t != null) {
            x.timer = null;
            t.cancel();
            x.waitedNanos += System.nanoTime() - x.timerStartNanos;
        }
    }

    /** Time the call's timers ran in all (the call has ended). */
    final long timerWaitedNanos() {
        Extra x = extra;
        return x == null ? 0 : x.waitedNanos;
    }

    final boolean timerPendingLocked() {
        return extra != null && extra.timer != null;
    }

    /** No more waiting for a timer: it is cancelled and the Context no longer watched. */
    private void stopWaitingLocked() {
        if (extra != null) {
            cancelTimerLocked();
            removeContextListenerLocked();
        }
    }

    /** While a timer is pending and no attempt is in flight, the Context's cancellation cancels the call. */
    private void watchContextLocked() {
        Extra x = extra();
        if (context != Context.ROOT && x.contextListener == null) { // ROOT cannot be cancelled
            Context.CancellationListener cl = c -> cancelWith(Contexts.statusFromCancelled(c), null, null);
            x.contextListener = cl;
            context.addListener(cl, executor());
        }
    }

    private void removeContextListenerLocked() {
        Context.CancellationListener cl = extra.contextListener;
        if (cl != null) {
            extra.contextListener = null;
            context.removeListener(cl);
        }
    }

    // ------------------------------------------------------------------ the replay record (under lock)

    private void append(Object message) {
        int n = buffered;
        if (n == 0) {
            firstMessage = message;
        } else {
            Extra x = extra();
            Object[] later = x.laterMessages;
            if (later == null) {
                later = new Object[4];
                x.laterMessages = later;
            } else if (n - 1 == later.length) {
                later = Arrays.copyOf(later, later.length * 2);
                x.laterMessages = later;
            }
            later[n - 1] = message;
        }
        buffered = n + 1;
    }

    /** Holds {@code size} more request bytes for replay: false (nothing held) when a limit would be passed. */
    private boolean holdLocked(long size) {
        if (!CallBuffer.fits(heldBytes, size, engine.perRpcBufferLimit, engine.bufferPool)) {
            return false;
        }
        heldBytes += size;
        return true;
    }

    private void releaseRecordLocked() {
        long held = heldBytes;
        if (held != 0) {
            heldBytes = 0;
            engine.bufferPool.release(held);
        }
        firstMessage = null;
        buffered = 0;
        if (extra != null) {
            extra.laterMessages = null;
        }
    }

    private boolean bufferExceeded() {
        return extra != null && extra.bufferExceeded;
    }

    private SuppressionReason commitReasonLocked() {
        return extra == null ? null : extra.commitReason;
    }

    // ------------------------------------------------------------------ small helpers

    /** The call's state beyond the success path, created on first use (under lock). */
    final Extra extra() {
        Extra x = extra;
        if (x == null) {
            x = newExtra();
            extra = x;
        }
        return x;
    }

    final CallTarget target() {
        return plan.target();
    }

    final AttemptKind kind(Attempt a) {
        return a.number == 1 ? AttemptKind.INITIAL : laterKind();
    }

    /** Where timer-triggered work and a close without an attempt in flight run. */
    final Executor executor() {
        Executor e = callOptions.getExecutor();
        return e != null ? e : engine.scheduler.workExecutor();
    }

    /** Nanoseconds to the call's deadline (the earlier of the call's and the Context's), or {@link Decision#NO_DEADLINE}. */
    final long remainingNanos() {
        Deadline d = CallSupport.earlier(callOptions.getDeadline(), context.getDeadline());
        return d == null ? Decision.NO_DEADLINE : d.timeRemaining(TimeUnit.NANOSECONDS);
    }

    /** A list of attempts without allocation for none or one: null, an {@link Attempt} or an array. */
    private static Object add(Object list, Object a) {
        if (list == null) {
            return a;
        }
        if (list instanceof Object[] many) {
            Object[] out = Arrays.copyOf(many, many.length + 1);
            out[many.length] = a;
            return out;
        }
        return new Object[] {list, a};
    }

    private static int count(Object list) {
        return list == null ? 0 : list instanceof Object[] many ? many.length : 1;
    }

    @SuppressWarnings("unchecked")
    private Attempt at(Object list, int i) {
        return (Attempt) (list instanceof Object[] many ? many[i] : list);
    }

    // ------------------------------------------------------------------ one attempt

    /** One attempt: a listener on the channel call it made, with its replay cursor and cancel hand-off. */
    final class Attempt extends ClientCall.Listener<RespT> {
        final int number;
        final Attempt prev;
        /** Set by the starting thread before the attempt can be a target or deliver. */
        ClientCall<ReqT, RespT> call;
        // guarded by the call's lock
        boolean started;
        boolean drained;
        boolean closed;
        boolean committedAtStart;
        /** The replay cursor: what of the record this attempt has been sent. */
        int sentMessages;
        long sentDemand;
        boolean sentHalfClose;
        boolean compressionStale;
        /** Application threads sending to this attempt now (parallel attempts). */
        int sending;
        /** Why it is to be cancelled (null: it is not); issued once by the thread allowed to. */
        Cancel cancel;
        boolean cancelIssued;

        Attempt(int number, Attempt prev) {
            this.number = number;
            this.prev = prev;
        }

        /**
         * Cancels this attempt (by the one thread allowed to at this moment: nothing else sends to it,
         * so its demand is final). Demand up to {@code Integer.MAX_VALUE} first: a transport may hold
         * the close of a stream the server already ended behind messages nobody asked for (grpc-java's
         * in-process transport then ignores the cancel), and an attempt that is not needed has its
         * messages dropped anyway. Only what is missing up to that is asked for: a transport that adds
         * demand in an {@code int} without saturating would otherwise wrap negative and hold the close.
         */
        void cancelNow() {
            long demanded;
            String message;
            Throwable cause;
            synchronized (EngineCall.this) {
                demanded = sentDemand;
                Extra x = extra;
                switch (cancel) {
                    case APPLICATION -> {
                        message = x.cancelMessage;
                        cause = x.cancelCause;
                    }
                    case START_FAILURE -> {
                        message = x.startFailure.getDescription();
                        cause = x.startFailure.getCause();
                    }
                    default -> {
                        message = cancel.message;
                        cause = null;
                    }
                }
            }
            try {
                int missing = CallSupport.demandUpToMax(demanded);
                if (missing > 0) {
                    call.request(missing);
                }
            } finally {
                call.cancel(message, cause);
            }
        }

        @Override
        public void onHeaders(Metadata responseHeaders) {
            if (passThrough == this) {
                listener.onHeaders(responseHeaders);
            } else if (respond(this)) {
                deliver(Signal.HEADERS, responseHeaders, null);
            }
        }

        @Override
        public void onMessage(RespT message) {
            if (passThrough == this) {
                listener.onMessage(message);
            } else if (respond(this)) {
                deliver(Signal.MESSAGE, message, null);
            }
        }

        @Override
        public void onReady() {
            if (passThrough == this) {
                listener.onReady();
            } else {
                ready(this);
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            if (passThrough == this) {
                closePassedThrough(this, status, trailers);
            } else {
                closed(this, status, trailers);
            }
        }

        @Override
        public String toString() {
            return "Attempt[" + number + " " + kind(this) + "]";
        }
    }
}
