package io.github.grpcretry.benchmarks;

import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One channel's retry budget shared by one or two threads, real clock. Time per decision in ns.
 *
 * <ul>
 *   <li>{@code onCall*}: the success-path deposit every call makes (one slot compare-and-set), with
 *       a clock reading per deposit;</li>
 *   <li>{@code onCallTicked*}: the same on a budget whose coarse clock the shared scheduler drives
 *       (as every engine's budget): the deposit reads the published slot, not the clock;</li>
 *   <li>{@code callThenRetry*}: a call and a retry decision (ratio 1.0, so the retry is granted:
 *       two compare-and-sets and a sum over the window); {@code callThenRetryTicked*} on a ticked
 *       budget, whose decisions read the tick's sum of the closed slots and the current slot;</li>
 *   <li>{@code refusedRetry*}: a retry decision on a spent budget (ratio 0.01, no floor: refused
 *       before reserving), {@code refusedRetryTicked*} on a ticked one;</li>
 *   <li>{@code nanoTime*}: {@code System.nanoTime()} alone, the clock every budget operation reads.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 500, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 3, time = 500, timeUnit = TimeUnit.MILLISECONDS)
@Fork(1)
public class BudgetBenchmark {

    private RetryBudget generous;
    private RetryBudget spent;
    private RetryBudget ticked;
    private RetryBudget spentTicked;

    @Setup(Level.Trial)
    public void setUp() {
        generous = new RetryBudget(new RetryBudgetPolicy(1.0, 10, Duration.ofSeconds(10)));
        spent = new RetryBudget(new RetryBudgetPolicy(0.01, 0, Duration.ofSeconds(10)));
        ticked = new RetryBudget(new RetryBudgetPolicy(1.0, 10, Duration.ofSeconds(10)));
        RetryScheduler.shared().driveBudgetClock(ticked);
        spentTicked = new RetryBudget(new RetryBudgetPolicy(0.01, 0, Duration.ofSeconds(10)));
        RetryScheduler.shared().driveBudgetClock(spentTicked);
    }

    @Benchmark
    @Threads(1)
    public void onCallTicked1Thread() {
        ticked.onCall();
    }

    @Benchmark
    @Threads(2)
    public void onCallTicked2Threads() {
        ticked.onCall();
    }

    @Benchmark
    @Threads(1)
    public boolean callThenRetryTicked1Thread() {
        ticked.onCall();
        return ticked.tryAcquireRetry();
    }

    @Benchmark
    @Threads(2)
    public boolean callThenRetryTicked2Threads() {
        ticked.onCall();
        return ticked.tryAcquireRetry();
    }

    @Benchmark
    @Threads(1)
    public boolean refusedRetryTicked1Thread() {
        return spentTicked.tryAcquireRetry();
    }

    @Benchmark
    @Threads(2)
    public boolean refusedRetryTicked2Threads() {
        return spentTicked.tryAcquireRetry();
    }

    @Benchmark
    @Threads(1)
    public void onCall1Thread() {
        generous.onCall();
    }

    @Benchmark
    @Threads(2)
    public void onCall2Threads() {
        generous.onCall();
    }

    @Benchmark
    @Threads(1)
    public boolean callThenRetry1Thread() {
        generous.onCall();
        return generous.tryAcquireRetry();
    }

    @Benchmark
    @Threads(2)
    public boolean callThenRetry2Threads() {
        generous.onCall();
        return generous.tryAcquireRetry();
    }

    @Benchmark
    @Threads(1)
    public boolean refusedRetry1Thread() {
        return spent.tryAcquireRetry();
    }

    @Benchmark
    @Threads(2)
    public boolean refusedRetry2Threads() {
        return spent.tryAcquireRetry();
    }

    @Benchmark
    @Threads(1)
    public long nanoTime1Thread() {
        return System.nanoTime();
    }

    @Benchmark
    @Threads(2)
    public long nanoTime2Threads() {
        return System.nanoTime();
    }
}
