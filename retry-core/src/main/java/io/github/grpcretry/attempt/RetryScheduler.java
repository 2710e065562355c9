package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The timers of the retry engine: one small pool of daemon threads shared by every channel
 * ({@link #shared()}: a scheduler of its own over those threads for each engine), plus the executor
 * that runs the work a timer triggers when the call has no executor of its own. A timer thread only
 * hands work over; it never starts an attempt itself.
 *
 * <p>Every timer is kept from scheduling until it fires or is cancelled, so that closing the scheduler
 * ends the calls waiting for one. The timer threads also drive the coarse clocks of retry budgets
 * ({@link #driveBudgetClock}); those ticks are not call timers.
 */
public final class RetryScheduler implements AutoCloseable {

    /** Timer threads of the shared scheduler. */
    public static final int SHARED_TIMER_THREADS = 2;

    /** The process-wide pools: never closed, never handed out (each {@link #shared()} is a scheduler over them). */
    private static final class SharedHolder {
        static final RetryScheduler POOLS = create(SHARED_TIMER_THREADS, "grpc-retry");
    }

    private final ScheduledExecutorService timers;
    private final Executor work;
    private final boolean owned;
    /** Timers that have neither fired nor been cancelled: told when this scheduler closes. */
    private final Set<Timer> pending = ConcurrentHashMap.newKeySet();
    /** The budget clocks these timers drive (each removes itself when it ends; cancelled at close). */
    private final ConcurrentLinkedQueue<CompletableFuture<Void>> budgetClocks = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    private RetryScheduler(ScheduledExecutorService timers, Executor work, boolean owned) {
        this.timers = timers;
        this.work = work;
        this.owned = owned;
    }

    /**
     * A scheduler of its own on the process-wide daemon threads (never shut down): its {@link #close()} ends the
     * calls waiting for its timers and stops its budget clocks, as any scheduler's does, and leaves the threads
     * to the other users.
     */
    public static RetryScheduler shared() {
        RetryScheduler pools = SharedHolder.POOLS;
        return new RetryScheduler(pools.timers, pools.work, false);
    }

    /**
     * A scheduler with its own {@code timerThreads} daemon timer threads and a cached daemon pool
     * for timer-triggered work, named {@code namePrefix-timer-N} / {@code namePrefix-worker-N}.
     * {@link #close()} shuts both down.
     */
    public static RetryScheduler create(int timerThreads, String namePrefix) {
        if (timerThreads < 1) {
            throw new IllegalArgumentException("timerThreads must be >= 1");
        }
        ScheduledThreadPoolExecutor timers =
                new ScheduledThreadPoolExecutor(timerThreads, daemonFactory(namePrefix + "-timer-"));
        timers.setRemoveOnCancelPolicy(true);
        timers.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        ExecutorService work = Executors.newCachedThreadPool(daemonFactory(namePrefix + "-worker-"));
        return new RetryScheduler(timers, work, true);
    }

    /**
     * A scheduler on executors the caller owns (not shut down by {@link #close()}).
     *
     * @param timers fires the timers; the task it runs only hands work to {@code work}
     * @param work runs timer-triggered work of calls whose {@code CallOptions} carry no executor
     */
    public static RetryScheduler of(ScheduledExecutorService timers, Executor work) {
        return new RetryScheduler(Objects.requireNonNull(timers, "timers"), Objects.requireNonNull(work, "work"),
                false);
    }

    /** The executor for timer-triggered work of calls without an executor of their own. */
    public Executor workExecutor() {
        return work;
    }

    /**
     * Runs {@code task} on {@code executor} after {@code delayNanos}. The returned timer can be
     * cancelled; it is pending until it fires or is cancelled. When this scheduler is
     * closed before the timer fires, {@code onClose} runs instead (on {@code executor}, or on the closing
     * thread when that refuses it); when it is closed already, nothing is scheduled and the result is null.
     */
    @Nullable Timer schedule(Runnable task, Runnable onClose, Executor executor, long delayNanos) {
        if (closed) {
            return null;
        }
        Timer timer = new Timer(task, onClose, executor);
        pending.add(timer);
        try {
            timer.future = timers.schedule(timer, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            timer.finish(); // closed meanwhile
            return null;
        }
        if (closed && timer.finish()) {
            return null; // close() ran meanwhile and may not have seen it
        }
        return timer;
    }

    /**
     * Drives {@code budget}'s coarse clock ({@link RetryBudget#driveClock}) from these timer threads: a
     * tick now and at every slot boundary, so a call's deposit needs no clock reading. Does nothing
     * when the budget has a driver already. The ticks hold the budget weakly and end when it is no
     * longer reachable, or when this scheduler is closed (the budget then reads the clock again).
     */
    public void driveBudgetClock(RetryBudget budget) {
        if (closed) {
            return;
        }
        CompletableFuture<Void> clock = budget.driveClock(timers);
        if (clock != null) {
            budgetClocks.add(clock);
            clock.whenComplete((r, e) -> budgetClocks.remove(clock));
            if (closed) {
                clock.cancel(false); // close() ran while this clock started
            }
        }
    }

    /**
     * Shuts the pools down when this scheduler owns them (not the shared threads, nor a caller's executors),
     * stops the budget clocks it drives, and ends the calls waiting for one of its timers.
     */
    @Override
    public void close() {
        closed = true;
        for (CompletableFuture<Void> clock : budgetClocks) {
            clock.cancel(false);
        }
        if (owned) {
            timers.shutdownNow();
            if (work instanceof ExecutorService es) {
                es.shutdownNow();
            }
        }
        for (Timer t : pending) {
            if (t.finish()) {
                t.hand(t.onClose); // the calls waiting for these end now (docs/design.md §18)
            }
        }
    }

    private static ThreadFactory daemonFactory(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** One pending timer. */
    final class Timer implements Runnable {
        private final Runnable task;
        private final Runnable onClose;
        private final Executor executor;
        private final AtomicBoolean done = new AtomicBoolean();
        volatile @Nullable ScheduledFuture<?> future;

        Timer(Runnable task, Runnable onClose, Executor executor) {
            this.task = task;
            this.onClose = onClose;
            this.executor = executor;
        }

        @Override
        public void run() {
            if (finish()) {
                hand(closed ? onClose : task);
            }
        }

        /** Runs {@code r} on the timer's executor, or here when it refuses (closed): the call must go on or end. */
        private void hand(Runnable r) {
            try {
                executor.execute(r);
            } catch (RejectedExecutionException e) {
                (r == onClose ? r : onClose).run();
            }
        }

        /** Cancels the timer; {@code true} when it had not fired yet (the task will not run). */
        boolean cancel() {
            if (finish()) {
                ScheduledFuture<?> f = future;
                if (f != null) {
                    f.cancel(false);
                }
                return true;
            }
            return false;
        }

        private boolean finish() {
            if (done.compareAndSet(false, true)) {
                pending.remove(this);
                return true;
            }
            return false;
        }
    }
}
