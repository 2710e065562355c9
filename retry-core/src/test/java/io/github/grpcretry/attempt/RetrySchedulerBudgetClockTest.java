package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The scheduler keeps no budget clock that has ended: a budget no longer reachable leaves nothing behind. */
class RetrySchedulerBudgetClockTest {

    @Test
    void theClockOfAnUnreachableBudgetEndsAndTheSchedulerForgetsIt() throws Exception {
        try (RetryScheduler scheduler = RetryScheduler.create(1, "clock-gc")) {
            // ttl 1s: a tick every 50 ms, each of which checks whether the budget is still reachable
            RetryBudget budget = new RetryBudget(new RetryBudgetPolicy(0.1, 0, Duration.ofSeconds(1)));
            scheduler.driveBudgetClock(budget);
            assertThat(scheduler.drivenBudgetClocks()).isEqualTo(1);
            WeakReference<RetryBudget> ref = new WeakReference<>(budget);
            budget = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((ref.get() != null || scheduler.drivenBudgetClocks() > 0) && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(20); // not a synchronisation point: a poll interval for GC and the next tick
            }
            assertThat(ref.get()).as("the clock holds its budget weakly").isNull();
            assertThat(scheduler.drivenBudgetClocks()).as("clocks the scheduler still holds").isZero();
        }
    }

    @Test
    void closingTheSchedulerEndsItsClocks() {
        RetryBudget budget = new RetryBudget(new RetryBudgetPolicy(0.1, 0, Duration.ofSeconds(10)));
        RetryScheduler scheduler = RetryScheduler.create(1, "clock-close");
        scheduler.driveBudgetClock(budget);
        assertThat(scheduler.drivenBudgetClocks()).isEqualTo(1);
        scheduler.close();
        assertThat(scheduler.drivenBudgetClocks()).isZero();
        scheduler.driveBudgetClock(budget); // a closed scheduler drives nothing
        assertThat(scheduler.drivenBudgetClocks()).isZero();
    }
}
