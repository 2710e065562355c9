package io.github.grpcretry.budget;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.RetryBudgetPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The windowed budget (docs/design.md §6) on an injected clock, and under contention. */
class RetryBudgetTest {

    private static final long SECOND = 1_000_000_000L;

    private final AtomicLong now = new AtomicLong(1_000 * SECOND);

    private RetryBudget budget(double ratio, double floor, Duration ttl) {
        return new RetryBudget(new RetryBudgetPolicy(ratio, floor, ttl), now::get);
    }

    private static int acquireAll(RetryBudget b) {
        int n = 0;
        while (b.tryAcquireRetry()) {
            n++;
            if (n > 1_000_000) {
                throw new AssertionError("budget never ran out");
            }
        }
        return n;
    }

    private static void calls(RetryBudget b, int n) {
        for (int i = 0; i < n; i++) {
            b.onCall();
        }
    }

    @Test
    void startsEmptyAndEachCallDepositsTheRatio() {
        RetryBudget b = budget(0.1, 0, Duration.ofSeconds(10));
        assertThat(b.tryAcquireRetry()).as("no calls, no floor: nothing to spend").isFalse();
        calls(b, 9);
        assertThat(b.balance()).isEqualTo(0.9);
        assertThat(b.tryAcquireRetry()).as("0.9 of a retry is not a retry").isFalse();
        b.onCall();
        assertThat(b.tryAcquireRetry()).isTrue();
        assertThat(b.tryAcquireRetry()).isFalse();
        calls(b, 35);
        assertThat(acquireAll(b)).isEqualTo(3);
        assertThat(b.callsInWindow()).isEqualTo(45);
        assertThat(b.retriesInWindow()).as("refused retries leave nothing behind").isEqualTo(4);
        assertThat(b.balance()).isEqualTo(0.5);
    }

    @Test
    void theFloorAllowsMinRetriesPerSecondTimesTtlWithoutAnyCall() {
        RetryBudget b = budget(0.2, 2, Duration.ofSeconds(10));
        assertThat(b.balance()).isEqualTo(20.0);
        assertThat(acquireAll(b)).isEqualTo(20);
        calls(b, 50);
        assertThat(acquireAll(b)).as("on top of the floor, 20 % of the calls").isEqualTo(10);
    }

    @Test
    void callsAndRetriesLeaveTheWindowAfterTtl() {
        // ttl 10 s = 20 slots of 500 ms
        RetryBudget b = budget(0.1, 0, Duration.ofSeconds(10));
        calls(b, 100);
        assertThat(acquireAll(b)).isEqualTo(10);
        now.addAndGet(6 * SECOND);
        calls(b, 50);
        assertThat(acquireAll(b)).as("the first retries still count against the window").isEqualTo(5);
        assertThat(b.callsInWindow()).isEqualTo(150);

        now.addAndGet(4 * SECOND); // t = 10 s: the slot of t = 0 has left the window, calls and retries alike
        assertThat(b.callsInWindow()).isEqualTo(50);
        assertThat(b.retriesInWindow()).isEqualTo(5);
        assertThat(b.tryAcquireRetry()).as("50 calls, 5 retries: spent").isFalse();
        calls(b, 10);
        assertThat(acquireAll(b)).isEqualTo(1);

        now.addAndGet(6 * SECOND); // t = 16 s: only the 10 calls made at t = 10 s remain, and their retry
        assertThat(b.callsInWindow()).isEqualTo(10);
        assertThat(b.retriesInWindow()).isEqualTo(1);
        assertThat(b.tryAcquireRetry()).isFalse();

        now.addAndGet(10 * SECOND);
        assertThat(b.callsInWindow()).isZero();
        assertThat(b.retriesInWindow()).isZero();
        assertThat(b.balance()).isZero();
    }

    @Test
    void theWindowSlidesSlotBySlot() {
        // ttl 1 s = 20 slots of 50 ms; one call every 10 ms for 3 s, a retry whenever one is allowed
        RetryBudget b = budget(0.1, 0, Duration.ofSeconds(1));
        List<long[]> admitted = new ArrayList<>();
        List<Long> callTimes = new ArrayList<>();
        long start = now.get();
        for (int i = 0; i < 300; i++) {
            b.onCall();
            callTimes.add(now.get());
            if (b.tryAcquireRetry()) {
                admitted.add(new long[] {now.get()});
            }
            now.addAndGet(10_000_000L);
        }
        // steady state: 100 calls per window -> 10 retries per window, 30 over 3 s (give or take a slot's worth)
        assertThat(admitted).hasSizeBetween(28, 31);
        // at every admission, the budget's window (the current 50 ms slot and the 19 before it) holds at most
        // 10 % of its calls as retries, counted from this test's own records
        for (long[] a : admitted) {
            long t = a[0];
            long windowStart = Math.floorDiv(t - start, 50_000_000L) * 50_000_000L + start - 950_000_000L;
            long retries = admitted.stream().filter(r -> r[0] >= windowStart && r[0] <= t).count();
            long calls = callTimes.stream().filter(c -> c >= windowStart && c <= t).count();
            assertThat(retries).as("retries in the window at %d ms", (t - start) / 1_000_000)
                    .isLessThanOrEqualTo(calls / 10);
        }
    }

    @Test
    void anUpdateForAnEpochTheSlotHasLeftBehindIsDropped() {
        RetryBudget b = budget(0.5, 0, Duration.ofSeconds(10));
        long t0 = now.get();
        now.set(t0 + 10 * SECOND); // a thread writes the slot's newer epoch (same ring index as t0)
        calls(b, 4);
        now.set(t0); // a descheduled thread comes back with a clock reading a whole window old
        b.onCall();
        assertThat(b.tryAcquireRetry()).as("a reservation for a past window is refused, not written").isFalse();
        now.set(t0 + 10 * SECOND);
        assertThat(b.callsInWindow()).as("the newer slot kept its count").isEqualTo(4);
        assertThat(b.retriesInWindow()).isZero();
        assertThat(acquireAll(b)).isEqualTo(2);
    }

    @Test
    void aClockCrossingZeroKeepsTheWindow() {
        now.set(-2 * SECOND);
        RetryBudget b = budget(0.1, 0, Duration.ofSeconds(10));
        now.set(-300_000_000L);
        calls(b, 20);
        now.set(200_000_000L);
        assertThat(b.callsInWindow()).isEqualTo(20);
        assertThat(acquireAll(b)).isEqualTo(2);
        now.set(Long.MAX_VALUE - 100_000_000L);
        b = budget(0.1, 0, Duration.ofSeconds(10));
        calls(b, 10);
        now.set(Long.MIN_VALUE + 100_000_000L); // nanoTime may wrap
        assertThat(b.callsInWindow()).isEqualTo(10);
        assertThat(acquireAll(b)).isEqualTo(1);
    }

    @Test
    void concurrentRetriesNeverPassTheBudget() throws Exception {
        RetryBudget b = budget(0.1, 0, Duration.ofSeconds(10));
        calls(b, 1000); // 100 retries
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    go.await();
                    int n = 0;
                    for (int i = 0; i < 20_000; i++) {
                        if (b.tryAcquireRetry()) {
                            n++;
                        }
                    }
                    return n;
                }));
            }
            go.countDown();
            int admitted = 0;
            for (Future<Integer> f : results) {
                admitted += f.get(30, TimeUnit.SECONDS);
            }
            assertThat(admitted).isLessThanOrEqualTo(100);
            assertThat(admitted + acquireAll(b)).as("refusals under contention give their unit back").isEqualTo(100);
            assertThat(b.retriesInWindow()).isEqualTo(100);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentCallsAndRetriesStayWithinTheRatioAtEveryMoment() throws Exception {
        RetryBudget b = budget(0.1, 0, Duration.ofSeconds(10));
        int threads = 4;
        AtomicLong calls = new AtomicLong();
        AtomicLong admitted = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    go.await();
                    long violations = 0;
                    for (int i = 0; i < 50_000; i++) {
                        calls.incrementAndGet(); // first, so this count never lags the budget's
                        b.onCall();
                        for (int k = 0; k < 3; k++) {
                            if (b.tryAcquireRetry()) {
                                long r = admitted.incrementAndGet();
                                // the calls counted so far include every deposit the admission relied on
                                if (r * 10 > calls.get()) {
                                    violations++;
                                }
                            }
                        }
                    }
                    return violations;
                }));
            }
            go.countDown();
            long violations = 0;
            for (Future<Long> f : results) {
                violations += f.get(60, TimeUnit.SECONDS);
            }
            assertThat(violations).isZero();
            assertThat(admitted.get()).isLessThanOrEqualTo(calls.get() / 10).isGreaterThan(calls.get() / 10 - 10);
            assertThat(b.retriesInWindow()).isEqualTo(admitted.get());
        } finally {
            pool.shutdownNow();
        }
    }
}
