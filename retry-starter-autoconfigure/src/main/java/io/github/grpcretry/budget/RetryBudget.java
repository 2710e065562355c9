package io.github.grpcretry.budget;

import io.github.grpcretry.policy.RetryBudgetPolicy;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * The retry budget of one channel: over a sliding window of {@code ttl}, retries and hedges may not
 * exceed {@code ratio} × calls + {@code minRetriesPerSecond} × ttl.
 *
 * <p>The window is a ring of {@value #SLOTS} slots. Each slot keeps its epoch and its count packed
 * in one {@code long}, so a slot is reset and incremented by a single compare-and-set: lock-free and
 * exact. A retry reserves its unit first and checks the balance afterwards, giving it back when the
 * balance went negative; concurrent retries can therefore only be refused too eagerly, never
 * admitted past the budget.
 */
public final class RetryBudget {

    static final int SLOTS = 20;
    private static final int COUNT_BITS = 24;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final long UNIT = 1000;

    private final RetryBudgetPolicy policy;
    private final LongSupplier nanoClock;
    private final long slotNanos;
    private final long depositPerCall;
    private final long reserve;
    private final AtomicLongArray calls = new AtomicLongArray(SLOTS);
    private final AtomicLongArray retries = new AtomicLongArray(SLOTS);

    public RetryBudget(RetryBudgetPolicy policy) {
        this(policy, System::nanoTime);
    }

    /** With an injectable clock, for tests. */
    public RetryBudget(RetryBudgetPolicy policy, LongSupplier nanoClock) {
        this.policy = policy;
        this.nanoClock = nanoClock;
        this.slotNanos = Math.max(1, policy.ttl().toNanos() / SLOTS);
        this.depositPerCall = Math.round(policy.ratio() * UNIT);
        this.reserve = Math.round(policy.minRetriesPerSecond() * policy.ttl().toNanos() / 1e9 * UNIT);
    }

    /** An original call started: deposits {@code ratio}. */
    public void onCall() {
        increment(calls, epoch(), 1);
    }

    /**
     * A retry or hedge wants to go out: withdraws one unit and returns {@code true}, or returns
     * {@code false} (nothing withdrawn) when the budget is spent.
     */
    public boolean tryAcquireRetry() {
        long epoch = epoch();
        increment(retries, epoch, 1);
        if (balanceMilli(epoch) >= 0) {
            return true;
        }
        increment(retries, epoch, -1);
        return false;
    }

    /** Retries the budget permits now (may be fractional; never negative). */
    public double balance() {
        return Math.max(0, balanceMilli(epoch())) / (double) UNIT;
    }

    /** Original calls counted in the current window. */
    public long callsInWindow() {
        return sum(calls, epoch());
    }

    /** Retries and hedges counted in the current window. */
    public long retriesInWindow() {
        return sum(retries, epoch());
    }

    public RetryBudgetPolicy policy() {
        return policy;
    }

    private long balanceMilli(long epoch) {
        return depositPerCall * sum(calls, epoch) + reserve - UNIT * sum(retries, epoch);
    }

    private long epoch() {
        return Math.floorDiv(nanoClock.getAsLong(), slotNanos) & ((1L << (64 - COUNT_BITS - 1)) - 1);
    }

    private static void increment(AtomicLongArray ring, long epoch, int delta) {
        int idx = (int) (epoch % SLOTS);
        while (true) {
            long current = ring.get(idx);
            long currentEpoch = current >>> COUNT_BITS;
            long count = currentEpoch == epoch ? current & COUNT_MASK : 0;
            long nextCount = Math.max(0, Math.min(COUNT_MASK, count + delta));
            long next = (epoch << COUNT_BITS) | nextCount;
            if (current == next || ring.compareAndSet(idx, current, next)) {
                return;
            }
        }
    }

    private static long sum(AtomicLongArray ring, long epoch) {
        long total = 0;
        for (int i = 0; i < SLOTS; i++) {
            long v = ring.get(i);
            long slotEpoch = v >>> COUNT_BITS;
            if (slotEpoch <= epoch && epoch - slotEpoch < SLOTS) {
                total += v & COUNT_MASK;
            }
        }
        return total;
    }

    @Override
    public String toString() {
        return "RetryBudget[balance=" + balance() + ", " + policy + "]";
    }
}
