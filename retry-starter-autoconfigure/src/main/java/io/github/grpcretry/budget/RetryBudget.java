package io.github.grpcretry.budget;

import io.github.grpcretry.policy.RetryBudgetPolicy;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * The retry budget of one channel: over a sliding window of {@code ttl}, retries and hedges may not
 * exceed {@code ratio} × calls + {@code minRetriesPerSecond} × ttl.
 *
 * <p>The window is a ring of {@value #SLOTS} slots of {@code ttl / SLOTS} each; the window is the
 * current slot and the {@code SLOTS - 1} before it. Each slot keeps its epoch and its count packed
 * in one {@code long}, so a slot is reset and incremented by a single compare-and-set: lock-free and
 * exact. An update computed for an epoch that the slot has already left behind (the thread was
 * descheduled for a whole window) is dropped, never written over the newer count; epochs are
 * counted from the clock's reading at construction and compared modulo their width, so the clock's
 * sign and wrap-around do not matter.
 *
 * <p>A retry reserves its unit first and checks the balance afterwards, giving the unit back when
 * the balance went negative. Of any set of admitted retries, the one that reserved last saw all the
 * others' reservations in its check, so concurrent retries can only be refused too eagerly, never
 * admitted past the budget.
 *
 * <p>With a service that always fails, a client whose calls are spread over time sends at most
 * {@code ratio} × calls + {@code minRetriesPerSecond} × ttl retries in any window, so attempts ÷ calls
 * ≤ 1 + ratio plus the floor's share.
 */
public final class RetryBudget {

    static final int SLOTS = 20;
    private static final int COUNT_BITS = 24;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final int EPOCH_BITS = 64 - COUNT_BITS - 1;
    private static final long EPOCH_MASK = (1L << EPOCH_BITS) - 1;
    private static final long UNIT = 1000;

    private final RetryBudgetPolicy policy;
    private final LongSupplier nanoClock;
    private final long slotNanos;
    /** The clock at construction: epochs count slots from here (differences of nanoTime survive its wrap). */
    private final long origin;
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
        this.origin = nanoClock.getAsLong();
        this.depositPerCall = Math.round(policy.ratio() * UNIT);
        this.reserve = Math.round(policy.minRetriesPerSecond() * policy.ttl().toNanos() / 1e9 * UNIT);
    }

    /** An original call started: deposits {@code ratio}. */
    public void onCall() {
        if (!increment(calls, epoch(), 1)) {
            // the slot moved on between reading the clock and the update: count the call now
            increment(calls, epoch(), 1);
        }
    }

    /**
     * A retry or hedge wants to go out: withdraws one unit and returns {@code true}, or returns
     * {@code false} (nothing withdrawn) when the budget is spent.
     */
    public boolean tryAcquireRetry() {
        long epoch = epoch();
        if (!increment(retries, epoch, 1)) {
            // this thread fell a whole window behind: reserve in the current slot
            epoch = epoch();
            if (!increment(retries, epoch, 1)) {
                return false; // a clock that went backwards: refuse rather than guess
            }
        }
        if (balanceMilli(epoch) >= 0) {
            return true;
        }
        // a unit reserved in a slot that has since been reused has expired already: nothing to give back
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
        return Math.floorDiv(nanoClock.getAsLong() - origin, slotNanos) & EPOCH_MASK;
    }

    /** How many slots {@code slotEpoch} lies behind {@code epoch} (negative when it is ahead), modulo the epoch width. */
    private static long age(long epoch, long slotEpoch) {
        long d = (epoch - slotEpoch) & EPOCH_MASK;
        return d > (EPOCH_MASK >>> 1) ? d - EPOCH_MASK - 1 : d;
    }

    /**
     * Adds {@code delta} to the count of {@code epoch} in its slot (saturating at 0 and the count's
     * width), resetting a slot that holds an older epoch. Returns false, changing nothing, when the
     * slot already holds a newer epoch.
     */
    private static boolean increment(AtomicLongArray ring, long epoch, int delta) {
        int idx = (int) (epoch % SLOTS);
        while (true) {
            long current = ring.get(idx);
            long currentEpoch = current >>> COUNT_BITS;
            long count;
            if (currentEpoch == epoch) {
                count = current & COUNT_MASK;
            } else if (current != 0 && age(epoch, currentEpoch) < 0) {
                return false;
            } else {
                count = 0;
            }
            long nextCount = Math.max(0, Math.min(COUNT_MASK, count + delta));
            long next = (epoch << COUNT_BITS) | nextCount;
            if (current == next || ring.compareAndSet(idx, current, next)) {
                return true;
            }
        }
    }

    private static long sum(AtomicLongArray ring, long epoch) {
        long total = 0;
        for (int i = 0; i < SLOTS; i++) {
            long v = ring.get(i);
            long age = age(epoch, v >>> COUNT_BITS);
            if (age >= 0 && age < SLOTS) {
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
