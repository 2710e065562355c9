package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The scheduler keeps no budget clock that has ended: a budget no longer reachable, or a closed scheduler, leaves
 * no tick behind on the timer threads (seen on timer threads the test owns: their queue holds the next tick).
 */
class RetrySchedulerBudgetClockTest {

    @Test
    void theClockOfAnUnreachableBudgetEndsAndLeavesNoTick() throws Exception {
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1);
        ExecutorService work = Executors.newSingleThreadExecutor();
        try (RetryScheduler scheduler = RetryScheduler.of(timers, work)) {
            // ttl 1s: a tick every 50 ms, each of which checks whether the budget is still reachable
            RetryBudget budget = new RetryBudget(new RetryBudgetPolicy(0.1, 0, Duration.ofSeconds(1)));
            scheduler.driveBudgetClock(budget);
            assertThat(timers.getQueue()).as("the next tick").hasSize(1);
            WeakReference<RetryBudget> ref = new WeakReference<>(budget);
            budget = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((ref.get() != null || !timers.getQueue().isEmpty()) && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(20); // not a synchronisation point: a poll interval for GC and the next tick
            }
            assertThat(ref.get()).as("the clock holds its budget weakly").isNull();
            assertThat(timers.getQueue()).as("ticks still scheduled").isEmpty();
        } finally {
            timers.shutdownNow();
            work.shutdownNow();
        }
    }

    @Test
    void closingTheSchedulerEndsItsClocks() throws Exception {
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1);
        ExecutorService work = Executors.newSingleThreadExecutor();
        try {
            // ttl 1s: the tick after close() comes within 50 ms and schedules no other
            RetryBudget budget = new RetryBudget(new RetryBudgetPolicy(0.1, 0, Duration.ofSeconds(1)));
            RetryScheduler scheduler = RetryScheduler.of(timers, work);
            scheduler.driveBudgetClock(budget);
            assertThat(timers.getQueue()).as("the next tick").hasSize(1);
            scheduler.close();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!timers.getQueue().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10); // a poll interval for the next tick
            }
            assertThat(timers.getQueue()).as("ticks after close()").isEmpty();
            // a closed scheduler drives nothing, not even a budget no one drives yet
            scheduler.driveBudgetClock(new RetryBudget(new RetryBudgetPolicy(0.1, 0, Duration.ofSeconds(1))));
            assertThat(timers.getQueue()).isEmpty();
        } finally {
            timers.shutdownNow();
            work.shutdownNow();
        }
    }
}
