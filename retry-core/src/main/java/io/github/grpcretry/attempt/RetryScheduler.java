package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import java.lang.ref.WeakReference;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The timers of the retry engine: one small pool of daemon threads shared by every channel
 * ({@link #shared()}), plus the executor that runs the work a timer triggers when the call has no
 * executor of its own. A timer thread only hands work over; it never starts an attempt itself.
 *
 * <p>Every timer is counted from scheduling until it fires or is cancelled, so tests can check
 * that no call leaves a timer behind. The timer threads also drive the coarse clocks of retry
 * budgets ({@link #driveBudgetClock}); those ticks are not call timers and are not counted.
 */
public final class RetryScheduler implements AutoCloseable {

    /** Timer threads of the shared scheduler. */
    public static final int SHARED_TIMER_THREADS = 2;

    private static final class SharedHolder {
        static final RetryScheduler INSTANCE = create(SHARED_TIMER_THREADS, "grpc-retry");
    }

    private final ScheduledExecutorService timers;
    private final Executor work;
    private final boolean owned;
    private final AtomicInteger outstanding = new AtomicInteger();
    private final ConcurrentLinkedQueue<BudgetTicker> tickers = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    private RetryScheduler(ScheduledExecutorService timers, Executor work, boolean owned) {
        this.timers = timers;
        this.work = work;
        this.owned = owned;
    }

    /** The process-wide scheduler (daemon threads, never shut down). */
    public static RetryScheduler shared() {
        return SharedHolder.INSTANCE;
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
     * cancelled; it is counted as outstanding until it fires or is cancelled.
     */
    Timer schedule(Runnable task, Executor executor, long delayNanos) {
        Timer timer = new Timer(task, executor);
        outstanding.incrementAndGet();
        try {
            timer.future = timers.schedule(timer, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            timer.finish();
            throw e;
        }
        return timer;
    }

    /** Timers scheduled that have neither fired nor been cancelled. */
    int outstandingTimers() {
        return outstanding.get();
    }

    /**
     * Drives {@code budget}'s coarse clock ({@link RetryBudget#tick()}) from these timer threads: a
     * tick now and at every slot boundary, so a call's deposit needs no clock reading. Does nothing
     * when the budget has a driver already. The ticks hold the budget weakly and end when it is no
     * longer reachable, or when this scheduler is closed (the budget then reads the clock again).
     */
    public void driveBudgetClock(RetryBudget budget) {
        if (closed || !budget.claimTicker()) {
            return;
        }
        BudgetTicker t = new BudgetTicker(budget);
        tickers.add(t);
        t.run();
    }

    /** Budgets whose clock this scheduler drives now (for tests). */
    int drivenBudgetClocks() {
        int n = 0;
        for (BudgetTicker t : tickers) {
            if (t.budget.get() != null) {
                n++;
            }
        }
        return n;
    }

    /**
     * Shuts the pools down when this scheduler owns them (the shared scheduler ignores it), and stops
     * the budget clocks it drives.
     */
    @Override
    public void close() {
        if (this == SharedHolder.INSTANCE) {
            return;
        }
        closed = true;
        for (BudgetTicker t : tickers) {
            t.stop();
        }
        if (owned) {
            timers.shutdownNow();
            if (work instanceof ExecutorService es) {
                es.shutdownNow();
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

    /** Ticks one budget's coarse clock at its slot boundaries, rescheduling itself. */
    private final class BudgetTicker implements Runnable {
        final WeakReference<RetryBudget> budget;

        BudgetTicker(RetryBudget budget) {
            this.budget = new WeakReference<>(budget);
        }

        @Override
        public void run() {
            RetryBudget b = budget.get();
            if (b == null || closed) {
                stop();
                return;
            }
            long untilNext = b.tick();
            try {
                timers.schedule(this, untilNext, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                stop(); // the timers were shut down under us
            }
            if (closed) {
                stop(); // close() ran while this tick published
            }
        }

        void stop() {
            tickers.remove(this);
            RetryBudget b = budget.get();
            if (b != null) {
                b.stopTicking();
            }
        }
    }

    /** One pending timer. */
    final class Timer implements Runnable {
        private final Runnable task;
        private final Executor executor;
        private final AtomicBoolean done = new AtomicBoolean();
        volatile ScheduledFuture<?> future;

        Timer(Runnable task, Executor executor) {
            this.task = task;
            this.executor = executor;
        }

        @Override
        public void run() {
            if (finish()) {
                executor.execute(task);
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
                outstanding.decrementAndGet();
                return true;
            }
            return false;
        }
    }
}
