package io.github.grpcretry.budget;

import java.lang.ref.WeakReference;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Ticks one budget's coarse clock ({@link RetryBudget#tick()}) at its slot boundaries on a timer pool,
 * rescheduling itself. It holds the budget weakly. {@link #ended} completes when the ticks end: the budget
 * is no longer reachable, or the pool rejected a tick (shut down); cancelling (or completing) it ends them.
 * Once ended, the budget reads the clock again.
 */
final class BudgetClock implements Runnable {

    private final WeakReference<RetryBudget> budget;
    private final ScheduledExecutorService timers;
    final CompletableFuture<Void> ended = new CompletableFuture<>();

    BudgetClock(RetryBudget budget, ScheduledExecutorService timers) {
        this.budget = new WeakReference<>(budget);
        this.timers = timers;
        ended.whenComplete((r, e) -> stopTicking());
    }

    @Override
    public void run() {
        RetryBudget b = budget.get();
        if (b == null || ended.isDone()) {
            ended.complete(null);
            return;
        }
        long untilNext = b.tick();
        try {
            timers.schedule(this, untilNext, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            ended.complete(null); // the timers were shut down under us
        }
        if (ended.isDone()) {
            stopTicking(); // the clock was stopped while this tick published
        }
    }

    private void stopTicking() {
        RetryBudget b = budget.get();
        if (b != null) {
            b.stopTicking();
        }
    }
}
