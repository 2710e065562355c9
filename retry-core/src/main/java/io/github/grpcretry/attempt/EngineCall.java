package io.github.grpcretry.attempt;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.github.grpcretry.attempt.CallState.Phase;
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
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One logical call of the interceptor engine, the core of {@link RetryingCall} and {@link HedgingCall}: one
 * {@link CallState} and an {@link AttemptPhase} per attempt, changed by their named transitions under the call's lock;
 * nothing calls into an attempt or the application under it. Its three paths, the drain ({@link #drain}), the delivery
 * ({@link #emit}) and the end of an attempt ({@link #closed}), are docs/design.md §18.
 */
abstract class EngineCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

    private static final System.Logger LOG = System.getLogger(EngineCall.class.getName());
    /** How a call that needs a timer ends once the engine's scheduler is closed. */
    static final Status SHUTTING_DOWN = Status.UNAVAILABLE.withDescription(
            "the client is shutting down: the retry engine's scheduler is closed, no further attempt can start");
    /** Why a hedge is cancelled when another won, or the call ended (a cancelled call's attempts get its status). */
    static final Status LOST = Status.CANCELLED.withDescription("hedged attempt not needed: another attempt committed");
    static final Status ENDED = Status.CANCELLED.withDescription("hedged attempt not needed: the call ended");
    /** The delivery flag, {@link #busy}: 0 nobody calls the listener, 1 a thread does, 2 and others queued meanwhile. */
    private static final VarHandle BUSY;
    /** {@link Attempt#sentDemand}, added to atomically by the application's requests while passing through. */
    private static final VarHandle SENT_DEMAND;
    /**
     * {@link Attempt#drain}: {@code FREE} nobody sends to the attempt, {@code OWNED} one thread does (its drain's
     * owner), {@code NOTED} and another thread left it something to do meanwhile. Taken, noted and given up under the
     * call's lock, except that the application's thread that sent an uncommitted call's newest attempt its own
     * operation gives it up with one compare-and-set when nobody noted anything (§18).
     */
    private static final VarHandle DRAIN;
    private static final byte FREE = 0, OWNED = 1, NOTED = 2;

    final RetryingClientInterceptor engine;
    final RetryingClientInterceptor.MethodPlan plan;
    private final MethodDescriptor<ReqT, RespT> method;
    final CallOptions callOptions;
    private final Channel next;
    final Context context;
    final boolean parallel;
    private Listener<RespT> listener; // set once by start(), before any attempt exists
    private volatile boolean cancelCalled, halfCloseCalled; // by the application ({@link #checkOp})
    /** Where the call stands: replaced under the lock by its transitions only (volatile: the pass-through reads it). */
    private volatile CallState state = CallState.INITIAL;
    /** The attempt started last, linked to the ones before: set under the lock with the state's {@code opened}. */
    private volatile @Nullable Attempt newest;
    @GuardedBy("this") private final CallBuffer record = new CallBuffer();
    @GuardedBy("this") private @Nullable Extra extra;
    private volatile byte busy;
    /** Its idle timeout and resumption (null: neither applies, nothing is counted per message). */
    final @Nullable LongStream<ReqT, RespT> stream;

    /** What a call needs beyond the success path (timers, watches, queued deliveries), made on first use. */
    final class Extra {
        @Nullable SuppressionReason commitReason; // why the call was committed, when not by a response
        RetryScheduler.@Nullable Timer timer; // the call's one pending timer (a retry's backoff, the next hedge)
        int timerGeneration;
        long timerStartNanos, waitedNanos, lastWaitNanos; // lastWait: until the attempt its timer started takes it
        @Nullable DelaySource delaySource; // where the pending retry's delay came from
        boolean shutDown; // the scheduler refused a timer: a failure that needs one ends SHUTTING_DOWN
        Context.@Nullable CancellationListener contextListener; // while a timer is pending and nothing is in flight
        @Nullable Runnable onChannelShutdown; // the same, on a channel the engine knows
        @Nullable ChannelShutdown watchedBy;
        @Nullable Status listenerFailure; // the listener threw (not in onClose): its close gets this, nothing else
        @Nullable ArrayDeque<Runnable> pending; // deliveries waiting for the thread that is delivering
        @Nullable ObservedCall observed; // the call as the engine's observer follows it (set at start)
        int transparentRetries; // streams grpc-java sent again transparently under the call's attempts
        int backoffStep; // a retried call's, as the ones below
        RetryDecider.@Nullable Call decisions; // the decider's state for this call (set at start), with a decider only
        @Nullable Deadline attemptDeadline; // of the attempt started last (null: the call's deadline is earlier)
    }

    private enum Signal { HEADERS, MESSAGE, READY, CLOSE }

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            BUSY = lookup.findVarHandle(EngineCall.class, "busy", byte.class);
            SENT_DEMAND = lookup.findVarHandle(EngineCall.Attempt.class, "sentDemand", int.class);
            DRAIN = lookup.findVarHandle(EngineCall.Attempt.class, "drain", byte.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("NullAway.Init") // listener: set by start() before anything calls it
    EngineCall(RetryingClientInterceptor engine, RetryingClientInterceptor.MethodPlan plan,
            MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next, boolean parallel) {
        this.engine = engine;
        this.plan = plan;
        this.method = method;
        this.callOptions = callOptions;
        this.next = next;
        this.parallel = parallel;
        this.context = Context.current();
        this.stream = LongStream.of(engine, plan, method, parallel);
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

    /** The deadline of attempt {@code a} when it has one of its own (a per-attempt timeout), else null. */
    @Nullable Deadline attemptDeadline(Attempt a) {
        return null;
    }

    /** Attempt {@code a} started and caught up. */
    void launched(Attempt a) {
    }

    /** The call ended after {@code attempts} attempts: after {@code callEnded}, before the listener's close. */
    void ended(Status status, int attempts) {
    }

    /** A response (headers or a message) committed the call: after {@code committed}, before it is delivered. */
    void answered() {
    }

    @Override
    public final void start(Listener<RespT> responseListener, Metadata startHeaders) {
        if (responseListener == null || startHeaders == null) {
            throw new NullPointerException("listener and headers must not be null");
        }
        starting();
        AttemptObserver.Call followed = engine.observer == null ? null : engine.observer.callStarted(target());
        Attempt first;
        synchronized (this) {
            if (listener != null) {
                throw new IllegalStateException("Already started");
            }
            if (state.phase() == Phase.CANCELLED) {
                throw new IllegalStateException("call was cancelled");
            }
            listener = responseListener;
            if (followed != null) {
                extra().observed = new ObservedCall(followed);
            }
            startHeaders.discardAll(RetryingCall.PREVIOUS_ATTEMPTS); // the engine's; the headers are the call's now
            record.start(startHeaders);
            first = openLocked(null);
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
        Attempt d = straightThrough();
        if (d != null) {
            requestThrough(d, numMessages);
            return;
        }
        op(numMessages, null);
    }

    @Override
    public final void sendMessage(ReqT message) {
        op(CallBuffer.message(message), message); // kept: each attempt marshals it (null too, as grpc-java's call does)
    }

    @Override
    public final void halfClose() {
        op(CallBuffer.HALF_CLOSE, null);
    }

    @Override
    public final void setMessageCompression(boolean enabled) {
        op(enabled, null);
    }

    /**
     * An operation of the application's: passed through, or logged and drained, the older attempts first (§18);
     * {@code message}: the message itself when the operation sends one (its entry may wrap it; it may be null).
     */
    private void op(Object entry, @Nullable ReqT message) {
        checkOp(entry);
        Attempt d = straightThrough();
        if (d != null) {
            through(d, entry);
            return;
        }
        LongStream<ReqT, RespT> ls = stream;
        if (ls != null && message != null) { // a null request makes no resumer: a break ends the stream
            ls.sending(message); // its one request makes the resumer (off the lock: the application's code)
        }
        CallState s = state;
        Attempt head = null;
        Attempt mine = null;
        boolean quick = false; // mine's drain may end without the lock: nothing but its own operation to send
        if (!s.passThrough() || ls != null) { // a long stream counts the demand with the log, pass-through or not
            synchronized (this) {
                s = state;
                if (s.phase().ended()) {
                    return;
                }
                if (ls != null) {
                    ls.loggedLocked(entry);
                }
                head = s.passThrough() ? null : newest;
                if (!s.passThrough()) {
                    if (head != null && head.phase.open() && head.drain == FREE && caughtUpLocked(head)) {
                        mine = head; // this thread owns its drain now, its cursor past this operation
                        mine.drain = OWNED;
                        quick = s.committed() == 0 && mine.phase == AttemptPhase.LIVE;
                        if (entry instanceof Integer n) {
                            mine.sentDemand = CallBuffer.demand(mine.sentDemand, n);
                        } else {
                            mine.sent++;
                        }
                        head = head.prev;
                    }
                    record.add(entry);
                }
            }
        }
        if (s.passThrough()) {
            through(attempt(s.committed()), entry);
        }
        drainAll(head);
        if (mine != null && send(mine, true, entry) && !(quick && DRAIN.compareAndSet(mine, OWNED, FREE))) {
            drain(mine, true); // noted meanwhile (or committed: its end may begin the pass-through)
        }
    }

    /**
     * The committed attempt while the call passes through to it with no long stream to count for (it is then the
     * newest): the application's operations go to its call with no lock and no look-up; else null.
     */
    private @Nullable Attempt straightThrough() {
        CallState s = state;
        Attempt d = newest;
        return s.passThrough() && stream == null && d != null && d.number == s.committed() ? d : null;
    }

    /** An operation of the application's while the call passes through to {@code c}. */
    private void through(Attempt c, Object entry) {
        if (entry instanceof Integer n) {
            requestThrough(c, n);
        } else {
            send(c, false, entry);
        }
    }

    /**
     * The application's request while the call passes through to {@code c}: counted in {@code c}'s sent demand first,
     * off the lock, so that {@code c}'s cancel asks only for the messages missing up to MAX_VALUE
     * ({@link Attempt#cancelNow}); not sent once {@code c} is marked to be cancelled, as that cancel's demand covers it.
     * Added atomically: {@code request} may be called from any thread, several at once (ClientCall's contract), and a
     * count lost to another thread's made the cancel ask for more than MAX_VALUE in all. Both fields are volatile: a
     * cancel that read the count before it was written is marked before this thread reads the mark, so the
     * transport's demand never passes MAX_VALUE.
     */
    private void requestThrough(Attempt c, int n) {
        int counted;
        do {
            counted = c.sentDemand;
        } while (!SENT_DEMAND.compareAndSet(c, counted, CallBuffer.demand(counted, n)));
        if (c.cancel != null) {
            return;
        }
        try {
            c.call.request(n);
        } catch (RuntimeException | Error e) {
            sendFailed(c, false, n, e);
        }
    }

    /** The application's side of the contract, as grpc-java's {@code ClientCallImpl} checks it. */
    private void checkOp(Object entry) {
        if (listener == null) {
            throw new IllegalStateException("Not started");
        }
        boolean message = CallBuffer.isMessage(entry);
        if (message || entry == CallBuffer.HALF_CLOSE) {
            if (cancelCalled) {
                throw new IllegalStateException("call was cancelled");
            }
            if (halfCloseCalled) {
                throw new IllegalStateException(message ? "call was half-closed" : "call already half-closed");
            }
            halfCloseCalled = !message;
        }
    }

    /** Sends {@code a} one operation; false when its call threw: {@code a} is cancelled, the call ends (§18). */
    private boolean send(Attempt a, boolean owner, Object entry) {
        try {
            CallBuffer.replay(a.call, entry);
            return true;
        } catch (RuntimeException | Error e) {
            sendFailed(a, owner, entry, e);
            return false;
        }
    }

    /** {@code a}'s call threw {@code e} from {@code entry}: {@code a} is cancelled, the call ends (an Error rethrown). */
    private void sendFailed(Attempt a, boolean owner, Object entry, Throwable e) {
        Status failure = Status.CANCELLED.withDescription(CallBuffer.failure(entry)).withCause(e);
        synchronized (this) {
            if (a.phase.open()) {
                markLocked(a, failure);
            }
        }
        cancelWith(failure); // may find the call ended already: a's cancel is issued below all the same
        drain(a, owner);
        if (owner) { // its cancel is issued: a call that threw may never close (one never started never does)
            closed(a, failure, new Metadata());
        }
        if (e instanceof Error err) {
            throw err;
        }
    }

    /** Ready when an attempt that is or may become the call's, and has caught up, is (grpc-java does the same). */
    @Override
    public final boolean isReady() {
        CallState s = state;
        if (s.passThrough()) {
            return attempt(s.committed()).call.isReady();
        }
        for (Attempt a = newest; a != null; a = a.prev) {
            if (candidate(a) && a.call.isReady()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The committed attempt's attributes (also once the call ended, as grpc-java's committed stream's: logging
     * interceptors read the peer in onClose), else those of the oldest attempt that may become the call's.
     */
    @Override
    public final Attributes getAttributes() {
        CallState s = state;
        Attempt oldest = s.committed() == 0 ? null : attempt(s.committed());
        for (Attempt a = oldest == null ? newest : null; a != null; a = a.prev) {
            oldest = candidate(a) ? a : oldest;
        }
        return oldest == null ? Attributes.EMPTY : oldest.call.getAttributes();
    }

    /** Whether {@code a} is or may become the call's, and has caught up with the record once. */
    private synchronized boolean candidate(Attempt a) {
        CallState s = state;
        return !s.phase().ended() && a.phase == AttemptPhase.LIVE && (s.committed() == 0 || s.committed() == a.number);
    }

    @Override
    public final void cancel(@Nullable String message, @Nullable Throwable cause) {
        cancelCalled = true;
        cancelWith(Status.CANCELLED.withDescription(message != null ? message : "Call cancelled without message")
                .withCause(message == null && cause == null
                        ? new CancellationException("Cancelled without a message or cause") : cause));
    }

    /**
     * The state's {@code cancelled} (application, listener, Context, shut-down): attempts and timer are cancelled and
     * the call closes now, on its executor within its Context (a cancelled stream may never close).
     */
    private void cancelWith(Status status) {
        synchronized (this) {
            if (state.phase().ended()) {
                return;
            }
            state = state.cancelled();
            if (listener == null) {
                return; // before start: start() refuses
            }
            settleLocked(0, status);
        }
        drainAll(newest);
        Runnable end = context.wrap(() -> endCall(status, new Metadata(), false));
        try {
            executor().execute(end);
        } catch (RejectedExecutionException e) {
            end.run();
        }
    }

    /**
     * Under lock: the state's {@code opened}, or {@code resumed} when {@code resuming} (the log starts again with the
     * resumer's request); the new attempt is linked as the newest.
     */
    @GuardedBy("this")
    final Attempt openLocked(@Nullable LongStream<ReqT, RespT> resuming) {
        state = resuming == null ? state.opened() : state.resumed();
        if (resuming != null) {
            Object request = Objects.requireNonNull(resuming.next, "no resumption pending");
            resuming.next = null;
            record.resume(engine.bufferPool, request, resuming.halfClosed, resuming.outstanding());
        }
        Attempt a = new Attempt(state.attempts(), newest, resuming != null);
        newest = a;
        openedLocked(a);
        return a;
    }

    /** The one place an attempt's call options are made: the call's, its own deadline, its streams' tracer (§2). */
    private CallOptions attemptOptions(Attempt a, @Nullable ObservedCall followed) {
        Deadline d = attemptDeadline(a);
        Streams streams = new Streams(a, followed);
        a.streams = streams; // the call's backends so far, for the balancer (TriedBackends)
        return (d == null ? callOptions : callOptions.withDeadline(d)).withStreamTracerFactory(streams);
    }

    /** Starts {@code a} in the call's Context (the first with the application's headers) and replays the record to it. */
    final void launch(Attempt a, @Nullable Metadata firstHeaders) {
        Metadata headers = firstHeaders;
        long delay = -1;
        DelaySource source = null;
        ObservedCall followed = null;
        if (a.number > 1 || engine.observer != null) {
            synchronized (this) {
                followed = extra == null ? null : extra.observed;
                if (a.number > 1) {
                    headers = record.attemptHeaders();
                    headers.put(RetryingCall.PREVIOUS_ATTEMPTS, RetryingCall.previousAttemptsValue(a.number - 1));
                    if (extra != null) {
                        delay = extra.lastWaitNanos;
                        extra.lastWaitNanos = 0; // a hedge sent at once after a failure waited for no timer
                        source = extra.delaySource;
                        extra.delaySource = null;
                    }
                }
            }
        }
        engine.events.attemptStarted(target(), kind(a), a.number);
        AttemptObserver.Scope scope = followed == null ? null
                : followed.starting(kind(a), a.number, delay, source, Objects.requireNonNull(headers));
        Context previous = context == Context.current() ? null : context.attach();
        LongStream.Watch w = a.idle;
        a.heard();
        try {
            a.call = next.newCall(method, attemptOptions(a, followed));
            a.call.start(a, Objects.requireNonNull(headers));
            drain(a, true);
        } catch (RuntimeException e) {
            // it ends here, with this status (its own close, if any, finds it closed), then it is cancelled
            Status failed = Status.INTERNAL.withDescription("could not start " + (a.number == 1 ? "the first attempt"
                    : parallel ? "a hedged attempt" : "a retry attempt")).withCause(e);
            synchronized (this) {
                a.phase = a.phase.open() ? a.phase.markCancel() : a.phase;
                a.cancel = failed;
            }
            closed(a, failed, new Metadata());
            if (a.call != null) {
                a.call.cancel(failed.getDescription(), e);
            }
            return;
        } finally {
            if (scope != null) {
                scope.close();
            }
            if (previous != null) {
                context.detach(previous);
            }
        }
        if (w != null) {
            synchronized (this) {
                armIdleLocked(a, w, Objects.requireNonNull(stream).idleNanos);
            }
        }
        launched(a);
    }

    /** Under lock: {@code a}'s idle check runs in {@code delayNanos}, unless it ended. */
    @GuardedBy("this")
    private void armIdleLocked(Attempt a, LongStream.Watch w, long delayNanos) {
        w.timer = !a.phase.open() || state.phase().ended() ? null
                : engine.scheduler.schedule(() -> idleFired(a, w), () -> { }, executor(), delayNanos);
    }

    /** {@code a}'s idle timer fired: {@code a} is cut when idle, else the timer is armed again (§18, "Long streams"). */
    private void idleFired(Attempt a, LongStream.Watch w) {
        LongStream<ReqT, RespT> ls = Objects.requireNonNull(stream);
        synchronized (this) {
            long left = ls.idleLeft(w);
            if (left > 0 || !a.phase.open() || state.phase().ended()) {
                armIdleLocked(a, w, left); // none once it ended
                return;
            }
            w.cut = true;
            markLocked(a, Objects.requireNonNull(ls.idleStatus));
            if (state.committed() == a.number) {
                state = state.interrupted(); // nothing more of it reaches the application
            }
        }
        drain(a, false); // its cancel, unless another thread owns its drain
    }

    /**
     * Under lock: whether another thread owns {@code a}'s drain; if so it is noted, so that the owner drains once more
     * before it gives the drain up. False also when the owner gave it up (off the lock) meanwhile: it may be taken.
     */
    @GuardedBy("this")
    private boolean noteLocked(Attempt a) {
        return a.drain != FREE && (DRAIN.compareAndSet(a, OWNED, NOTED) || a.drain == NOTED);
    }

    /** Drains every attempt from {@code head} back, the oldest first. */
    private void drainAll(@Nullable Attempt head) {
        if (head != null) {
            drainAll(head.prev); // as deep as the call has attempts (within the cap)
            drain(head, false);
        }
    }

    /** The one drain loop: what {@code a} lacks, or its cancel, sent by the one thread that owns its drain (§18). */
    private void drain(Attempt a, boolean owner) {
        while (true) {
            Object entry = null;
            boolean cancel = false;
            boolean readyMissed = false;
            boolean through = false;
            synchronized (this) {
                if (!owner && (a.phase.takesNothing() || noteLocked(a))) {
                    return;
                }
                owner = !a.phase.takesNothing();
                a.drain = owner ? OWNED : FREE;
                if (!owner) {
                    return;
                } else if (a.phase == AttemptPhase.CANCELLING) {
                    a.phase = a.phase.issueCancel(); // its drain stays owned: nothing more is sent to it
                    cancel = true;
                } else if (a.sentDemand < record.demand()) { // more once the call passes through: not logged
                    entry = record.demand() - a.sentDemand; // the messages asked for first, in one request
                    a.sentDemand = record.demand();
                    through = a.sent == record.size() && a.phase == AttemptPhase.LIVE && state.committed() == a.number;
                    if (through) { // all it lacks: it passes through now, this request sent as any other thread's is
                        a.drain = FREE;
                        passThroughLocked();
                    }
                } else if (a.sent < record.size()) {
                    entry = record.entry(a.sent++);
                } else { // caught up; a retry may start ready with no transition to report: it is told now
                    a.drain = FREE;
                    readyMissed = (a.readyMissed || a.number > 1) && a.phase == AttemptPhase.STARTING;
                    a.phase = a.phase.caughtUp();
                    if (!readyMissed) {
                        passThroughLocked(); // else after that onReady's delivery
                    }
                }
            }
            if (cancel) {
                a.cancelNow();
            } else if (through) {
                send(a, false, Objects.requireNonNull(entry)); // a request may come from any thread (ClientCall)
            } else if (entry != null && send(a, true, entry)) {
                continue;
            } else if (entry == null && readyMissed && a.call.isReady()) {
                receive(a, Signal.READY, null); // became ready while catching up: not heard then
            } else if (entry == null && readyMissed) {
                synchronized (this) {
                    passThroughLocked();
                }
            }
            return;
        }
    }

    /** A callback from {@code a}: a response commits to it; delivered when {@code a} is (or may become) the call's. */
    private void receive(Attempt a, Signal signal, @Nullable Object value) {
        boolean commits;
        boolean others = false; // other attempts to be cancelled by their drains
        boolean accepted;
        boolean deliver;
        synchronized (this) {
            commits = signal != Signal.READY && state.phase() == Phase.OPEN && a.phase != AttemptPhase.CLOSED && !a.cut();
            if (commits) {
                others = commitLocked(a, SuppressionReason.COMMITTED);
            }
            CallState s = state;
            a.readyMissed |= signal == Signal.READY && a.phase == AttemptPhase.STARTING;
            boolean mine = signal == Signal.READY ? candidate(a) : s.committed() == a.number && !a.cut();
            accepted = mine && s.phase() != Phase.CANCELLED;
            deliver = accepted && enterLocked(signal, value, null);
        }
        if (accepted && signal == Signal.MESSAGE && stream != null) {
            stream.served(value); // delivered now or queued: the application is served it
        }
        if (others) {
            drainAll(newest); // the others' cancels
        }
        if (commits) {
            engine.events.committed(target(), a.number);
            answered();
        }
        if (deliver) {
            if (state.phase() != Phase.CANCELLED) { // again: a cancel from another thread may have come meanwhile
                emit(signal, value, null);
            }
            release(); // then its close, queued by that cancel
        }
    }

    /**
     * The one end of an attempt: reports it once; the attempt that settles the call ends it, unless it is the committed
     * attempt of a stream that resumes ({@link LongStream}): its break is then decided as a retry's failure.
     */
    private void closed(Attempt a, Status closeStatus, Metadata attemptTrailers) {
        Status attemptStatus = a.cut() ? Objects.requireNonNull(engine.idleStatus) : closeStatus;
        LongStream<ReqT, RespT> ls = stream;
        CallState before = state;
        Object resume = ls != null && before.committed() == a.number && !before.phase().ended()
                ? ls.beforeBreak(attemptStatus) : null; // the resumer's request, off the lock
        Status status = attemptStatus;
        Metadata trailers = attemptTrailers;
        Decision d = null;
        SuppressionReason suppressed = null;
        ObservedCall followed;
        boolean wasCommitted;
        boolean cancelledHere;
        boolean end;
        boolean others = false;
        boolean deliver = false;
        boolean watch = false;
        boolean settledHere = false; // no other attempt, and this thread delivers: the end is read in the section
        int attempts = 0;
        int transparent = 0;
        long waited = 0;
        Status failure = null;
        synchronized (this) {
            if (a.phase == AttemptPhase.CLOSED) {
                return;
            }
            boolean startFailed = a.cancel == closeStatus && a.phase != AttemptPhase.CANCEL_SENT; // else: at its cancel
            a.phase = a.phase.close();
            RetryScheduler.Timer idleTimer = a.idle == null ? null : a.idle.timer;
            if (idleTimer != null) {
                idleTimer.cancel(); // its idle timer ends with it
                Objects.requireNonNull(a.idle).timer = null;
            }
            CallState s = state;
            followed = extra == null ? null : extra.observed;
            wasCommitted = s.committed() == a.number;
            cancelledHere = a.cancel != null && !startFailed && !a.cut();
            end = !s.phase().ended() && (s.committed() == 0 || wasCommitted); // else settled: it only reports its end
            if (end && wasCommitted && resume != null && ls != null) {
                state = state.interrupted(); // a break that may resume: decided below as a retry's failure
                ls.next = resume;
            }
            if (!end || startFailed || status.isOk() && !wasCommitted) {
                suppressed = null; // nothing to decide
            } else if (wasCommitted && resume == null) {
                suppressed = Decision.afterCommit(extra == null ? null : extra.commitReason,
                        !status.isOk() && wouldRetry(status, trailers));
            } else if (ChannelShutdown.closedByShutdown(status, a.trailersReceived, shutdownWatch())) {
                cancelTimerLocked(); // the channel is shut down: no attempt can start on it, it ends with its status
                end = liveLocked() == 0;
            } else if (context.isCancelled()) {
                // its cancellation reached the attempt first: the call ends as the Context's listener would end it
                status = Contexts.statusFromCancelled(context);
                trailers = new Metadata();
            } else {
                d = decideLocked(a, status, trailers); // a failure that needs no further attempt ends as answered
                if (d instanceof Decision.Stop stop) {
                    suppressed = stop.reason();
                    end = liveLocked() == 0 && (extra == null || extra.timer == null);
                } else if (d instanceof Decision.End e) {
                    suppressed = e.reason();
                } else if (d != null && (extra == null || !extra.shutDown)) {
                    end = false;
                } else {
                    d = null;
                    status = SHUTTING_DOWN; // no timer can fire: the scheduler is closed
                    trailers = new Metadata();
                }
                watch = !end && shutdownWatchLocked();
            }
            if (end) {
                if (s.committed() == 0 && !startFailed) {
                    state = state.commit(a.number); // the call's answer is a's, as grpc-java commits its last stream
                }
                others = finishLocked();
                deliver = BUSY.compareAndSet(this, (byte) 0, (byte) 1); // nothing but its close is delivered now
                settledHere = deliver && !others; // no attempt left whose stream a transparent retry could count
                if (settledHere) { // settled, and only this thread calls the listener: none of these changes any more
                    attempts = state.attempts();
                    transparent = extra == null ? 0 : extra.transparentRetries;
                    waited = waitedNanos();
                    failure = extra == null ? null : extra.listenerFailure;
                }
            }
        }
        if (watch) {
            watchShutdown(); // outside the lock: a channel shut down already ends the call at once
        }
        engine.events.attemptEnded(target(), kind(a), a.number, attemptStatus.getCode());
        if (followed != null) {
            followed.ended(a.number, attemptStatus, attemptTrailers, wasCommitted, cancelledHere);
        }
        if (others) {
            drainAll(newest); // the others' cancels
        }
        if (d instanceof Decision.Retry r && !(ls != null && ls.deadlineWait)) { // a wait to the deadline: no attempt follows
            engine.events.retryScheduled(target(), a.number + 1, r.delayNanos(), r.source());
        }
        if (suppressed != null) {
            suppressed(suppressed, attemptStatus.getCode());
        }
        if (settledHere) {
            report(status, trailers, true, attempts, transparent, waited, failure);
        } else if (end) {
            endCall(status, trailers, deliver); // read after the others' cancels, which count their streams' retries
        } else if (d instanceof Decision.Hedge h && h.delayNanos() == 0) {
            nextAttempt();
        }
    }

    /** Under lock: what follows a failure of uncommitted {@code a}, admitted and timed; null: the scheduler is closed. */
    @GuardedBy("this")
    private @Nullable Decision decideLocked(Attempt a, Status status, Metadata trailers) {
        if (a.cancel == null && status.getCode() == Status.Code.CANCELLED && status.getCause() != null) {
            // cancelled below the engine (its call failed to send, or an interceptor gave up on it): grpc-java's retry
            // ends such a call, never retries it (a status from the server has no cause)
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
        } else if (delay >= 0 && liveLocked() == 0 && context != Context.ROOT && extra().contextListener == null) {
            // nothing in flight until the timer fires: the Context's cancellation cancels the call (ROOT cannot be)
            Context.CancellationListener cl = c -> cancelWith(Contexts.statusFromCancelled(c));
            extra().contextListener = cl;
            context.addListener(cl, executor());
        }
        return d;
    }

    /** A retry or hedge that will not go, and why: to the listener and the observer. */
    final void suppressed(SuppressionReason reason, Status.Code code) {
        engine.events.retrySuppressed(target(), reason, code);
        ObservedCall followed;
        synchronized (this) {
            followed = extra == null ? null : extra.observed;
        }
        if (followed != null) {
            followed.retrySuppressed(reason, code);
        }
    }

    /**
     * Ends the settled call: reports it, then closes the listener through the serialiser; {@code entered}: this thread
     * is already the one delivering (else the close enters now, or queues).
     */
    final void endCall(Status status, Metadata trailers, boolean entered) {
        boolean deliver = entered;
        int attempts;
        int transparent;
        long waited;
        Status failure;
        synchronized (this) {
            attempts = state.attempts();
            transparent = extra == null ? 0 : extra.transparentRetries;
            waited = waitedNanos();
            failure = extra == null ? null : extra.listenerFailure;
            deliver = deliver || enterLocked(Signal.CLOSE, status, trailers);
        }
        report(status, trailers, deliver, attempts, transparent, waited, failure);
    }

    /** The settled call's end, reported; then the listener's close when this thread delivers it. */
    private void report(Status status, Metadata trailers, boolean deliver, int attempts, int transparent, long waited,
            @Nullable Status failure) {
        if (status.isOk() && engine.throttle != null) {
            engine.throttle.onSuccess();
        }
        int later = attempts - 1; // no attempt starts any more
        engine.events.callEnded(target(), status.getCode(), parallel ? 0 : later, parallel ? later : 0, transparent, waited);
        ended(status, attempts);
        if (deliver) {
            emit(Signal.CLOSE, failure != null ? failure : status, failure != null ? new Metadata() : trailers);
            release();
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
        x.pending = x.pending == null ? new ArrayDeque<>(4) : x.pending;
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
        if (!state.passThrough()) {
            synchronized (this) {
                passThroughLocked();
            }
        }
    }

    /** A queued callback: after a cancel the listener hears only its close; after it threw, that close carries it. */
    private void deliver(Signal s, @Nullable Object value, @Nullable Metadata trailers) {
        Status failure;
        synchronized (this) {
            if (state.phase() == Phase.CANCELLED && s != Signal.CLOSE) {
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

    /** The one call into the listener ({@link #threw} when it throws). */
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
            threw(s, e);
        }
    }

    /** The listener threw from {@code s}: the whole call is cancelled with it, or it is logged from its close. */
    private void threw(Signal s, Throwable e) {
        if (s == Signal.CLOSE) {
            LOG.log(System.Logger.Level.WARNING, "the application's onClose threw (the call is closed)", e);
            return;
        }
        // grpc-java's ClientCallImpl's descriptions, so that an application sees one close for either engine
        String what = s == Signal.HEADERS ? "Failed to read headers" : s == Signal.MESSAGE ? "Failed to read message."
                : "Failed to call onReady.";
        Status failure = Status.CANCELLED.withDescription(what).withCause(e);
        synchronized (this) {
            extra().listenerFailure = extra().listenerFailure == null ? failure : extra().listenerFailure;
        }
        cancelWith(failure);
    }

    /**
     * Under lock: the state's {@code commit}: no further attempt or timer, every other attempt marked to be cancelled;
     * true when there was one (its drain issues the cancel).
     */
    @GuardedBy("this")
    private boolean commitLocked(Attempt a, SuppressionReason reason) {
        state = state.commit(a.number);
        if (reason != SuppressionReason.COMMITTED || extra != null) {
            extra().commitReason = reason;
        }
        stopWaitingLocked();
        passThroughLocked();
        return markAllLocked(a.number, LOST);
    }

    /** Under lock: the state's {@code passingThrough} once the committed attempt caught up and nothing is delivered. */
    @GuardedBy("this")
    private void passThroughLocked() {
        CallState s = state;
        Attempt c = s.committed() == 0 ? null : attempt(s.committed());
        if (c == null || s.passThrough() || c.phase != AttemptPhase.LIVE || noteLocked(c) || !caughtUpLocked(c)) {
            return; // the owner of its drain comes back here when the drain ends
        }
        if (record.size() > 0) {
            record.release(engine.bufferPool); // no other attempt needs the log any more
            c.sent = 0;
        }
        if (busy == 0 && !s.phase().ended()) {
            state = s.passingThrough();
        }
    }

    @GuardedBy("this")
    private boolean caughtUpLocked(Attempt a) {
        return a.sent == record.size() && a.sentDemand >= record.demand();
    }

    /** Under lock: the state's {@code freeze}: no further attempt starts, a pending timer is cancelled. */
    @GuardedBy("this")
    final void freezeLocked() {
        state = state.freeze();
        cancelTimerLocked();
    }

    /**
     * Under lock: the state's {@code finished}; timer, watches and log go, every other attempt is to be cancelled (true
     * when there is one).
     */
    @GuardedBy("this")
    final boolean finishLocked() {
        state = state.finished();
        return settleLocked(state.committed(), ENDED);
    }

    @GuardedBy("this")
    private boolean settleLocked(int except, Status why) {
        stopWaitingLocked();
        record.release(engine.bufferPool);
        return markAllLocked(except, why);
    }

    /** Under lock: marks every open attempt but number {@code except} to be cancelled (by its drain's owner); any? */
    @GuardedBy("this")
    private boolean markAllLocked(int except, Status why) {
        boolean any = false;
        for (Attempt a = newest; a != null; a = a.prev) {
            if (a.number != except && a.phase.open()) {
                markLocked(a, why);
                any = true;
            }
        }
        return any;
    }

    @GuardedBy("this")
    private void markLocked(Attempt a, Status why) {
        a.phase = a.phase.markCancel();
        a.cancel = why;
    }

    /**
     * Schedules the call's timer (replacing a pending one): {@link #nextAttempt}, or the end of the call when the
     * scheduler closes first. False when it is closed already: the call ends {@link #SHUTTING_DOWN}.
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
            x.lastWaitNanos = System.nanoTime() - x.timerStartNanos;
            x.waitedNanos += x.lastWaitNanos;
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

    /** No more waiting for a timer: it is cancelled, the Context and the channel are no longer watched. */
    @GuardedBy("this")
    private void stopWaitingLocked() {
        Extra x = extra;
        if (x != null) {
            cancelTimerLocked();
            if (x.onChannelShutdown != null && x.watchedBy != null) {
                x.watchedBy.remove(x.onChannelShutdown);
                x.onChannelShutdown = null;
            }
            if (x.contextListener != null) {
                context.removeListener(x.contextListener);
                x.contextListener = null;
            }
        }
    }

    /** The watch of the channel below when the engine knows it (handed the ManagedChannel, or told of it), else null. */
    private @Nullable ChannelShutdown shutdownWatch() {
        return next instanceof ManagedChannel mc ? engine.shutdownWatch(mc) : engine.watchedShutdown();
    }

    /** Under lock, once a timer is pending and nothing is in flight: whether the call is to wait on the shut-down too. */
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

    /** After {@link #shutdownWatchLocked}: a channel shut down already ends the call at once. */
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

    /** Under lock: the call's state beyond the success path, made on first use. */
    @GuardedBy("this")
    final Extra extra() {
        if (extra == null) {
            extra = new Extra();
        }
        return extra;
    }

    /** Where the call stands now. */
    final CallState state() {
        return state;
    }

    /** The call's attempt {@code number} (it has one). */
    final Attempt attempt(int number) {
        Attempt a = newest;
        while (a != null && a.number != number) {
            a = a.prev;
        }
        return Objects.requireNonNull(a, "no such attempt");
    }

    /** Under lock: attempts started and not closed. */
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
        return a.number == 1 ? AttemptKind.INITIAL : parallel ? AttemptKind.HEDGE
                : a.resumed ? AttemptKind.RESUME : AttemptKind.RETRY;
    }

    @Override
    public final String toString() {
        return getClass().getSimpleName() + "[" + target().fullMethodName() + "]";
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
     * A stream of {@code a} wrote {@code bytes} more: the call holds as many as its attempt that wrote the most; one
     * whose write passes a limit is committed (§2). At times under the transport's lock: ours only until the commit.
     */
    private void wrote(Attempt a, Written stream, long bytes) {
        if (state.passThrough()) {
            return; // committed: nothing is held any more
        }
        boolean others;
        synchronized (this) {
            if (state.phase() != Phase.OPEN || a.phase == AttemptPhase.CLOSED) {
                return;
            }
            stream.bytes += bytes;
            long more = stream.bytes - record.held();
            if (more <= 0 || record.tryAdd(more, engine.perRpcBufferLimit, engine.bufferPool)) {
                return;
            }
            others = commitLocked(a, SuppressionReason.BUFFER_LIMIT);
        }
        if (others) {
            drainAll(newest);
        }
        engine.events.committed(target(), a.number);
    }

    /**
     * One attempt's stream tracer factory and its place in the call's history of backends ({@link TriedBackends}); a
     * transparent retry's stream is counted and told to the observer. On a transport thread at times: no blocking.
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

        /** The server's trailers reached this stream: the attempt's close carries the server's status. */
        @Override
        public void inboundTrailers(Metadata trailers) {
            attempt.trailersReceived = true;
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

    /** One attempt, the listener of its call; guarded by the call's lock (unannotated: Error Prone cannot name it). */
    final class Attempt extends ClientCall.Listener<RespT> {
        final int number;
        final @Nullable Attempt prev;
        /** It resumes the call's stream after a break past the commit ({@link AttemptKind#RESUME}). */
        final boolean resumed;
        ClientCall<ReqT, RespT> call; // set by its launcher before another thread can drain or read it
        AttemptPhase phase = AttemptPhase.STARTING;
        /** Its drain ({@link #DRAIN}): a thread sends to it (its launcher from the start), the others leave it to that one. */
        volatile byte drain = OWNED;
        boolean readyMissed; // it signalled ready before it caught up: heard once it has
        int sent; // the entries of the log it was sent
        /**
         * The messages it was asked for (up to MAX_VALUE); volatile: counted off the lock while passing through, when
         * it passes the log's demand (those requests are not logged): the drain sends only what it lacks of that.
         * Written under the lock only while the call does not pass through to it (no request is counted off the lock
         * then), off the lock only by {@link #requestThrough}'s atomic add ({@code SENT_DEMAND}).
         */
        volatile int sentDemand;
        /** Why it is to be cancelled (null: not); issued once, by its drain's owner; volatile: read off the lock. */
        volatile @Nullable Status cancel;
        /** A stream of it received the server's trailers (set by its tracer before its close): the server answered. */
        volatile boolean trailersReceived;
        /** Its stream tracer factory once launched: read by the balancer's picks of later attempts. */
        volatile @Nullable Streams streams;
        /** With an idle timeout: when it last heard something, its idle timer, whether it was cut (null: none). */
        final LongStream.@Nullable Watch idle;

        @SuppressWarnings("NullAway.Init") // call: set by its launcher before another thread can reach it
        Attempt(int number, @Nullable Attempt prev, boolean resumed) {
            this.number = number;
            this.prev = prev;
            this.resumed = resumed;
            LongStream<ReqT, RespT> ls = stream;
            this.idle = ls != null && ls.idleNanos > 0 ? new LongStream.Watch() : null;
        }

        /** It was cut for idleness: nothing more of it reaches the application, its end is the idle status. */
        boolean cut() {
            LongStream.Watch w = idle;
            return w != null && w.cut;
        }

        /**
         * Cancels it (by its drain's owner) after demand up to MAX_VALUE: in-process holds a close behind it. A call
         * that refuses that request never started ("Not started": an interceptor below dropped its start) and never
         * closes: its end is reported here.
         */
        void cancelNow() {
            int demanded;
            Status why;
            synchronized (EngineCall.this) {
                demanded = sentDemand;
                why = Objects.requireNonNull(cancel); // issued only once marked
            }
            boolean refused = false;
            try {
                if (demanded < Integer.MAX_VALUE) {
                    call.request(Integer.MAX_VALUE - demanded);
                }
            } catch (RuntimeException e) {
                refused = true;
                LOG.log(System.Logger.Level.DEBUG, "request() of an attempt being cancelled threw", e);
            } finally {
                call.cancel(why.getDescription(), why.getCause());
            }
            if (refused) {
                closed(this, why, new Metadata());
            }
        }

        /** An attempt after others tells the application how many came before (A6 "exposed retry metadata"). */
        @Override
        public void onHeaders(Metadata responseHeaders) {
            if (resumed) {
                heard(); // the application has the first attempt's headers: a resumed stream's are not delivered
                return;
            }
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

        /** Straight to the listener while the call passes through to it (busy meanwhile), else through the call. */
        private void signal(Signal s, @Nullable Object value) {
            LongStream<ReqT, RespT> ls = stream;
            LongStream.Watch w = idle;
            if (w == null) {
                toApplication(ls, s, value);
                return;
            }
            long at = System.nanoTime();
            if (s != Signal.READY) {
                w.lastHeard = at;
            }
            w.inCallback = true; // the attempt's callbacks come one at a time: it cannot be heard while this one runs
            try {
                toApplication(ls, s, value);
            } finally {
                w.lastHeard = s == Signal.READY ? w.lastHeard + System.nanoTime() - at : System.nanoTime();
                w.inCallback = false;
            }
        }

        private void toApplication(@Nullable LongStream<ReqT, RespT> ls, Signal s, @Nullable Object value) {
            boolean entered = passing() && BUSY.compareAndSet(EngineCall.this, (byte) 0, (byte) 1);
            boolean passed = entered && passing(); // still: not cancelled before this thread was busy
            if (passed && ls != null && s == Signal.MESSAGE) {
                ls.served(value); // the resumer's code: a cancel meanwhile is seen below
            }
            if (passed && (ls == null || passing())) {
                emit(s, value, null);
            }
            if (entered) {
                release(); // a close queued by a cancel meanwhile goes now
            }
            if (!passed) {
                receive(this, s, value); // through the call's state (after a cancel: dropped)
            }
        }

        /** With an idle timeout: it sent something now (no allocation: one clock reading, one write). */
        void heard() {
            LongStream.Watch w = idle;
            if (w != null) {
                w.lastHeard = System.nanoTime();
            }
        }

        private boolean passing() {
            CallState s = state;
            return s.passThrough() && s.committed() == number;
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            closed(this, status, trailers);
        }

        @Override
        public String toString() {
            return "Attempt[" + number + " " + kind(this) + " " + phase + "]";
        }
    }
}
