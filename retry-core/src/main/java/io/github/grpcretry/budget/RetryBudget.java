package io.github.grpcretry.budget;

import io.github.grpcretry.policy.RetryBudgetPolicy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The retry budget of one channel: over a sliding window of {@code ttl}, retries and hedges may not
 * exceed {@code ratio} × calls + {@code minRetriesPerSecond} × ttl.
 *
 * <p>The window is {@value #SLOTS} slots of {@code ttl / SLOTS} each: the current slot and the
 * {@code SLOTS - 1} before it. The slots live in a ring of {@value #RING} (a power of two, so a slot's
 * index is its epoch masked, no division). Each slot keeps its epoch and its count packed in one
 * {@code long}, so a slot is reset and incremented by a single compare-and-set: lock-free and exact.
 * An update computed for an epoch that the slot has already left behind (the thread was descheduled
 * for a whole ring) is dropped, never written over the newer count; epochs are counted from the
 * clock's reading at construction and compared modulo their width, so the clock's sign and
 * wrap-around do not matter. A sum over the window reads exactly the {@value #SLOTS} slots of its
 * epochs and counts those that still hold them.
 *
 * <p>A retry reserves its unit first and checks the balance afterwards, giving the unit back when
 * the balance went negative. Of any set of retries decided against the same window, the one that
 * reserved last saw all the others' reservations in its check, so concurrent retries can only be
 * refused too eagerly, never admitted past the budget. Decisions that straddle a slot boundary
 * (one thread's clock reading just before it, another's just after) are judged against windows one
 * slot apart, and the older one cannot see a reservation in the newer slot: the newer window can
 * then exceed its budget by at most the number of such decisions in flight at that instant, an
 * error that does not accumulate. A retry that finds less than one unit before
 * reserving is refused at once, without a write: on a spent budget, refusals do not contend.
 *
 * <h2>The clock</h2>
 * Reading {@code System.nanoTime()} costs more than the rest of {@link #onCall()} together (a
 * compare-and-set; the figures are in docs/benchmarks.md), and every call makes one deposit.
 * So a timer may drive a coarse clock ({@link #driveClock}, usually through
 * {@code RetryScheduler.driveBudgetClock}): at every slot boundary it publishes the current epoch in
 * one volatile field, and {@link #onCall()} deposits into the published slot without reading the
 * clock. Retry decisions, {@link #balance()} and the window counts always read the clock.
 *
 * <p>The published epoch is never ahead of the clock (a timer does not fire early), only behind it
 * while a late tick is due: a deposit made then lands one slot early and leaves the window one slot
 * (of {@code ttl / SLOTS}) early. Deposits can thus only be undercounted, never overcounted, so the
 * bound on retries holds exactly as with the clock; the budget is at most a slot's worth of calls
 * more eager to refuse right after a late tick. A published epoch found two or more slots behind the
 * clock by a retry decision (a timer that stopped or stalls) is dropped: deposits read the clock
 * again until the next tick. Without ticks (no timer, or after the driver stopped) every
 * operation reads the clock.
 *
 * <h2>Closed slots</h2>
 * A tick also sums the window's {@code SLOTS - 1} closed slots (the ones before the slot it
 * publishes), so a retry decision inside a ticked slot reads that sum and the current slot, not the
 * whole window. Closed slots only change afterwards by late writes: a deposit counted late is an
 * undercount (safe), and a reservation that lands in a closed slot after the tick summed it comes
 * from a decision that straddled the boundary (above), and is not seen by the decisions of the new
 * slot, which is the bound stated there. Decisions without a sum for their slot (no ticks, a late tick)
 * sum the window.
 *
 * <p>With a service that always fails, a client whose calls are spread over time sends at most
 * {@code ratio} × calls + {@code minRetriesPerSecond} × ttl retries in any window, so attempts ÷ calls
 * ≤ 1 + ratio plus the floor's share.
 */
public final class RetryBudget {

    static final int SLOTS = 20;
    /** Ring entries: a power of two of at least {@link #SLOTS}. */
    static final int RING = 32;
    private static final int RING_MASK = RING - 1;
    private static final int COUNT_BITS = 24;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final int EPOCH_BITS = 64 - COUNT_BITS - 1;
    private static final long EPOCH_MASK = (1L << EPOCH_BITS) - 1;
    private static final long UNIT = 1000;
    /** {@link #tickedEpoch} when no tick is in force: read the clock. */
    private static final long NOT_TICKING = -1;

    private final RetryBudgetPolicy policy;
    private final LongSupplier nanoClock;
    private final long slotNanos;
    /** The clock at construction: epochs count slots from here (differences of nanoTime survive its wrap). */
    private final long origin;
    private final long depositPerCall;
    private final long reserve;
    private final AtomicLongArray calls = new AtomicLongArray(RING);
    private final AtomicLongArray retries = new AtomicLongArray(RING);
    /** The epoch published by the last tick (masked), or {@link #NOT_TICKING}. */
    private volatile long tickedEpoch = NOT_TICKING;
    /**
     * The unmasked epoch of a recent clock reading: a reading inside its slot takes it after one
     * multiplication instead of a 64-bit division. Any value is safe (it is checked against the reading).
     */
    private volatile long recentEpoch;
    private final AtomicBoolean tickerClaimed = new AtomicBoolean();
    /** The closed slots of the window of the last tick's slot, summed by that tick (null before the first). */
    private volatile @Nullable ClosedSlots closedSlots;

    /** The sums of the {@code SLOTS - 1} slots before {@code epoch}, taken when {@code epoch} began. */
    private record ClosedSlots(long epoch, long calls, long retries) {
    }

    public RetryBudget(RetryBudgetPolicy policy) {
        this(policy, System::nanoTime);
    }

    /** On {@code nanoClock} (nanoseconds, as {@link System#nanoTime()}). */
    RetryBudget(RetryBudgetPolicy policy, LongSupplier nanoClock) {
        this.policy = policy;
        this.nanoClock = nanoClock;
        long ttlNanos = saturatedNanos(policy.ttl());
        this.slotNanos = Math.max(1, ttlNanos / SLOTS);
        this.origin = nanoClock.getAsLong();
        this.depositPerCall = Math.round(policy.ratio() * UNIT);
        this.reserve = Math.round(policy.minRetriesPerSecond() * ttlNanos / 1e9 * UNIT);
    }

    /** An original call started: deposits {@code ratio}. */
    public void onCall() {
        long e = tickedEpoch;
        if (e != NOT_TICKING && increment(calls, e, 1)) {
            return;
        }
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
        dropStaleTick(epoch);
        ClosedSlots closed = closedSlots;
        if (closed != null && closed.epoch != epoch) {
            closed = null; // summed for another slot: sum the window here
        }
        long deposits = depositPerCall * windowCount(calls, epoch, closed == null ? -1 : closed.calls) + reserve;
        long closedRetries = closed == null ? -1 : closed.retries;
        if (deposits - UNIT * windowCount(retries, epoch, closedRetries) < UNIT) {
            return false; // spent: refused without a write (reserving would have been refused too)
        }
        if (!increment(retries, epoch, 1)) {
            // this thread fell a whole ring behind: reserve in the current slot, whose window differs
            epoch = epoch();
            if (!increment(retries, epoch, 1)) {
                return false; // a clock that went backwards: refuse rather than guess
            }
            closedRetries = -1;
            deposits = depositPerCall * sum(calls, epoch) + reserve;
        }
        // Deposits in this window can only have grown since they were read: the check after the
        // reservation reads the retries again (every reservation made before ours), not the calls.
        if (deposits - UNIT * windowCount(retries, epoch, closedRetries) >= 0) {
            return true;
        }
        // a unit reserved in a slot that has since been reused has expired already: nothing to give back
        increment(retries, epoch, -1);
        return false;
    }

    /** Retries the budget permits now (may be fractional; never negative). */
    public double balance() {
        long epoch = epoch();
        dropStaleTick(epoch);
        return Math.max(0, balanceMilli(epoch)) / (double) UNIT;
    }

    /** Original calls counted in the current window. */
    public long callsInWindow() {
        long epoch = epoch();
        dropStaleTick(epoch);
        return sum(calls, epoch);
    }

    /** Retries and hedges counted in the current window. */
    public long retriesInWindow() {
        return sum(retries, epoch());
    }

    public RetryBudgetPolicy policy() {
        return policy;
    }

    // ------------------------------------------------------------------ the coarse clock

    /**
     * Lets {@code timers} drive this budget's coarse clock: a tick now, on the calling thread, and then
     * one at every slot boundary on {@code timers}, so a call's deposit needs no clock reading. The ticks
     * hold the budget weakly.
     *
     * @return a future that completes when the ticks end (the budget is no longer reachable, or
     *     {@code timers} rejected a tick); cancel it to end them. Once they end, the budget reads the
     *     clock again. Null when the budget has a driver already: one driver per budget, however many
     *     engines share it.
     */
    public @Nullable CompletableFuture<Void> driveClock(ScheduledExecutorService timers) {
        if (!tickerClaimed.compareAndSet(false, true)) {
            return null;
        }
        BudgetClock clock = new BudgetClock(this, timers);
        clock.run();
        return clock.ended;
    }

    /**
     * Publishes the current slot for {@link #onCall()} (the driver calls this at every slot boundary),
     * sums the window's closed slots for the retry decisions of that slot, and returns the
     * nanoseconds until the next boundary, when the next tick is due.
     */
    long tick() {
        long elapsed = nanoClock.getAsLong() - origin;
        long raw = Math.floorDiv(elapsed, slotNanos);
        recentEpoch = raw;
        long epoch = raw & EPOCH_MASK;
        closedSlots = new ClosedSlots(epoch, sum(calls, epoch - 1, SLOTS - 1), sum(retries, epoch - 1, SLOTS - 1));
        tickedEpoch = epoch;
        return (raw + 1) * slotNanos - elapsed;
    }

    /** Stops using the published slot: every operation reads the clock again (until the next {@link #tick()}). */
    void stopTicking() {
        tickedEpoch = NOT_TICKING;
    }

    /** The width of one slot ({@code ttl / }{@value #SLOTS}). */
    long slotNanos() {
        return slotNanos;
    }

    /** Whether a published slot is in force ({@link #onCall()} does not read the clock). */
    boolean isTicking() {
        return tickedEpoch != NOT_TICKING;
    }

    /** A published epoch two or more slots behind the clock means a stalled or stopped timer: drop it. */
    private void dropStaleTick(long epoch) {
        long t = tickedEpoch;
        if (t != NOT_TICKING && age(epoch, t) >= 2) {
            stopTicking();
        }
    }

    // ------------------------------------------------------------------ slots

    /** The balance of the window ending at {@code epoch}, in thousandths of a retry. */
    private long balanceMilli(long epoch) {
        return depositPerCall * sum(calls, epoch) + reserve - UNIT * sum(retries, epoch);
    }

    /** The current epoch from the clock (masked). */
    private long epoch() {
        long elapsed = nanoClock.getAsLong() - origin;
        long raw = recentEpoch;
        long offset = elapsed - raw * slotNanos;
        if (offset < 0 || offset >= slotNanos) {
            raw = Math.floorDiv(elapsed, slotNanos);
            recentEpoch = raw;
        }
        return raw & EPOCH_MASK;
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
        int idx = (int) epoch & RING_MASK;
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

    /** The counts of the window ending at {@code epoch}: the {@value #SLOTS} slots that still hold its epochs. */
    private static long sum(AtomicLongArray ring, long epoch) {
        return sum(ring, epoch, SLOTS);
    }

    /** The counts of the {@code slots} slots ending at {@code epoch} that still hold their epochs. */
    private static long sum(AtomicLongArray ring, long epoch, int slots) {
        long total = 0;
        for (int i = 0; i < slots; i++) {
            long e = (epoch - i) & EPOCH_MASK;
            long v = ring.get((int) e & RING_MASK);
            if (v >>> COUNT_BITS == e) {
                total += v & COUNT_MASK;
            }
        }
        return total;
    }

    /**
     * The counts of the window ending at {@code epoch}: its closed slots' sum as the last tick made
     * it ({@code closedSum}) plus the current slot, or all {@value #SLOTS} slots when there is no
     * such sum ({@code closedSum} &lt; 0).
     */
    private static long windowCount(AtomicLongArray ring, long epoch, long closedSum) {
        if (closedSum < 0) {
            return sum(ring, epoch, SLOTS);
        }
        return closedSum + sum(ring, epoch, 1);
    }

    private static long saturatedNanos(java.time.Duration d) {
        return io.github.grpcretry.internal.time.Durations.saturatedNanos(d);
    }

    @Override
    public String toString() {
        return "RetryBudget[balance=" + balance() + ", " + policy + "]";
    }
}
