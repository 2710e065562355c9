package io.github.grpcretry.benchmarks;

import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.throttle.RetryThrottle;
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
 * One channel's A6 throttle shared by one or two threads (the worst case: every thread hits the same
 * {@code AtomicInteger}). Time per decision in ns.
 *
 * <ul>
 *   <li>{@code success*}: a call ended OK on a full bucket (the success path: a read, no write);</li>
 *   <li>{@code failureThenSuccess*}: a qualified failure (take a token, decide) and then an OK call
 *       (give it back): two compare-and-sets, so the bucket stays near full and keeps allowing;</li>
 *   <li>{@code isRetryAllowed*}: the read-only check.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 500, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 3, time = 500, timeUnit = TimeUnit.MILLISECONDS)
@Fork(1)
public class ThrottleBenchmark {

    private RetryThrottle throttle;

    @Setup(Level.Trial)
    public void setUp() {
        throttle = new RetryThrottle(new RetryThrottlingPolicy(10, 1));
    }

    @Benchmark
    @Threads(1)
    public void success1Thread() {
        throttle.onSuccess();
    }

    @Benchmark
    @Threads(2)
    public void success2Threads() {
        throttle.onSuccess();
    }

    @Benchmark
    @Threads(1)
    public boolean failureThenSuccess1Thread() {
        boolean allowed = throttle.onQualifiedFailureThenCheckAllowed();
        throttle.onSuccess();
        return allowed;
    }

    @Benchmark
    @Threads(2)
    public boolean failureThenSuccess2Threads() {
        boolean allowed = throttle.onQualifiedFailureThenCheckAllowed();
        throttle.onSuccess();
        return allowed;
    }

    @Benchmark
    @Threads(1)
    public boolean isRetryAllowed1Thread() {
        return throttle.isRetryAllowed();
    }

    @Benchmark
    @Threads(2)
    public boolean isRetryAllowed2Threads() {
        return throttle.isRetryAllowed();
    }
}
