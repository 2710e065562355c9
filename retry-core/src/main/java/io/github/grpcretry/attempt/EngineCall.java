package io.github.grpcretry.attempt;

import io.github.grpcretry.internal.commit.CallBuffer;
import io.github.grpcretry.internal.commit.MessageSizes;
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
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One logical call of the interceptor engine: the core that {@link RetryingCall} (one attempt at a
 * time) and {@link HedgingCall} (attempts in parallel) share. A strategy decides what follows a failed
 * attempt ({@link Decision}) and when the next one goes; the core does the rest.
 *
 * <p>State changes happen under one lock per call; calls into attempts and into the listener happen
 * outside it. While uncommitted the call keeps a replay record (demand, messages, half-close,
 * compression) and sends each operation to the attempts that have caught up with it; a new attempt is
 * drained by the thread that starts it, so an attempt's send side is used by one thread at a time, in
 * order, and it is cancelled by the thread allowed to send to it then. Response headers or a message
 * commit the call to that attempt (unless the application cancelled), as does a message passing a
 * buffer limit; the others are cancelled. Once the committed attempt has caught up and no callback is
 * being delivered, {@link #passThrough} is set: every method is then a volatile read and a direct call.
 * Callbacks of parallel attempts go through a small serializer until then.
 *
 * <p>Every attempt is closed once: under the lock by its own {@code onClose} ({@link #closed}) or, when
 * its channel call never started, by {@link #startFailed}, or as the pass-through; each reports
 * {@code attemptEnded}, and the one that settles the call ends it ({@link #endCall}). A call that
 * succeeds at once allocates this object and one {@link Attempt} (plus a copy of non-empty start
 * headers); what only a failure, a second message, a buffer limit, a cancellation or a compression
 * setting needs is in an {@link Extra} made on first use.
 */
abstract class EngineCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

    final RetryingClientInterceptor engine;
    final RetryingClientInterceptor.MethodPlan plan;
    private final MethodDescriptor<ReqT, RespT> method;
    final CallOptions callOptions;
    private final Channel next;
    final Context context;
    /** Hedging: attempts run in parallel (callbacks serialised, sends guarded against cancellation). */
    final boolean parallel;
    /** The committed attempt once it has caught up and no callback is being delivered. */
    volatile Attempt passThrough;

    // ---- guarded by this ----
    private Listener<RespT> listener;
    /** The application's start headers, without an attempt header of its own; each attempt gets a copy. */
    private Metadata headers;
    /** The attempt started last; each links to the one before. */
    private Attempt newest;
    Attempt committed;
    private Extra extra;
    /** The replay record: the first message (later ones in the extra), demand, half-close. */
    private Object firstMessage;
    private int buffered;
    /** Request bytes held for replay (per-RPC limit; reserved in the channel's pool). */
    private long heldBytes;
    private long demand;
    private boolean halfClosed;
    boolean cancelled;
    /** The outcome is decided: the listener is closed or about to be. */
    boolean finished;

    /** The call's state beyond the success path (guarded by the call); a strategy may extend it. */
    static class Extra {
        /** Why the call was committed, when not by a response. */
        SuppressionReason commitReason;
        /** A buffer limit was passed with no attempt in flight: the next one is committed at once. */
        boolean bufferExceeded;
        Boolean compression;
        Object[] laterMessages;
        /** The call's one pending timer (a retry's backoff, the next hedge) and its generation. */
        RetryScheduler.Timer timer;
        int timerGeneration;
        long timerStartNanos;
        long waitedNanos;
        /** What the timer that fired last waited, until an attempt takes it (observed calls). */
        long lastWaitNanos;
        Context.CancellationListener contextListener;
        Status cancelStatus;
        String cancelMessage;
        Throwable cancelCause;
        /** What an attempt that failed while being started ends the call with. */
        Status startFailure;
        /** The serializer of parallel attempts' callbacks: busy, and what waits for it. */
        boolean delivering;
        ArrayDeque<Runnable> pending;
        /** The call as the engine's observer follows it (set at start, never changed), and its attempts by number. */
        AttemptObserver.Call observed;
        AttemptObserver.Attempt[] observations;
    }

    /** Why an attempt is cancelled, with its message when fixed. */
    enum Cancel {
        LOST("hedged attempt not needed: another attempt committed"),
        ENDED("hedged attempt not needed: the call ended"),
        APPLICATION(null),
        START_FAILURE(null);

        final String message;

        Cancel(String message) {
            this.message = message;
        }
    }

    /** A callback to the application's listener. */
    private enum Signal { HEADERS, MESSAGE, READY, CLOSE }

    /** An operation of the application's, recorded and sent to attempts. */
    private enum Op { REQUEST, MESSAGE, HALF_CLOSE, COMPRESSION }

    EngineCall(RetryingClientInterceptor engine, RetryingClientInterceptor.MethodPlan plan,
            MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next, boolean parallel) {
        this.engine = engine;
        this.parallel = parallel;
        this.plan = plan;
        this.method = method;
        this.callOptions = callOptions;
        this.next = next;
        this.context = Context.current();
    }

    // ------------------------------------------------------------------ the strategy

    /** Under lock: what follows the failure of uncommitted {@code a} (the core admits and schedules it). */
    abstract Decision afterFailureLocked(Attempt a, Status status, Metadata trailers);

    /** Whether the policy would have retried this failure of the committed attempt (the call is settled). */
    abstract boolean wouldRetry(Status status, Metadata trailers);

    /** Sends the next attempt: the timer fired, or a hedge goes at once. */
    abstract void nextAttempt();

    /** Time spent between attempts, for {@code callEnded}: by default what the timers ran. */
    long waitedNanos() {
        return extra == null ? 0 : extra.waitedNanos;
    }

    /** Before {@link #start}'s locked section. */
    void starting() {
    }

    /** Under lock, once attempt {@code a} is open. */
    void openedLocked(Attempt a) {
    }

    CallOptions attemptOptions(Attempt a) {
        return callOptions;
    }

    /** Attempt {@code a} started and caught up. */
    void launched(Attempt a) {
    }

    /** The call ended: after {@code callEnded}, before the listener's close. */
    void ended(Status status) {
    }

    Extra newExtra() {
        return new Extra();
    }

    // ------------------------------------------------------------------ application side

    @Override
    public final void start(Listener<RespT> responseListener, Metadata startHeaders) {
        if (responseListener == null || startHeaders == null) {
            throw new NullPointerException("listener and headers must not be null");
        }
        starting();
        AttemptObserver observer = engine.observer;
        AttemptObserver.Call followed = observer == null ? null : observer.callStarted(target());
        Attempt first;
        synchronized (this) {
            if (listener != null) {
                throw new IllegalStateException("Already started");
            }
            if (cancelled) {
                throw new IllegalStateException("call was cancelled");
            }
            listener = responseListener;
            if (followed != null) {
                extra().observed = followed;
            }
            startHeaders.discardAll(RetryingCall.PREVIOUS_ATTEMPTS); // the engine's; the headers are the call's now
            headers = startHeaders;
            first = openLocked();
        }
        if (engine.budget != null) {
            engine.budget.onCall();
        }
        engine.events.callStarted(target());
        launch(first);
    }

    @Override
    public final void request(int numMessages) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.request(numMessages);
        } else if (numMessages < 0) {
            throw new IllegalArgumentException("numMessages must be >= 0");
        } else {
            forward(Op.REQUEST, numMessages, null);
        }
    }

    @Override
    public final void sendMessage(ReqT message) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.sendMessage(message);
        } else {
            forward(Op.MESSAGE, 0, message);
        }
    }

    @Override
    public final void halfClose() {
        Attempt p = passThrough;
        if (p != null) {
            p.call.halfClose();
        } else {
            forward(Op.HALF_CLOSE, 0, null);
        }
    }

    @Override
    public final void setMessageCompression(boolean enabled) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.setMessageCompression(enabled);
        } else {
            forward(Op.COMPRESSION, enabled ? 1 : 0, null);
        }
    }

    /** An operation before the pass-through: recorded, sent to the attempts caught up; a buffer limit commits. */
    @SuppressWarnings("unchecked")
    private void forward(Op op, int n, Object message) {
        long size = op == Op.MESSAGE ? MessageSizes.sizeOf(method.getRequestMarshaller(), (ReqT) message) : 0;
        Attempt p;
        Object targets = null;
        Object toCancel = null;
        Attempt newlyCommitted = null;
        synchronized (this) {
            p = passThrough;
            if (p == null) {
                if (finished || cancelled) {
                    return;
                }
                if (halfClosed && (op == Op.MESSAGE || op == Op.HALF_CLOSE)) {
                    throw new IllegalStateException(op == Op.MESSAGE ? "call was half-closed"
                            : "call already half-closed");
                }
                if (op == Op.MESSAGE && committed == null && (extra == null || !extra.bufferExceeded)) {
                    if (CallBuffer.fits(heldBytes, size, engine.perRpcBufferLimit, engine.bufferPool)) {
                        heldBytes += size;
                    } else if ((newlyCommitted = mostAdvancedLocked()) != null) {
                        toCancel = commitLocked(newlyCommitted, SuppressionReason.BUFFER_LIMIT);
                    } else {
                        extra().bufferExceeded = true;
                    }
                }
                p = passThrough; // the commit may have begun it
                if (p == null) {
                    targets = recordLocked(op, n, message);
                }
            }
        }
        cancelAll(toCancel);
        if (newlyCommitted != null) {
            engine.events.committed(target(), newlyCommitted.number);
        }
        send(p != null ? p : targets, op, n, message, p == null);
    }

    /** Records {@code op}; its targets (caught up, open): cursors moved, parallel ones marked for {@link #send}. */
    private Object recordLocked(Op op, int n, Object message) {
        switch (op) {
            case REQUEST -> demand += n;
            case MESSAGE -> {
                if (committed == null || !committed.drained) { // else the record is released
                    append(message);
                }
            }
            case HALF_CLOSE -> halfClosed = true;
            default -> {
                extra().compression = n != 0;
                for (Attempt a = newest; a != null; a = a.prev) {
                    a.compressionStale = !a.drained; // one catching up applies it before its next sends
                }
            }
        }
        Object targets = null;
        for (Attempt a = newest; a != null; a = a.prev) {
            if (a.drained && !a.closed && a.cancel == null) {
                a.sentMessages = buffered;
                a.sentDemand = demand;
                a.sentHalfClose = halfClosed;
                a.sending += parallel ? 1 : 0;
                targets = add(targets, a);
            }
        }
        return targets;
    }

    /** Ready when any attempt that is or may become the call's is (grpc-java: any caught up). */
    @Override
    public final boolean isReady() {
        Object candidates = passThrough;
        if (candidates == null) {
            synchronized (this) {
                candidates = passThrough != null ? passThrough : candidatesLocked();
            }
        }
        for (int i = 0, n = count(candidates); i < n; i++) {
            if (at(candidates, i).call.isReady()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public final Attributes getAttributes() {
        Object candidates = passThrough;
        if (candidates == null) {
            synchronized (this) {
                candidates = candidatesLocked();
            }
        }
        return candidates == null ? Attributes.EMPTY : at(candidates, 0).call.getAttributes(); // the oldest
    }

    /** The started, open attempts that are or may become the call's, the oldest first (under lock). */
    private Object candidatesLocked() {
        Object out = null;
        for (Attempt a = newest; !finished && !cancelled && a != null; a = a.prev) {
            if (a.started && !a.closed && a.cancel == null && (committed == null || committed == a)) {
                out = add(out, a);
            }
        }
        return out;
    }

    @Override
    public final void cancel(String message, Throwable cause) {
        Attempt p = passThrough;
        if (p != null) {
            p.call.cancel(message, cause);
        } else {
            String description = message != null ? message : "Call cancelled without message";
            cancelWith(Status.CANCELLED.withDescription(description).withCause(cause), message, cause);
        }
    }

    /** Cancels the call (application or Context): every attempt in flight and the timer. */
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
                    return; // before start: start() will refuse
                }
                stopWaitingLocked();
                toCancel = cancelOthersLocked(null, Cancel.APPLICATION);
                closeNow = liveLocked() == 0; // waiting for the next attempt: none will report, so it ends here
                if (closeNow) {
                    finishLocked();
                }
            }
        }
        if (p != null) {
            p.call.cancel(message, cause);
        }
        cancelAll(toCancel);
        if (closeNow) {
            endLater(status);
        }
    }

    // ------------------------------------------------------------------ attempts

    /** Counts and links a new attempt; committed at once when a buffer limit was passed meanwhile (under lock). */
    final Attempt openLocked() {
        Attempt a = new Attempt(attempts() + 1, newest);
        newest = a;
        Extra x = extra;
        if (x != null) {
            a.compressionStale = x.compression != null;
            if (x.bufferExceeded && committed == null) {
                commitLocked(a, SuppressionReason.BUFFER_LIMIT); // none other in flight: none to cancel
                a.committedAtStart = true;
            }
        }
        openedLocked(a);
        return a;
    }

    /** Starts {@code a} in the call's Context and replays the record into it. */
    final void launch(Attempt a) {
        Metadata attemptHeaders = new Metadata();
        attemptHeaders.merge(headers); // never changed after start
        if (a.number > 1) {
            attemptHeaders.put(RetryingCall.PREVIOUS_ATTEMPTS, RetryingCall.previousAttemptsValue(a.number - 1));
        }
        engine.events.attemptStarted(target(), kind(a), a.number);
        if (a.committedAtStart) {
            engine.events.committed(target(), a.number);
        }
        AttemptObserver.Scope scope = null;
        AttemptObserver.Call followed = observedCall();
        if (followed != null) {
            long delay;
            synchronized (this) {
                delay = a.number == 1 ? -1 : extra.lastWaitNanos;
                extra.lastWaitNanos = 0; // a hedge sent at once after a failure waited for no timer
            }
            AttemptObserver.Attempt o = followed.attemptStarting(kind(a), a.number, delay, attemptHeaders);
            synchronized (this) {
                Extra x = extra;
                if (x.observations == null || x.observations.length < a.number) {
                    x.observations = Arrays.copyOf(x.observations == null ? new AttemptObserver.Attempt[0]
                            : x.observations, Math.max(4, a.number * 2));
                }
                x.observations[a.number - 1] = o;
            }
            scope = o.openScope();
        }
        Context previous = context == Context.current() ? null : context.attach();
        boolean callStarted = false;
        try {
            a.call = next.newCall(method, attemptOptions(a));
            a.call.start(a, attemptHeaders);
            callStarted = true;
            drain(a);
        } catch (RuntimeException e) {
            startFailed(a, callStarted, e);
            return;
        } finally {
            if (scope != null) {
                scope.close();
            }
            if (previous != null) {
                context.detach(previous);
            }
        }
        launched(a);
    }

    /** Replays the record into {@code a} until it has caught up; then it is drained. */
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
                if (a.closed || a.cancelIssued) {
                    return;
                }
                if (a.cancel != null) {
                    a.cancelIssued = cancelNow = true;
                } else if (a.compressionStale) { // set while catching up: applied before the next sends
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
            for (long left = moreDemand; left > 0; left -= Integer.MAX_VALUE) {
                a.call.request((int) Math.min(left, Integer.MAX_VALUE));
            }
            for (int i = from; i < to; i++) {
                a.call.sendMessage((ReqT) (i == 0 ? first : later[i - 1]));
            }
            if (sendHalfClose) {
                a.call.halfClose();
            }
        }
    }

    /**
     * {@code a} failed while being started. A started channel call may still deliver (even commit): it is
     * cancelled, and its own close ends the call with the failure; otherwise it is closed and ends it here.
     */
    private void startFailed(Attempt a, boolean callStarted, RuntimeException e) {
        Status status = Status.INTERNAL.withDescription("could not start " + (a.number == 1 ? "the first attempt"
                : parallel ? "a hedged attempt" : "a retry attempt")).withCause(e);
        boolean cancelNow = false;
        Object toCancel = null;
        boolean end = false;
        AttemptObserver.Attempt observation;
        synchronized (this) {
            if (a.closed) {
                return;
            }
            observation = observationLocked(a);
            if (callStarted) {
                Extra x = extra();
                x.startFailure = x.startFailure == null ? status : x.startFailure;
                a.cancel = Cancel.START_FAILURE;
                cancelNow = !a.cancelIssued;
                a.cancelIssued = true;
            } else {
                a.closed = true;
                end = !finished && (committed == null || committed == a);
                toCancel = end ? finishLocked() : null;
            }
        }
        if (callStarted) {
            if (cancelNow) {
                a.cancelNow();
            }
            return;
        }
        if (a.call != null) {
            a.call.cancel(status.getDescription(), e); // its start threw: nothing else sends to it
        }
        engine.events.attemptEnded(target(), kind(a), a.number, Status.Code.INTERNAL);
        if (observation != null) {
            observation.ended(status, new Metadata(), false, false);
        }
        cancelAll(toCancel);
        if (end) {
            endLater(status);
        }
    }

    // ------------------------------------------------------------------ attempt callbacks

    /** A callback from {@code a}: a response commits to it; delivered when {@code a} is (or may become) the call's. */
    private void receive(Attempt a, Signal s, Object value) {
        Object toCancel = null;
        boolean newly = false;
        boolean deliver;
        synchronized (this) {
            if (s != Signal.READY && committed == null && !finished && !a.closed && !cancelled) {
                toCancel = commitLocked(a, SuppressionReason.COMMITTED);
                newly = true;
            }
            deliver = (s == Signal.READY ? !a.closed && !finished && (committed == null || committed == a)
                    : committed == a) && enterLocked(s, value, null);
        }
        cancelAll(toCancel);
        if (newly) {
            engine.events.committed(target(), a.number);
        }
        if (deliver) {
            deliverEntered(s, value, null);
        }
    }

    /** The close of an attempt the call does not pass through to. */
    private void closed(Attempt a, Status attemptStatus, Metadata attemptTrailers) {
        Status status = attemptStatus;
        Metadata trailers = attemptTrailers;
        Decision d = null;
        boolean end = false;
        SuppressionReason suppressed = null;
        Object toCancel = null;
        AttemptObserver.Attempt observation;
        boolean wasCommitted;
        boolean cancelledHere;
        synchronized (this) {
            if (a.closed) {
                return;
            }
            a.closed = true;
            observation = observationLocked(a);
            wasCommitted = committed == a;
            boolean startFailure = a.cancel == Cancel.START_FAILURE;
            cancelledHere = a.cancel != null && !startFailure;
            if (startFailure) {
                attemptStatus = status = extra.startFailure;
                trailers = new Metadata();
            }
            end = !finished && (committed == null || committed == a); // else settled: it only reports its end
            if (!end || startFailure) {
                suppressed = null; // nothing to decide
            } else if (committed == a) {
                suppressed = Decision.afterCommit(extra == null ? null : extra.commitReason,
                        !status.isOk() && wouldRetry(status, trailers));
            } else if (cancelled) {
                if (status.isOk()) { // answered before the cancellation reached the server: cancelled
                    status = extra.cancelStatus;
                    trailers = new Metadata();
                }
            } else if (!status.isOk() && !context.isCancelled()) {
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
                    end = liveLocked() == 0 && !timerPendingLocked();
                } else if (d instanceof Decision.End e) {
                    suppressed = e.reason();
                } else {
                    end = false;
                    if (liveLocked() == 0 && timerPendingLocked()) {
                        watchContextLocked(); // nothing in flight until the timer fires
                    }
                }
            }
            toCancel = end ? finishLocked() : null;
        }
        Status.Code code = attemptStatus.getCode();
        engine.events.attemptEnded(target(), kind(a), a.number, code);
        if (observation != null) {
            observation.ended(attemptStatus, attemptTrailers, wasCommitted, cancelledHere);
        }
        cancelAll(toCancel);
        if (d instanceof Decision.Retry r) {
            engine.events.retryScheduled(target(), a.number + 1, r.delayNanos());
        }
        if (suppressed != null) {
            suppressed(suppressed, code);
        }
        if (end) {
            endCall(status, trailers, false);
        } else if (d instanceof Decision.Hedge h && h.delayNanos() == 0) {
            nextAttempt();
        }
    }

    /** The pass-through's close, without the lock: what it reads was set before {@link #passThrough} and is settled. */
    private void closePassedThrough(Attempt a, Status status, Metadata trailers) {
        Status.Code code = status.getCode();
        SuppressionReason suppressed = Decision.afterCommit(extra == null ? null : extra.commitReason,
                code != Status.Code.OK && wouldRetry(status, trailers));
        engine.events.attemptEnded(target(), kind(a), a.number, code);
        AttemptObserver.Attempt observation = observationLocked(a); // set before the attempt started: settled
        if (observation != null) {
            observation.ended(status, trailers, true, false);
        }
        if (suppressed != null) {
            suppressed(suppressed, code);
        }
        endCall(status, trailers, true);
    }

    /** A retry or hedge that will not go, and why: to the listener and the observer. */
    final void suppressed(SuppressionReason reason, Status.Code code) {
        engine.events.retrySuppressed(target(), reason, code);
        AttemptObserver.Call followed = observedCall();
        if (followed != null) {
            followed.retrySuppressed(reason, code);
        }
    }

    // ------------------------------------------------------------------ the end and the listener

    /** Ends the settled call: reports it, then closes the listener (directly, or through the serializer). */
    final void endCall(Status status, Metadata trailers, boolean direct) {
        Status.Code code = status.getCode();
        if (code == Status.Code.OK && engine.throttle != null) {
            engine.throttle.onSuccess();
        }
        int later = attempts() - 1; // no attempt starts any more
        engine.events.callEnded(target(), code, parallel ? 0 : later, parallel ? later : 0, waitedNanos());
        ended(status);
        if (direct || !parallel) {
            listener.onClose(status, trailers);
            return;
        }
        boolean deliver;
        synchronized (this) {
            deliver = enterLocked(Signal.CLOSE, status, trailers);
        }
        if (deliver) {
            deliverEntered(Signal.CLOSE, status, trailers);
        }
    }

    /** Ends the call on its executor (here when it refuses: the listener must close); nothing else delivers. */
    private void endLater(Status status) {
        Runnable end = () -> endCall(status, new Metadata(), false);
        try {
            executor().execute(end);
        } catch (RejectedExecutionException e) {
            end.run();
        }
    }

    /** Under lock: whether this thread calls the listener now; false when queued for the one that is. */
    private boolean enterLocked(Signal s, Object value, Metadata trailers) {
        if (!parallel) {
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

    /** Calls the listener (after {@link #enterLocked}); serialised: then what was queued meanwhile. */
    private void deliverEntered(Signal s, Object value, Metadata trailers) {
        if (!parallel) {
            emit(s, value, trailers);
            return;
        }
        RuntimeException failure = null;
        Runnable r = () -> emit(s, value, trailers);
        while (r != null) {
            try {
                r.run();
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
            synchronized (this) {
                r = extra.pending == null ? null : extra.pending.poll();
                if (r == null) {
                    extra.delivering = false;
                    if (committed != null && committed.drained && !finished) {
                        passThrough = committed;
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

    /** Commits to {@code a}: no further attempt or timer; returns the other attempts to cancel (outside the lock). */
    private Object commitLocked(Attempt a, SuppressionReason reason) {
        committed = a;
        if (reason != SuppressionReason.COMMITTED || extra != null) {
            extra().commitReason = reason;
            extra.bufferExceeded = false;
        }
        stopWaitingLocked();
        if (a.drained) {
            caughtUpLocked(a);
        }
        return cancelOthersLocked(a, Cancel.LOST);
    }

    /** The committed attempt caught up: the record goes; it passes through unless a callback is being delivered. */
    private void caughtUpLocked(Attempt a) {
        releaseRecordLocked();
        if (extra == null || !extra.delivering) {
            passThrough = a;
        }
    }

    /** The outcome is decided: timer, record and Context listener go; returns the attempts to cancel. */
    final Object finishLocked() {
        finished = true;
        stopWaitingLocked();
        releaseRecordLocked();
        return cancelOthersLocked(committed, Cancel.ENDED);
    }

    /** Asks all in flight but {@code except} to be cancelled; returns those no thread sends to (else: the sender). */
    private Object cancelOthersLocked(Attempt except, Cancel why) {
        Object out = null;
        for (Attempt a = newest; a != null; a = a.prev) {
            if (a != except && !a.closed && !a.cancelIssued) {
                a.cancel = why;
                if (a.drained && a.sending == 0) {
                    a.cancelIssued = true;
                    out = add(out, a);
                }
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

    /** Sends an operation to {@code targets}; releases {@code marked} ones, cancelling those whose cancel waited. */
    @SuppressWarnings("unchecked")
    private void send(Object targets, Op op, int n, Object message, boolean marked) {
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
            if (count > 0 && marked && parallel) {
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

    /** Schedules the call's timer after {@code delayNanos}, replacing a pending one; it runs {@link #nextAttempt}. */
    final void scheduleLocked(long delayNanos) {
        cancelTimerLocked();
        Extra x = extra();
        int generation = ++x.timerGeneration;
        x.timerStartNanos = System.nanoTime();
        x.timer = engine.scheduler.schedule(() -> timerFired(generation), executor(), delayNanos);
    }

    /** On the call's executor; a timer replaced or cancelled since does nothing. */
    private void timerFired(int generation) {
        synchronized (this) {
            if (extra.timer == null || generation != extra.timerGeneration) {
                return;
            }
            extra.timer = null;
            long waited = System.nanoTime() - extra.timerStartNanos;
            extra.waitedNanos += waited;
            extra.lastWaitNanos = waited;
            stopWaitingLocked();
        }
        nextAttempt();
    }

    final void cancelTimerLocked() {
        RetryScheduler.Timer t = extra == null ? null : extra.timer;
        if (t != null) {
            extra.timer = null;
            t.cancel();
            extra.waitedNanos += System.nanoTime() - extra.timerStartNanos;
        }
    }

    private boolean timerPendingLocked() {
        return extra != null && extra.timer != null;
    }

    /** No more waiting for a timer: it is cancelled and the Context no longer watched. */
    private void stopWaitingLocked() {
        Context.CancellationListener cl = extra == null ? null : extra.contextListener;
        cancelTimerLocked();
        if (cl != null) {
            extra.contextListener = null;
            context.removeListener(cl);
        }
    }

    /** While a timer is pending and nothing is in flight, the Context's cancellation cancels the call. */
    private void watchContextLocked() {
        Extra x = extra();
        if (context != Context.ROOT && x.contextListener == null) { // ROOT cannot be cancelled
            x.contextListener = c -> cancelWith(Contexts.statusFromCancelled(c), null, null);
            context.addListener(x.contextListener, executor());
        }
    }

    // ------------------------------------------------------------------ the replay record (under lock)

    private void append(Object message) {
        int n = buffered;
        if (n == 0) {
            firstMessage = message;
        } else {
            Extra x = extra();
            if (x.laterMessages == null) {
                x.laterMessages = new Object[4];
            } else if (n - 1 == x.laterMessages.length) {
                x.laterMessages = Arrays.copyOf(x.laterMessages, x.laterMessages.length * 2);
            }
            x.laterMessages[n - 1] = message;
        }
        buffered = n + 1;
    }

    private void releaseRecordLocked() {
        if (heldBytes != 0) {
            engine.bufferPool.release(heldBytes);
            heldBytes = 0;
        }
        firstMessage = null;
        buffered = 0;
        if (extra != null) {
            extra.laterMessages = null;
        }
    }

    // ------------------------------------------------------------------ helpers

    /** The call's state beyond the success path, made on first use (under lock). */
    final Extra extra() {
        if (extra == null) {
            extra = newExtra();
        }
        return extra;
    }

    /**
     * The call as the engine's observer follows it, or null. Set in the extra under start's lock, before
     * any attempt exists, and never changed: a thread that took the lock since sees it (every caller has).
     */
    private AttemptObserver.Call observedCall() {
        Extra x = extra;
        return x == null ? null : x.observed;
    }

    /** The observer's view of attempt {@code a} (under lock, or settled), or null when the call is not followed. */
    private AttemptObserver.Attempt observationLocked(Attempt a) {
        Extra x = extra;
        AttemptObserver.Attempt[] all = x == null ? null : x.observations;
        return all == null || all.length < a.number ? null : all[a.number - 1];
    }

    /** Attempts started (guarded, or settled). */
    final int attempts() {
        return newest == null ? 0 : newest.number;
    }

    /** Attempts started and not closed (under lock). */
    final int liveLocked() {
        int n = 0;
        for (Attempt a = newest; a != null; a = a.prev) {
            n += a.closed ? 0 : 1;
        }
        return n;
    }

    final CallTarget target() {
        return plan.target();
    }

    final AttemptKind kind(Attempt a) {
        return a.number == 1 ? AttemptKind.INITIAL : parallel ? AttemptKind.HEDGE : AttemptKind.RETRY;
    }

    /** Where timer-triggered work and a close with nothing in flight run. */
    final Executor executor() {
        Executor e = callOptions.getExecutor();
        return e != null ? e : engine.scheduler.workExecutor();
    }

    /** Nanoseconds to the call's deadline (its own or the Context's, the earlier), or {@link Decision#NO_DEADLINE}. */
    final long remainingNanos() {
        Deadline a = callOptions.getDeadline();
        Deadline b = context.getDeadline();
        long left = a == null ? Decision.NO_DEADLINE : a.timeRemaining(TimeUnit.NANOSECONDS);
        return b == null ? left : Math.min(left, b.timeRemaining(TimeUnit.NANOSECONDS));
    }

    /** Attempts as null, one {@link Attempt} or an array: none and one allocate nothing. */
    private static Object add(Object list, Object a) {
        if (list == null) {
            return a;
        }
        Object[] rest = list instanceof Object[] m ? m : new Object[] {list};
        Object[] many = new Object[rest.length + 1];
        many[0] = a; // lists are built walking from the newest attempt: the oldest comes first
        System.arraycopy(rest, 0, many, 1, rest.length);
        return many;
    }

    private static int count(Object list) {
        return list == null ? 0 : list instanceof Object[] many ? many.length : 1;
    }

    @SuppressWarnings("unchecked")
    private Attempt at(Object list, int i) {
        return (Attempt) (list instanceof Object[] many ? many[i] : list);
    }

    // ------------------------------------------------------------------ one attempt

    /** One attempt: a listener on the channel call it made, its replay cursor and its cancel hand-off. */
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
        /** The replay cursor: what of the record it was sent. */
        int sentMessages;
        long sentDemand;
        boolean sentHalfClose;
        boolean compressionStale;
        /** Application threads sending to it now (parallel attempts). */
        int sending;
        /** Why it is to be cancelled (null: not); issued once, by the thread allowed to. */
        Cancel cancel;
        boolean cancelIssued;

        Attempt(int number, Attempt prev) {
            this.number = number;
            this.prev = prev;
        }

        /**
         * Cancels it, by the one thread allowed to (its demand is final), after demand up to
         * {@code Integer.MAX_VALUE}: a transport may hold an ended stream's close behind unrequested
         * messages (grpc-java's in-process one), and one adding demand in an {@code int} would wrap past it.
         */
        void cancelNow() {
            long demanded;
            String message;
            Throwable cause;
            synchronized (EngineCall.this) {
                demanded = sentDemand;
                Status s = cancel == Cancel.START_FAILURE ? extra.startFailure : null;
                boolean app = cancel == Cancel.APPLICATION;
                message = app ? extra.cancelMessage : s != null ? s.getDescription() : cancel.message;
                cause = app ? extra.cancelCause : s != null ? s.getCause() : null;
            }
            try {
                int missing = (int) (Integer.MAX_VALUE - Math.min(Math.max(0, demanded), Integer.MAX_VALUE));
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
            } else {
                receive(this, Signal.HEADERS, responseHeaders);
            }
        }

        @Override
        public void onMessage(RespT message) {
            if (passThrough == this) {
                listener.onMessage(message);
            } else {
                receive(this, Signal.MESSAGE, message);
            }
        }

        @Override
        public void onReady() {
            if (passThrough == this) {
                listener.onReady();
            } else {
                receive(this, Signal.READY, null);
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
