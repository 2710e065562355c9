package io.github.grpcretry.attempt;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.github.grpcretry.internal.backends.TriedBackends;
import io.github.grpcretry.internal.commit.CallBuffer;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientStreamTracer;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * One logical call of the interceptor engine: the core that {@link RetryingCall} (one attempt at a time)
 * and {@link HedgingCall} (attempts in parallel) share; a strategy decides what follows a failed attempt
 * ({@link Decision}). The state is guarded by the call's lock; where the call and each attempt stand are one
 * {@link CallPhase} and one {@link AttemptPhase} each, changed only by their named transitions, which check what
 * they leave (docs/design.md §18's tables). Calls into attempts and into the listener
 * happen outside it, on three paths (docs/design.md §18): <b>drain</b> ({@link #drain}: the application's
 * operations are recorded in the {@link CallBuffer} and each attempt is sent what it lacks by the one thread
 * that owns its drain, which also issues its cancel); <b>deliver</b> ({@link #emit}: every callback to the
 * listener, serialised; an exception from it cancels the whole call; after a cancel only the close); the
 * <b>end of an attempt</b> ({@link #closed}: reported once; the attempt that settles the call ends it).
 * A response, or an attempt's write past a buffer limit (its transport's count, {@link #wrote}), commits the
 * call to that attempt and the others are cancelled; once it has caught up and nothing is being delivered,
 * {@link #passThrough} makes every method a volatile read and a direct call. A call that succeeds at once
 * allocates this object, its record, one {@link Attempt} and its stream tracer (with the copy of the call
 * options grpc-java makes to add it); failures, cancellation and contention use an {@link Extra}.
 */
abstract class EngineCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

    private static final System.Logger LOG = System.getLogger(EngineCall.class.getName());

    /** How a call that needs a timer ends once the engine's scheduler is closed. */
    static final Status SHUTTING_DOWN = Status.UNAVAILABLE.withDescription(
            "the client is shutting down: the retry engine's scheduler is closed, no further attempt can start");

    final RetryingClientInterceptor engine;
    final RetryingClientInterceptor.MethodPlan plan;
    private final MethodDescriptor<ReqT, RespT> method;
    final CallOptions callOptions;
    private final Channel next;
    final Context context;
    final boolean parallel;
    /** The committed attempt once it has caught up and nothing is being delivered. */
    volatile @Nullable Attempt passThrough;
    /** The application's listener: set once by {@link #start} before any attempt exists. */
    private Listener<RespT> listener;

    @GuardedBy("this") private final CallBuffer record = new CallBuffer();
    /** The attempt started last; each links to the one before (the call's attempts, newest first). */
    @GuardedBy("this") private @Nullable Attempt newest;
    @GuardedBy("this") @Nullable Attempt committed;
    @GuardedBy("this") private @Nullable Extra extra;
    /**
     * Where the call stands: a {@link CallPhase}'s ordinal, changed only by its transitions, each of which checks it
     * ({@link #phase(CallPhase)}). A byte, not a reference, to keep the call object at 64 bytes (SuccessPathAllocationTest).
     */
    @GuardedBy("this") private byte phase;
    /** 1 while a thread calls the listener (serialiser or pass-through), 2 when others queued meanwhile (by BUSY). */
    private volatile byte busy;
    private static final VarHandle BUSY = handle(EngineCall.class, "busy", byte.class);
    /** An attempt's drain: no thread sends to it, one does, one does and was left more to do (by DRAIN). */
    private static final byte FREE = 0, OWNED = 1, MOVED = 2;
    private static final VarHandle DRAIN = handle(EngineCall.Attempt.class, "drain", byte.class);

    /** The call's state beyond the success path, made on first use; guarded as {@link Attempt}'s fields are. */
    class Extra {
        @Nullable SuppressionReason commitReason; // why the call was committed, when not by a response
        /** The call's one pending timer (a retry's backoff, the next hedge) and its generation. */
        RetryScheduler.@Nullable Timer timer;
        int timerGeneration;
        long timerStartNanos;
        long waitedNanos;
        long lastWaitNanos; // what the last timer waited, until an attempt takes it (observed calls)
        @Nullable DelaySource delaySource; // where the pending retry's delay came from, until the retry takes it
        boolean shutDown; // the scheduler refused a timer: it is closed, a failure that needs one ends SHUTTING_DOWN
        Context.@Nullable CancellationListener contextListener;
        @Nullable Runnable onChannelShutdown; // while the call waits alone for a timer on a watched channel
        @Nullable ChannelShutdown watchedBy; // the watch it waits on
        @Nullable Status listenerFailure; // the listener threw (not in onClose): its close gets this, nothing else
        @Nullable ArrayDeque<Runnable> pending; // deliveries waiting for the thread that is delivering
        @Nullable ObservedCall observed; // the call as the engine's observer follows it (set at start, never changed)
        int transparentRetries; // streams grpc-java sent again transparently under the call's attempts
    }

    /** Why a hedge is cancelled when another won, or the call ended (a cancelled call's attempts get its status). */
    static final Status LOST = Status.CANCELLED.withDescription("hedged attempt not needed: another attempt committed");
    static final Status ENDED = Status.CANCELLED.withDescription("hedged attempt not needed: the call ended");

    private enum Signal { HEADERS, MESSAGE, READY, CLOSE } // a callback to the application's listener

    /** What a drain's turn does: send the attempt one operation of the record, issue its cancel, or end caught up. */
    private enum Step { SEND, CANCEL, CAUGHT_UP }

    @SuppressWarnings("NullAway.Init") // listener: null until start() sets it, and nothing calls it before
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

    /** Under lock: what follows the failure of uncommitted {@code a} (the core admits and schedules it). */
    @GuardedBy("this")
    abstract Decision afterFailureLocked(Attempt a, Status status, Metadata trailers);

    /** Under lock: whether the policy would have retried this failure of the committed attempt. */
    @GuardedBy("this")
    abstract boolean wouldRetry(Status status, Metadata trailers);

    /** Sends the next attempt: the timer fired, or a hedge goes at once. */
    abstract void nextAttempt();

    /** Under lock: time spent between attempts, for {@code callEnded}: by default what the timers ran. */
    @GuardedBy("this")
    long waitedNanos() {
        return extra == null ? 0 : extra.waitedNanos;
    }

    /** Before {@link #start}'s locked section. */
    void starting() {
    }

    /** Under lock, once attempt {@code a} is open. */
    @GuardedBy("this")
    void openedLocked(Attempt a) {
    }

    CallOptions attemptOptions(Attempt a) {
        return callOptions;
    }

    /** Attempt {@code a} started and caught up. */
    void launched(Attempt a) {
    }

    /** The call ended after {@code attempts} attempts: after {@code callEnded}, before the listener's close. */
    void ended(Status status, int attempts) {
    }

    Extra newExtra() {
        return new Extra();
    }

    private static VarHandle handle(Class<?> owner, String field, Class<?> type) {
        try {
            return MethodHandles.lookup().findVarHandle(owner, field, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Under lock, after a change that {@code a} may have to be sent: takes its drain (true), or leaves its owner a
     * note that there is more (false). Every take and note happens under the lock, and an owner gives the drain
     * up under it too, or without it by OWNED to FREE only ({@link #sendMine}), which fails once a note is left:
     * either the owner sees the change under the lock, or the drain was free when the change was made.
     */
    @GuardedBy("this")
    private boolean takeOrNoteLocked(Attempt a) {
        if (ownedNotedLocked(a)) {
            return false;
        }
        a.drain = OWNED; // free: only a take under the lock changes that
        return true;
    }

    /** Under lock: whether a thread owns {@code a}'s drain; if so, it is left a note that there is more. */
    @GuardedBy("this")
    private boolean ownedNotedLocked(Attempt a) {
        for (byte d = a.drain; d != FREE; d = a.drain) { // its owner may give it up meanwhile
            if (d == MOVED || DRAIN.compareAndSet(a, OWNED, MOVED)) {
                return true;
            }
        }
        return false;
    }

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
            if (phase() == CallPhase.CANCELLED) {
                throw new IllegalStateException("call was cancelled");
            }
            listener = responseListener;
            if (followed != null) {
                extra().observed = new ObservedCall(followed);
            }
            startHeaders.discardAll(RetryingCall.PREVIOUS_ATTEMPTS); // the engine's; the headers are the call's now
            record.start(startHeaders);
            first = openLocked();
        }
        if (engine.budget != null) {
            engine.budget.onCall();
        }
        engine.events.callStarted(target());
        launch(first, startHeaders);
    }

    @Override
    public final void request(int numMessages) {
        if (numMessages < 0) {
            throw new IllegalArgumentException("numMessages must be >= 0");
        }
        op(CallBuffer.REQUEST, numMessages, null);
    }

    @Override
    public final void sendMessage(ReqT message) {
        op(CallBuffer.MESSAGE, 0, message);
    }

    @Override
    public final void halfClose() {
        op(CallBuffer.HALF_CLOSE, 0, null);
    }

    @Override
    public final void setMessageCompression(boolean enabled) {
        op(CallBuffer.COMPRESSION, enabled ? 1 : 0, null);
    }

    /** An operation of the application's: to the pass-through, else recorded and drained to every attempt. */
    private void op(int op, int n, @Nullable Object message) {
        Attempt p = passThrough;
        if (p != null) {
            send(p, false, op, n, message);
            return;
        }
        if (op == CallBuffer.MESSAGE) {
            Objects.requireNonNull(message, "message"); // kept as it is: each attempt's call marshals it (§2)
        }
        Attempt head;
        Attempt mine = null; // the newest attempt, idle and caught up: this thread sends it this operation
        boolean uncommitted = false; // mine may end its drain without the lock (committed: the end may begin the pass-through)
        synchronized (this) {
            if (phase().ended()) {
                return;
            }
            if (record.halfClosed() && (op == CallBuffer.MESSAGE || op == CallBuffer.HALF_CLOSE)) {
                throw new IllegalStateException(op == CallBuffer.MESSAGE ? "call was half-closed" : "call already half-closed");
            }
            p = passThrough; // begun meanwhile
            head = newest;
            if (p == null && head != null && head.phase.open() && caughtUpLocked(head)
                    && takeOrNoteLocked(head)) {
                mine = head; // its drain's owner now, with the cursor moved past this operation
                mine.sentDemand += op == CallBuffer.REQUEST ? n : 0;
                mine.sentMessages += op == CallBuffer.MESSAGE ? 1 : 0;
                mine.sentHalfClose |= op == CallBuffer.HALF_CLOSE;
                head = head.prev;
            }
            if (p == null) {
                record.record(op, n, message);
            }
            if (mine != null) {
                mine.sentCompression = record.compression();
                uncommitted = committed == null;
            }
        }
        if (p != null) {
            send(p, false, op, n, message);
        }
        // the older attempts first, as grpc-java sends to its drained attempts: with a buffer limit the
        // first attempt to write past it is committed (§2)
        drainAll(head);
        if (mine == null) {
            return;
        }
        if (send(mine, true, op, n, message)) {
            sendMine(mine, uncommitted);
        }
    }

    /**
     * After this thread sent {@code mine} the operation it recorded: on an uncommitted call, with no note left
     * meanwhile ({@link #takeOrNoteLocked}), its drain ends without the lock (it had caught up and replayed before,
     * so the drain's end has nothing else to do); else it drains under the lock.
     */
    private void sendMine(Attempt mine, boolean uncommitted) {
        if (!uncommitted || !DRAIN.compareAndSet(mine, OWNED, FREE)) {
            drain(mine, true);
        }
    }

    /**
     * Sends {@code a} one operation; false when its call threw. As grpc-java's {@code ClientCallImpl} does when its
     * stream fails to take a message, that attempt is cancelled (here when this thread is its drain's
     * {@code owner}, else by the thread that takes the drain) and the call ends {@code CANCELLED} with the
     * exception as the cause; an {@link Error} is thrown on after that.
     */
    private boolean send(Attempt a, boolean owner, int op, int n, @Nullable Object message) {
        try {
            apply(a.call, op, n, message);
            return true;
        } catch (RuntimeException | Error e) {
            Status failure = Status.CANCELLED.withDescription(op == CallBuffer.MESSAGE ? "Failed to stream message"
                    : op == CallBuffer.REQUEST ? "Failed to request messages"
                    : op == CallBuffer.HALF_CLOSE ? "Failed to half-close" : "Failed to set message compression")
                    .withCause(e);
            synchronized (this) {
                if (a.phase.open()) {
                    a.phase = a.phase.markCancel(false);
                    a.cancel = failure;
                }
            }
            cancelWith(failure); // may find the call ended already: a's cancel is issued below all the same
            drain(a, owner);
            if (e instanceof Error err) {
                throw err;
            }
            return false;
        }
    }

    @SuppressWarnings("unchecked")
    private void apply(ClientCall<ReqT, RespT> call, int op, int n, @Nullable Object message) {
        switch (op) {
            case CallBuffer.REQUEST -> call.request(n);
            case CallBuffer.MESSAGE -> call.sendMessage((ReqT) message);
            case CallBuffer.HALF_CLOSE -> call.halfClose();
            default -> call.setMessageCompression(n != 0);
        }
    }

    /** Ready when an attempt that is or may become the call's, and has caught up, is (grpc-java does the same). */
    @Override
    public final boolean isReady() {
        Attempt p = passThrough;
        if (p != null) {
            return p.call.isReady();
        }
        for (Attempt a = head(); a != null; a = a.prev) {
            if (candidate(a) && a.call.isReady()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public final Attributes getAttributes() {
        Attempt p = passThrough;
        Attempt oldest = p;
        for (Attempt a = p != null ? null : head(); a != null; a = a.prev) {
            oldest = candidate(a) ? a : oldest;
        }
        return oldest == null ? Attributes.EMPTY : oldest.call.getAttributes();
    }

    private synchronized @Nullable Attempt head() {
        return newest;
    }

    /** Whether {@code a} is or may become the call's, and has caught up with the record once. */
    private synchronized boolean candidate(Attempt a) {
        return !phase().ended() && a.phase == AttemptPhase.LIVE
                && (committed == null || committed == a);
    }

    @Override
    public final void cancel(@Nullable String message, @Nullable Throwable cause) {
        cancelWith(Status.CANCELLED.withDescription(message != null ? message : "Call cancelled without message")
                .withCause(cause));
    }

    /** Ends the call now (application, listener, Context, shut-down): attempts, timer cancelled; then only the close. */
    private void cancelWith(Status status) {
        Attempt head;
        synchronized (this) {
            if (phase().ended()) {
                return;
            }
            phase(phase().cancel(committed != null));
            if (listener == null) {
                return; // before start: start() will refuse
            }
            passThrough = null; // every callback goes through the lock again: only the close is delivered
            markCancelLocked(null, status);
            settleLocked(); // ends now: a cancelled stream may never close (docs/design.md §18)
            head = newest;
        }
        drainAll(head);
        endLater(status);
    }

    /** Counts and links a new attempt (under lock). */
    @GuardedBy("this")
    final Attempt openLocked() {
        Attempt a = new Attempt(attempts() + 1, newest);
        newest = a;
        openedLocked(a);
        return a;
    }

    /** Starts {@code a} in the call's Context (the first with the application's headers), replays the record. */
    final void launch(Attempt a, @Nullable Metadata firstHeaders) {
        Metadata headers = firstHeaders;
        long delay = -1;
        DelaySource source = null;
        ObservedCall followed = null;
        if (a.number > 1 || engine.observer != null) {
            synchronized (this) {
                followed = extra == null ? null : extra.observed;
                if (a.number > 1 && extra != null) {
                    delay = extra.lastWaitNanos;
                    extra.lastWaitNanos = 0; // a hedge sent at once after a failure waited for no timer
                    source = extra.delaySource;
                    extra.delaySource = null;
                }
                if (a.number > 1) {
                    headers = record.attemptHeaders();
                    headers.put(RetryingCall.PREVIOUS_ATTEMPTS, RetryingCall.previousAttemptsValue(a.number - 1));
                }
            }
        }
        engine.events.attemptStarted(target(), kind(a), a.number);
        // headers: the application's for the first attempt, the record's copy for the later ones
        AttemptObserver.Scope scope = followed == null ? null
                : followed.starting(kind(a), a.number, delay, source, Objects.requireNonNull(headers));
        Context previous = context == Context.current() ? null : context.attach();
        boolean callStarted = false;
        try {
            // every attempt's streams are traced: the bytes they write count against the buffer limits (§2)
            Streams streams = new Streams(a, followed);
            a.streams = streams; // the call's backends so far, for the balancer (TriedBackends)
            CallOptions options = attemptOptions(a).withStreamTracerFactory(streams);
            a.call = next.newCall(method, options);
            a.call.start(a, headers);
            callStarted = true;
            drain(a, true);
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

    /** Drains every attempt from {@code head} back, the oldest first: each is sent what it lacks, or its cancel. */
    private void drainAll(@Nullable Attempt head) {
        if (head != null) {
            drainAll(head.prev); // as deep as the call has attempts (within the channel's cap)
            drain(head, false);
        }
    }

    /**
     * The one drain loop: sends {@code a} what of the record it lacks, one operation at a time, or its cancel;
     * one thread owns an attempt's drain at a time ({@code owner}: its launcher owns it from the start).
     */
    @SuppressWarnings("unchecked")
    private void drain(Attempt a, boolean owner) {
        while (true) {
            Step step = Step.SEND;
            int op = 0;
            int n = 0;
            Object message = null;
            boolean readyMissed = false;
            synchronized (this) {
                if (!owner && (a.phase.takesNothing() || !takeOrNoteLocked(a))) {
                    return;
                }
                owner = true;
                if (a.phase.takesNothing()) { // nothing more goes to it
                    a.drain = FREE;
                    return;
                }
                if (a.phase == AttemptPhase.CANCELLING) {
                    a.phase = a.phase.issueCancel(); // its drain stays owned: nothing more is sent to it
                    step = Step.CANCEL;
                } else if (a.sentDemand != record.demand()) {
                    long more = record.demand() - a.sentDemand;
                    n = (int) Math.min(more, Integer.MAX_VALUE);
                    a.sentDemand += n;
                    op = CallBuffer.REQUEST;
                } else if (a.sentMessages < record.count()
                        && a.sentCompression != record.compressionOf(a.sentMessages)) {
                    a.sentCompression = record.compressionOf(a.sentMessages); // each message as it was sent
                    op = CallBuffer.COMPRESSION;
                    n = a.sentCompression - 1;
                } else if (a.sentMessages < record.count()) {
                    message = record.message(a.sentMessages++);
                    op = CallBuffer.MESSAGE;
                } else if (a.sentCompression != record.compression()) {
                    a.sentCompression = record.compression(); // set after the last message
                    op = CallBuffer.COMPRESSION;
                    n = a.sentCompression - 1;
                } else if (a.sentHalfClose != record.halfClosed()) {
                    a.sentHalfClose = true;
                    op = CallBuffer.HALF_CLOSE;
                } else {
                    a.drain = FREE;
                    readyMissed = (a.readyMissed || a.number > 1) && a.phase == AttemptPhase.STARTING; // a retry may start ready, unheard
                    a.phase = a.phase.caughtUp();
                    if (!readyMissed) {
                        passThroughLocked(); // else after that onReady's delivery
                    }
                    step = Step.CAUGHT_UP;
                }
            }
            if (step == Step.CANCEL) {
                a.cancelNow();
                return;
            }
            if (step == Step.CAUGHT_UP) {
                caughtUp(a, readyMissed);
                return;
            }
            if (!send(a, true, op, n, message)) {
                return;
            }
        }
    }

    /** {@code a}'s drain ended caught up: an onReady it missed while catching up is heard now, then the pass-through. */
    private void caughtUp(Attempt a, boolean readyMissed) {
        if (readyMissed && a.call.isReady()) {
            receive(a, Signal.READY, null); // became ready while catching up: not heard then
        } else if (readyMissed) {
            synchronized (this) {
                passThroughLocked();
            }
        }
    }

    /** {@code a} failed to start: a started channel call is cancelled (its close ends it), else it ends here. */
    private void startFailed(Attempt a, boolean callStarted, RuntimeException e) {
        Status status = Status.INTERNAL.withDescription("could not start " + (a.number == 1 ? "the first attempt"
                : parallel ? "a hedged attempt" : "a retry attempt")).withCause(e);
        synchronized (this) {
            if (a.phase.open() || a.phase == AttemptPhase.CANCELLING) {
                a.phase = a.phase.markCancel(true);
            }
            a.cancel = status;
            a.startFailed = true;
        }
        if (callStarted) {
            drain(a, true); // still its owner: issues the cancel
            return;
        }
        if (a.call != null) {
            a.call.cancel(status.getDescription(), e); // its start threw: nothing else sends to it
        }
        closed(a, status, new Metadata());
    }

    /** A callback from {@code a}: a response commits to it; delivered when {@code a} is (or may become) the call's. */
    private void receive(Attempt a, Signal s, @Nullable Object value) {
        boolean newly = false;
        boolean deliver;
        Attempt head = null;
        synchronized (this) {
            if (s != Signal.READY && phase() == CallPhase.OPEN && a.phase != AttemptPhase.CLOSED) {
                head = commitLocked(a, SuppressionReason.COMMITTED) ? newest : null; // the others to cancel
                newly = true;
            }
            a.readyMissed |= s == Signal.READY && a.phase == AttemptPhase.STARTING;
            boolean mine = s == Signal.READY ? a.phase == AttemptPhase.LIVE && !phase().ended()
                    && (committed == null || committed == a) : committed == a;
            deliver = mine && phase() != CallPhase.CANCELLED && enterLocked(s, value, null);
        }
        drainAll(head);
        if (newly) {
            engine.events.committed(target(), a.number);
        }
        if (deliver) {
            emit(s, value, null);
            release();
        }
    }

    /** The one end of an attempt: reports it once; the attempt that settles the call ends it. */
    private void closed(Attempt a, Status attemptStatus, Metadata attemptTrailers) {
        Status status = attemptStatus;
        Metadata trailers = attemptTrailers;
        Decision d = null;
        SuppressionReason suppressed = null;
        ObservedCall followed;
        boolean wasCommitted;
        boolean cancelledHere;
        boolean end;
        Attempt head;
        int attempts = 0;
        int transparent = 0;
        long waited = 0;
        @Nullable Status failure = null;
        boolean deliver = false;
        boolean watchShutdown = false;
        synchronized (this) {
            if (a.phase == AttemptPhase.CLOSED) {
                return;
            }
            a.phase = a.phase.close();
            followed = extra == null ? null : extra.observed;
            wasCommitted = committed == a;
            if (a.startFailed) {
                attemptStatus = status = Objects.requireNonNull(a.cancel); // set where the start failed
                attemptTrailers = trailers = new Metadata();
            }
            cancelledHere = a.cancel != null && !a.startFailed;
            end = !phase().ended() && (committed == null || committed == a); // else settled: it only reports its end
            if (!end || a.startFailed) {
                suppressed = null; // nothing to decide
            } else if (wasCommitted) {
                suppressed = Decision.afterCommit(extra == null ? null : extra.commitReason,
                        !status.isOk() && wouldRetry(status, trailers));
            } else if (!status.isOk() && ChannelShutdown.closedByShutdown(status, shutdownWatch())) {
                cancelTimerLocked(); // the channel is shut down: no attempt can start on it, it ends with its status
                end = liveLocked() == 0;
            } else if (!status.isOk() && !context.isCancelled()) {
                d = decideLocked(a, status, trailers); // a failure that needs no further attempt ends as answered
                if (d instanceof Decision.Stop s) {
                    suppressed = s.reason();
                    end = liveLocked() == 0 && (extra == null || extra.timer == null);
                } else if (d instanceof Decision.End e) {
                    suppressed = e.reason();
                } else if (d != null && (extra == null || !extra.shutDown)) {
                    end = false;
                } else {
                    d = null; // no timer can fire (a timer was refused: the scheduler is closed)
                    status = SHUTTING_DOWN;
                    trailers = new Metadata();
                }
                watchShutdown = !end && shutdownWatchLocked();
            }
            head = end && finishLocked() ? newest : null; // the others to cancel
            if (end) { // settled: nothing but its close can be delivered any more; it enters now unless one delivers
                attempts = attempts();
                transparent = extra == null ? 0 : extra.transparentRetries;
                waited = waitedNanos();
                failure = extra == null ? null : extra.listenerFailure;
                deliver = BUSY.compareAndSet(this, (byte) 0, (byte) 1);
            }
        }
        if (watchShutdown) {
            watchShutdown(); // outside the lock: a channel shut down already ends the call at once
        }
        engine.events.attemptEnded(target(), kind(a), a.number, attemptStatus.getCode());
        if (followed != null) {
            followed.ended(a.number, attemptStatus, attemptTrailers, wasCommitted, cancelledHere);
        }
        drainAll(head);
        if (d instanceof Decision.Retry r) {
            engine.events.retryScheduled(target(), a.number + 1, r.delayNanos(), r.source());
        }
        if (suppressed != null) {
            suppressed(suppressed, attemptStatus.getCode());
        }
        if (end && deliver) {
            endCall(status, trailers, attempts, transparent, waited, failure, true);
        } else if (end) {
            endCall(status, trailers); // behind the delivery on: reported first, then queued
        } else if (d instanceof Decision.Hedge h && h.delayNanos() == 0) {
            nextAttempt();
        }
    }

    /** Under lock: what follows a failure of uncommitted {@code a}, admitted and timed; null: scheduler closed. */
    @GuardedBy("this")
    private @Nullable Decision decideLocked(Attempt a, Status status, Metadata trailers) {
        if (a.cancel == null && status.getCode() == Status.Code.CANCELLED && status.getCause() != null) {
            // cancelled on this side, below the engine: its call failed to send (grpc-java's ClientCallImpl, when the
            // marshaller throws) or an interceptor gave up on it; grpc-java's retry ends such a call, never retries it
            return new Decision.End(SuppressionReason.NON_RETRYABLE_STATUS);
        }
        Decision d = afterFailureLocked(a, status, trailers);
        d = d instanceof Decision.Retry ? Decision.admit(d, engine.budget) : d;
        long delay = d instanceof Decision.Retry r ? r.delayNanos() : d instanceof Decision.Hedge h ? h.delayNanos() : -1;
        if (d instanceof Decision.Retry r) {
            extra().delaySource = r.source();
        }
        if (delay == 0 && d instanceof Decision.Hedge) {
            cancelTimerLocked(); // the next hedge goes now
        } else if (delay >= 0 && !scheduleLocked(delay)) {
            return null;
        } else if (delay >= 0 && liveLocked() == 0) {
            watchContextLocked(); // nothing in flight until the timer fires
        }
        return d;
    }

    /** A retry or hedge that will not go, and why: to the listener and the observer. */
    final void suppressed(SuppressionReason reason, Status.Code code) {
        engine.events.retrySuppressed(target(), reason, code);
        ObservedCall followed = observed();
        if (followed != null) {
            followed.retrySuppressed(reason, code);
        }
    }

    /** Ends the settled call: reports it, then closes the listener through the serialiser. */
    final void endCall(Status status, Metadata trailers) {
        int attempts;
        int transparent;
        long waited;
        @Nullable Status failure;
        boolean deliver;
        synchronized (this) { // nothing but this close can be delivered after it: it may enter now
            attempts = attempts();
            transparent = extra == null ? 0 : extra.transparentRetries;
            waited = waitedNanos();
            failure = extra == null ? null : extra.listenerFailure;
            deliver = enterLocked(Signal.CLOSE, status, trailers);
        }
        endCall(status, trailers, attempts, transparent, waited, failure, deliver);
    }

    /**
     * The rest of {@link #endCall(Status, Metadata)} once its locked part ran (in the caller's own section):
     * {@code deliver}, this thread entered the serialiser with the close; {@code failure}, what the listener threw.
     */
    private void endCall(Status status, Metadata trailers, int attempts, int transparent, long waited,
            @Nullable Status failure, boolean deliver) {
        Status.Code code = status.getCode();
        if (code == Status.Code.OK && engine.throttle != null) {
            engine.throttle.onSuccess();
        }
        int later = attempts - 1; // no attempt starts any more
        engine.events.callEnded(target(), code, parallel ? 0 : later, parallel ? later : 0, transparent, waited);
        ended(status, attempts);
        if (deliver) {
            emit(Signal.CLOSE, failure != null ? failure : status, failure != null ? new Metadata() : trailers);
            release();
        }
    }

    /**
     * Ends the call on its executor (here when it refuses: the listener must close), within the call's Context as
     * every callback of grpc-java's is; nothing else delivers.
     */
    private void endLater(Status status) {
        Runnable end = context.wrap(() -> endCall(status, new Metadata()));
        try {
            executor().execute(end);
        } catch (RejectedExecutionException e) {
            end.run();
        }
    }

    /** Under lock: whether this thread calls the listener now (it is busy then); false when queued for the busy one. */
    @GuardedBy("this")
    private boolean enterLocked(Signal s, @Nullable Object value, @Nullable Metadata trailers) {
        while (!BUSY.compareAndSet(this, (byte) 1, (byte) 2) && busy != 2) { // the busy one will find it queued
            if (BUSY.compareAndSet(this, (byte) 0, (byte) 1)) {
                return true;
            }
        }
        Extra x = extra();
        if (x.pending == null) {
            x.pending = new ArrayDeque<>(4);
        }
        x.pending.add(() -> deliver(s, value, trailers));
        return false;
    }

    /** Ends this thread's turn at the listener: first what was queued meanwhile; then a deferred pass-through. */
    private void release() {
        while (!BUSY.compareAndSet(this, (byte) 1, (byte) 0)) {
            Runnable r;
            synchronized (this) {
                ArrayDeque<Runnable> queue = Objects.requireNonNull(extra().pending); // busy 2: queued
                r = queue.poll();
                busy = (byte) (queue.isEmpty() ? 1 : 2);
            }
            r.run();
        }
        if (passThrough == null) {
            synchronized (this) {
                passThroughLocked();
            }
        }
    }

    /**
     * A queued callback: once the call is cancelled (queued before the cancel or not) the listener hears only its
     * close; once the listener threw, that close carries the failure.
     */
    private void deliver(Signal s, @Nullable Object value, @Nullable Metadata trailers) {
        Status failure;
        synchronized (this) {
            if (phase() == CallPhase.CANCELLED && s != Signal.CLOSE) {
                return;
            }
            failure = extra == null ? null : extra.listenerFailure;
        }
        if (failure == null) {
            emit(s, value, trailers);
        } else if (s == Signal.CLOSE) {
            emit(s, failure, new Metadata());
        }
    }

    /** The one call into the listener: an exception cancels the whole call, or is logged from its close. */
    @SuppressWarnings("unchecked")
    private void emit(Signal s, @Nullable Object value, @Nullable Metadata trailers) {
        try {
            switch (s) {
                case HEADERS -> listener.onHeaders((Metadata) value);
                case MESSAGE -> listener.onMessage((RespT) value);
                case READY -> listener.onReady();
                default -> listener.onClose((Status) value, trailers);
            }
        } catch (RuntimeException | Error e) {
            if (s == Signal.CLOSE) {
                LOG.log(System.Logger.Level.WARNING, "the application's onClose threw (the call is closed)", e);
            } else {
                String cb = s == Signal.HEADERS ? "onHeaders" : s == Signal.MESSAGE ? "onMessage" : "onReady";
                Status failure = Status.CANCELLED.withDescription("the application's " + cb + " threw").withCause(e);
                synchronized (this) {
                    Extra x = extra();
                    x.listenerFailure = x.listenerFailure == null ? failure : x.listenerFailure;
                }
                cancelWith(failure);
            }
        }
    }

    /** Commits to {@code a}: no further attempt or timer; whether others were marked to be cancelled (by their drain). */
    @GuardedBy("this")
    private boolean commitLocked(Attempt a, SuppressionReason reason) {
        phase(phase().commit(committed != null));
        committed = a;
        if (reason != SuppressionReason.COMMITTED || extra != null) {
            Extra x = extra();
            x.commitReason = reason;
        }
        stopWaitingLocked();
        passThroughLocked();
        return markCancelLocked(a, LOST);
    }

    /** Once the committed attempt caught up its record goes, and it passes through unless a delivery is on. */
    @GuardedBy("this")
    private void passThroughLocked() {
        Attempt c = committed;
        if (c == null || c.phase != AttemptPhase.LIVE || ownedNotedLocked(c) || !caughtUpLocked(c)) {
            return; // the owner of its drain begins it when the drain ends
        }
        if (record.count() > 0) {
            record.release(engine.bufferPool);
            c.sentMessages = 0;
        }
        if (busy == 0 && !phase().ended()) {
            passThrough = c;
        }
    }

    /** The outcome is decided: timer, record and Context listener go; whether other attempts are to be cancelled. */
    @GuardedBy("this")
    final boolean finishLocked() {
        phase(phase().finish(committed != null));
        return settleLocked();
    }

    /** Once the call ended (finished or cancelled): its timer, record and Context listener go; whether others are to be cancelled. */
    @GuardedBy("this")
    private boolean settleLocked() {
        stopWaitingLocked();
        record.release(engine.bufferPool);
        return markCancelLocked(committed, ENDED);
    }

    /** Marks every open attempt but {@code except} to be cancelled (their drain's owner issues it); whether any. */
    @GuardedBy("this")
    private boolean markCancelLocked(@Nullable Attempt except, Status why) {
        boolean any = false;
        for (Attempt a = newest; a != null; a = a.prev) {
            if (a != except && a.phase.open()) {
                a.phase = a.phase.markCancel(false);
                a.cancel = why;
                any = true;
            }
        }
        return any;
    }

    /** Whether {@code a} was sent the whole record. */
    @GuardedBy("this")
    private boolean caughtUpLocked(Attempt a) {
        return a.sentMessages == record.count() && a.sentDemand == record.demand() && a.sentHalfClose == record.halfClosed()
                && a.sentCompression == record.compression();
    }

    /**
     * Schedules the call's timer (replacing a pending one): {@link #nextAttempt}, or the end of the call when
     * the scheduler closes first. False when it is closed already: the call ends {@link #SHUTTING_DOWN}.
     */
    @GuardedBy("this")
    final boolean scheduleLocked(long delayNanos) {
        cancelTimerLocked();
        Extra x = extra();
        int generation = ++x.timerGeneration;
        x.timerStartNanos = System.nanoTime();
        x.timer = engine.scheduler.schedule(() -> timerFired(generation), () -> cancelWith(SHUTTING_DOWN),
                executor(), delayNanos);
        x.shutDown |= x.timer == null;
        return x.timer != null;
    }

    /** On the call's executor, within the call's Context; a timer replaced or cancelled since does nothing. */
    private void timerFired(int generation) {
        synchronized (this) {
            Extra x = extra;
            if (x == null || x.timer == null || generation != x.timerGeneration) {
                return;
            }
            x.timer = null;
            long waited = System.nanoTime() - x.timerStartNanos;
            x.waitedNanos += waited;
            x.lastWaitNanos = waited;
            stopWaitingLocked();
        }
        Context previous = context.attach(); // the next attempt, or the end of the call (its close to the listener)
        try {
            nextAttempt();
        } finally {
            context.detach(previous);
        }
    }

    @GuardedBy("this")
    final void cancelTimerLocked() {
        Extra x = extra;
        RetryScheduler.Timer t = x == null ? null : x.timer;
        if (x != null && t != null) {
            x.timer = null;
            t.cancel();
            x.waitedNanos += System.nanoTime() - x.timerStartNanos;
        }
    }

    /** No more waiting for a timer: it is cancelled and the Context no longer watched. */
    @GuardedBy("this")
    private void stopWaitingLocked() {
        Extra x = extra;
        Context.CancellationListener cl = x == null ? null : x.contextListener;
        cancelTimerLocked();
        if (x != null && x.onChannelShutdown != null && x.watchedBy != null) {
            x.watchedBy.remove(x.onChannelShutdown);
            x.onChannelShutdown = null;
        }
        if (x != null && cl != null) {
            x.contextListener = null;
            context.removeListener(cl);
        }
    }

    /** While a timer is pending and nothing is in flight, the Context's cancellation cancels the call. */
    @GuardedBy("this")
    private void watchContextLocked() {
        Extra x = extra();
        if (context != Context.ROOT && x.contextListener == null) { // ROOT cannot be cancelled
            x.contextListener = c -> cancelWith(Contexts.statusFromCancelled(c));
            context.addListener(x.contextListener, executor());
        }
    }

    /**
     * The watch of the channel below when the engine knows it: handed the ManagedChannel itself, or told of it
     * ({@link RetryingClientInterceptor#watchShutdown}); else null.
     */
    private @Nullable ChannelShutdown shutdownWatch() {
        return next instanceof ManagedChannel mc ? engine.shutdownWatch(mc) : engine.watchedShutdown();
    }

    /**
     * Under lock, once a timer is pending and nothing is in flight: whether the call is to wait on the channel's
     * shut-down too (the engine knows the ManagedChannel), by {@link #watchShutdown} after the lock.
     */
    @GuardedBy("this")
    private boolean shutdownWatchLocked() {
        Extra x = extra;
        ChannelShutdown w = shutdownWatch();
        if (w == null || x == null || x.timer == null || liveLocked() > 0 || x.onChannelShutdown != null) {
            return false;
        }
        x.onChannelShutdown = this::channelShutDown;
        x.watchedBy = w;
        return true;
    }

    private void watchShutdown() {
        Runnable r;
        ChannelShutdown w;
        synchronized (this) {
            r = extra == null ? null : extra.onChannelShutdown;
            w = extra == null ? null : extra.watchedBy;
        }
        if (r != null && w != null) {
            w.add(r, executor());
        }
    }

    /** The channel shut down while the call waited for a timer with nothing in flight: no attempt can follow. */
    private void channelShutDown() {
        synchronized (this) {
            if (extra == null || extra.onChannelShutdown == null) {
                return; // it waits no more
            }
            extra.onChannelShutdown = null;
        }
        cancelWith(ChannelShutdown.SHUTDOWN);
    }

    /** The call's state beyond the success path, made on first use (under lock). */
    @GuardedBy("this")
    final Extra extra() {
        if (extra == null) {
            extra = newExtra();
        }
        return extra;
    }

    /** The call as the engine's observer follows it, or null. */
    private synchronized @Nullable ObservedCall observed() {
        return extra == null ? null : extra.observed;
    }

    @GuardedBy("this")
    final int attempts() {
        return newest == null ? 0 : newest.number;
    }

    /** Attempts started and not closed. */
    @GuardedBy("this")
    final int liveLocked() {
        int n = 0;
        for (Attempt a = newest; a != null; a = a.prev) {
            n += a.phase == AttemptPhase.CLOSED ? 0 : 1;
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

    /**
     * A stream of {@code a} wrote {@code bytes} more of its messages, as its transport counts them after the write
     * (grpc-java's own retry counts its buffer the same way): the call holds, against the per-RPC limit and the
     * channel's pool, as many bytes as its attempt that wrote the most; the attempt whose write passes a limit is
     * committed (§2). Called on the thread that writes (the one that sends, or a transport's), at times under the
     * transport's own lock: it takes the call's lock only until the commit, then cancels the others as a commit
     * by a response does.
     */
    private void wrote(Attempt a, Written stream, long bytes) {
        if (passThrough != null) {
            return; // committed: nothing is held any more
        }
        Attempt head;
        synchronized (this) {
            if (phase() != CallPhase.OPEN || a.phase == AttemptPhase.CLOSED) {
                return;
            }
            stream.bytes += bytes;
            long more = stream.bytes - record.held();
            if (more <= 0 || record.tryAdd(more, engine.perRpcBufferLimit, engine.bufferPool)) {
                return;
            }
            head = commitLocked(a, SuppressionReason.BUFFER_LIMIT) ? newest : null;
        }
        drainAll(head);
        engine.events.committed(target(), a.number);
    }

    /**
     * Asked by grpc-java for a tracer of each stream of one attempt: each counts what it writes ({@link #wrote}); a
     * stream that is a transparent retry (the server refused the one before it unprocessed) writes the attempt's
     * messages again from zero, and is counted for the call and told to the attempt's observer. Called on the
     * thread that makes the stream (a transport thread for a transparent retry): no blocking. It is also the
     * attempt's place in the call's history of backends, which the balancer reads from the attempt's call options
     * ({@link TriedBackends}).
     */
    private final class Streams extends TriedBackends {
        private final Attempt attempt;
        private final @Nullable ObservedCall followed;

        Streams(Attempt attempt, @Nullable ObservedCall followed) {
            this.attempt = attempt;
            this.followed = followed;
        }

        @Override
        public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
            if (info.isTransparentRetry()) {
                synchronized (EngineCall.this) {
                    extra().transparentRetries++;
                }
                if (followed != null) {
                    followed.transparentRetry(attempt.number);
                }
            }
            return new Written(attempt);
        }

        @Override
        protected @Nullable TriedBackends earlier() {
            for (Attempt p = attempt.prev; p != null; p = p.prev) {
                Streams s = p.streams;
                if (s != null) {
                    return s;
                }
            }
            return null;
        }

        @Override
        protected int backendPicks() {
            return engine.backendPicks;
        }
    }

    /** The bytes one stream of an attempt wrote; guarded by the call's lock. */
    private final class Written extends ClientStreamTracer {
        private final Attempt attempt;
        long bytes;

        Written(Attempt attempt) {
            this.attempt = attempt;
        }

        @Override
        public void outboundWireSize(long bytes) {
            wrote(attempt, this, bytes);
        }

        /** The stream has its transport: the balancer's pick for it is final. */
        @Override
        public void streamCreated(Attributes transportAttrs, Metadata headers) {
            Streams s = attempt.streams;
            if (s == null) {
                return;
            }
            String reused = attempt.number == 1 ? null : s.reused();
            if (reused != null) {
                engine.events.backendReused(target(), kind(attempt), attempt.number, reused);
            }
            ObservedCall followed = s.followed;
            java.net.SocketAddress peer = followed == null ? null : transportAttrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            if (followed != null && peer != null) {
                followed.peer(attempt.number, peer); // the attempt span's network.peer.*
            }
        }
    }

    /**
     * One attempt: a listener on its channel call, its replay cursor and its cancel hand-off. Its fields are
     * guarded by the call's lock; unannotated, as Error Prone cannot name an attempt's enclosing call.
     */
    /** Under lock: where the call stands. */
    @GuardedBy("this")
    final CallPhase phase() {
        return CallPhase.ALL[phase];
    }

    /** Under lock: the call takes a transition (computed by {@link CallPhase}, which checks it). */
    @GuardedBy("this")
    private void phase(CallPhase next) {
        phase = (byte) next.ordinal();
    }

    final class Attempt extends ClientCall.Listener<RespT> {
        final int number;
        final @Nullable Attempt prev;
        ClientCall<ReqT, RespT> call; // set by its launcher before another thread can drain or read it
        /** FREE, or a thread sends to it (its launcher from the start) and the others leave it to that one. */
        volatile byte drain = OWNED;
        /** Where it stands: changed only by {@link AttemptPhase}'s transitions, each of which checks it. */
        AttemptPhase phase = AttemptPhase.STARTING;
        boolean readyMissed; // it signalled ready before it had caught up
        /** The replay cursor: what of the record it was sent. */
        int sentMessages;
        long sentDemand;
        boolean sentHalfClose;
        byte sentCompression;
        /** Why it is to be cancelled (null: not); issued once, by its drain's owner. */
        @Nullable Status cancel;
        boolean startFailed;
        /** Its stream tracer factory once launched: read by the balancer's picks of later attempts. */
        volatile @Nullable Streams streams;

        @SuppressWarnings("NullAway.Init") // call: set by its launcher before another thread can reach it
        Attempt(int number, @Nullable Attempt prev) {
            this.number = number;
            this.prev = prev;
        }

        /** Cancels it (by its drain's owner) after demand up to MAX_VALUE: in-process holds a close behind it. */
        void cancelNow() {
            long demanded;
            Status why;
            synchronized (EngineCall.this) {
                demanded = sentDemand;
                why = Objects.requireNonNull(cancel); // issued only once marked
            }
            try {
                int missing = (int) (Integer.MAX_VALUE - Math.min(Math.max(0, demanded), Integer.MAX_VALUE));
                if (missing > 0) {
                    call.request(missing);
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "request() of an attempt being cancelled threw", e); // it is cancelled all the same
            } finally {
                call.cancel(why.getDescription(), why.getCause());
            }
        }

        /** An attempt after others tells the application how many came before (A6 "exposed retry metadata"). */
        @Override
        public void onHeaders(Metadata responseHeaders) {
            if (number > 1) {
                responseHeaders.discardAll(RetryingCall.PREVIOUS_ATTEMPTS);
                responseHeaders.put(RetryingCall.PREVIOUS_ATTEMPTS, RetryingCall.previousAttemptsValue(number - 1));
            }
            signal(Signal.HEADERS, responseHeaders);
        }

        @Override
        public void onMessage(RespT message) {
            signal(Signal.MESSAGE, message);
        }

        @Override
        public void onReady() {
            signal(Signal.READY, null);
        }

        /** To the listener directly while the call passes through to it (busy meanwhile), else through the state. */
        private void signal(Signal s, @Nullable Object value) {
            boolean direct = passThrough == this && BUSY.compareAndSet(EngineCall.this, (byte) 0, (byte) 1);
            boolean emitted = direct && passThrough == this; // still: not cancelled before this thread was busy
            if (emitted) {
                emit(s, value, null);
            }
            if (direct) {
                release(); // a close queued by a cancel meanwhile goes now
            }
            if (!emitted) {
                receive(this, s, value); // through the call's state (after a cancel: dropped)
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            closed(this, status, trailers);
        }

        @Override
        public String toString() {
            return "Attempt[" + number + " " + kind(this) + "]";
        }
    }
}
