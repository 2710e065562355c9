package io.github.grpcretry.budget;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/**
 * The budget's coarse clock (a published slot instead of a clock reading per deposit) and its
 * power-of-two ring: deposits without clock readings, the bound on retries kept when ticks come late
 * or stop, and a timer-driven clock that ends with its scheduler.
 */
class RetryBudgetClockTest {

    private static final long MS = 1_000_000L;
    private static final long SECOND = 1_000 * MS;

    private final AtomicLong now = new AtomicLong(1_000 * SECOND);
    private final AtomicLong reads = new AtomicLong();
    private final LongSupplier countingClock = () -> {
        reads.incrementAndGet();
        return now.get();
    };

    private RetryBudget budget(double ratio, double floor, Duration ttl) {
        return new RetryBudget(new RetryBudgetPolicy(ratio, floor, ttl), countingClock);
    }

    private static int acquireAll(RetryBudget b) {
        int n = 0;
        while (b.tryAcquireRetry()) {
            n++;
        }
        return n;
    }

    @Test
    void aTickedBudgetTakesDepositsWithoutReadingTheClock() {
        RetryBudget b = budget(0.1, 0, Duration.ofSeconds(10));
        assertThat(b.isTicking()).isFalse();
        b.onCall();
        assertThat(reads.get()).as("without ticks every deposit reads the clock").isEqualTo(2); // construction + 1
        assertThat(b.tick()).as("nanoseconds to the next slot boundary").isEqualTo(500 * MS);
        assertThat(b.isTicking()).isTrue();
        long before = reads.get();
        for (int i = 0; i < 1_000; i++) {
            b.onCall();
        }
        assertThat(reads.get() - before).as("clock readings for 1000 deposits").isZero();
        assertThat(b.callsInWindow()).isEqualTo(1_001);
        assertThat(acquireAll(b)).isEqualTo(100);
    }

    @Test
    void aLateTickOnlyLetsDepositsLeaveTheWindowASlotEarly() {
        RetryBudget b = budget(0.1, 0, Duration.ofSeconds(10)); // 20 slots of 500 ms
        b.tick();
        now.addAndGet(700 * MS); // the next slot began 200 ms ago; its tick is late
        for (int i = 0; i < 100; i++) {
            b.onCall(); // lands in the published (previous) slot
        }
        assertThat(b.callsInWindow()).isEqualTo(100);
        now.addAndGet(9_300 * MS); // t = 10 s: the published slot (t = 0) has left the window
        assertThat(b.callsInWindow()).as("counted as made in the previous slot: gone a slot early").isZero();
        assertThat(b.tryAcquireRetry()).as("never more than the budget").isFalse();
    }

    @Test
    void aTickTwoSlotsBehindIsDroppedByTheNextDecision() {
        RetryBudget b = budget(0.5, 0, Duration.ofSeconds(10));
        b.tick();
        now.addAndGet(600 * MS); // one slot behind: kept (a late tick)
        assertThat(b.tryAcquireRetry()).isFalse();
        assertThat(b.isTicking()).isTrue();
        now.addAndGet(500 * MS); // two slots behind: the timer has stopped or stalls
        assertThat(b.tryAcquireRetry()).isFalse();
        assertThat(b.isTicking()).isFalse();
        long before = reads.get();
        b.onCall();
        b.onCall();
        assertThat(reads.get() - before).as("deposits read the clock again").isEqualTo(2);
        assertThat(acquireAll(b)).isEqualTo(1);
        b.tick(); // a late timer that comes back publishes again
        assertThat(b.isTicking()).isTrue();
        b.stopTicking();
        assertThat(b.isTicking()).isFalse();
    }

    @Test
    void updatesARingOldAreDroppedAndOlderSlotsNeverCounted() {
        RetryBudget b = budget(0.5, 0, Duration.ofSeconds(10)); // ring of 32 slots of 500 ms
        long t0 = now.get();
        now.set(t0 + RetryBudget.RING * 500 * MS); // the same ring index as t0, 32 slots later
        for (int i = 0; i < 4; i++) {
            b.onCall();
        }
        now.set(t0); // a thread descheduled for a whole ring comes back
        b.onCall();
        assertThat(b.tryAcquireRetry()).as("a reservation for a past ring is refused, not written").isFalse();
        now.set(t0 + RetryBudget.RING * 500 * MS);
        assertThat(b.callsInWindow()).as("the newer slot kept its count").isEqualTo(4);
        assertThat(b.retriesInWindow()).isZero();
        assertThat(acquireAll(b)).isEqualTo(2);

        // a deposit for a slot 20 slots back (outside the window, inside the ring) is written to its own
        // slot, never counted, and overwritten when the ring comes round
        long t57 = t0 + (RetryBudget.RING + 25) * 500 * MS;
        now.set(t57);
        b.onCall();
        now.set(t57 - 20 * 500 * MS); // a thread descheduled for 20 slots
        b.onCall();
        now.set(t57);
        assertThat(b.callsInWindow()).isEqualTo(1);
        now.set(t57 - 20 * 500 * MS + RetryBudget.RING * 500 * MS); // that slot's index, one ring later
        b.onCall();
        // the window (12 slots after t57) holds the deposit of t57 and the new one; the reused slot
        // was reset, not added to
        assertThat(b.callsInWindow()).as("the reused slot counts only its new epoch").isEqualTo(2);
    }

    /**
     * A seeded run of calls and retries with ticks that come late, come early in the slot, or stop for
     * a while: at every admission the retries of the exact window (the current slot and the 19 before
     * it, by the test's own clock) are at most 10 % of that window's calls, and the ticked budget
     * admits nearly as many retries as a twin that reads the clock for every deposit.
     */
    @Test
    void lateAndMissingTicksNeverLetRetriesPastTheBudget() {
        Random random = new Random(42);
        long slot = 50 * MS; // ttl 1 s
        RetryBudget ticked = budget(0.1, 0, Duration.ofSeconds(1));
        RetryBudget exact = new RetryBudget(new RetryBudgetPolicy(0.1, 0, Duration.ofSeconds(1)), now::get);
        long start = now.get();
        ticked.tick();
        long nextTick = start + slot;
        List<Long> callTimes = new ArrayList<>();
        List<Long> admitted = new ArrayList<>();
        int exactAdmitted = 0;
        for (int step = 0; step < 20_000; step++) {
            long t = now.get();
            if (t >= nextTick) {
                int kind = random.nextInt(10);
                if (kind < 6) {
                    ticked.tick(); // on time or a little late
                    nextTick = start + ((t - start) / slot + 1) * slot + random.nextInt(20) * MS;
                } else if (kind < 9) {
                    nextTick = t + random.nextInt(40) * MS; // late by up to most of a slot
                } else {
                    nextTick = t + (2 + random.nextInt(6)) * slot; // stalls for several slots
                }
            }
            if (random.nextInt(3) > 0) {
                ticked.onCall();
                exact.onCall();
                callTimes.add(t);
            }
            int wants = random.nextInt(4) == 0 ? 3 : 0;
            for (int k = 0; k < wants; k++) {
                if (ticked.tryAcquireRetry()) {
                    admitted.add(t);
                    long windowStart = Math.floorDiv(t - start, slot) * slot + start - 19 * slot;
                    long retries = admitted.stream().filter(r -> r >= windowStart).count();
                    long calls = callTimes.stream().filter(c -> c >= windowStart && c <= t).count();
                    assertThat(retries * 10).as("retries x 10 in the window at %d ms", (t - start) / MS)
                            .isLessThanOrEqualTo(calls);
                }
                if (exact.tryAcquireRetry()) {
                    exactAdmitted++;
                }
            }
            now.addAndGet(MS / 4 + random.nextInt((int) MS));
        }
        System.out.println("retries admitted: ticked " + admitted.size() + ", exact " + exactAdmitted);
        assertThat(exactAdmitted).isGreaterThan(500);
        assertThat(admitted.size()).as("retries admitted, ticked vs exact " + exactAdmitted)
                .isBetween((int) (exactAdmitted * 0.9), exactAdmitted);
    }

    /**
     * A real scheduler ticks the budget: the test waits for the ticks themselves (readings of the
     * budget's clock on the scheduler's timer thread), not for a span of wall-clock time. Each tick
     * schedules the next at the following slot boundary and a timer never fires early, so the ticks lie
     * in strictly increasing slots however late they come; a second driver would tick the same slots
     * again (and read the clock on its own timer thread).
     */
    @Test
    void aSchedulerDrivesTheClockAtSlotBoundariesUntilItCloses() throws Exception {
        long slot = 100 * MS; // ttl 2 s: the deposits below stay in the window through a long pause
        List<Long> readings = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Long> ticks = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicLong otherDriverReads = new AtomicLong();
        java.util.concurrent.CountDownLatch fourTicks = new java.util.concurrent.CountDownLatch(4);
        RetryBudget b = new RetryBudget(new RetryBudgetPolicy(0.5, 0, Duration.ofSeconds(2)), () -> {
            long t = System.nanoTime();
            readings.add(t);
            String thread = Thread.currentThread().getName();
            if (thread.startsWith("budget-clock-timer-")) {
                ticks.add(t);
                fourTicks.countDown();
            } else if (thread.startsWith("budget-clock-2-")) {
                otherDriverReads.incrementAndGet();
            }
            return t;
        });
        long origin = readings.get(0); // the budget reads its origin once, at construction
        assertThat(b.slotNanos()).isEqualTo(slot);
        RetryScheduler scheduler = RetryScheduler.create(1, "budget-clock");
        RetryScheduler other = RetryScheduler.create(1, "budget-clock-2");
        try {
            scheduler.driveBudgetClock(b); // the first tick runs on this thread, the next on the timer
            other.driveBudgetClock(b); // one driver per budget: a no-op
            assertThat(b.isTicking()).isTrue();
            assertThat(fourTicks.await(30, TimeUnit.SECONDS)).as("four ticks of the scheduler's timer").isTrue();
            List<Long> slots = ticks.stream().map(t -> Math.floorDiv(t - origin, slot)).toList();
            for (int i = 1; i < slots.size(); i++) {
                assertThat(slots.get(i)).as("tick %d of %s: one tick per slot boundary", i, slots)
                        .isGreaterThan(slots.get(i - 1));
            }
            assertThat(otherDriverReads.get()).as("clock readings by the second scheduler").isZero();

            for (int i = 0; i < 100; i++) {
                b.onCall();
            }
            assertThat(b.callsInWindow()).isEqualTo(100);
            assertThat(acquireAll(b)).isEqualTo(50);
            scheduler.close();
            // a tick in flight when close() ran stops itself when it sees the scheduler closed: wait for
            // the timer thread to end (an event), then no tick can publish again
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("budget-clock-timer-")) {
                    t.join(TimeUnit.SECONDS.toMillis(30));
                    assertThat(t.isAlive()).as("the closed scheduler's timer thread %s", t.getName()).isFalse();
                }
            }
            assertThat(b.isTicking()).as("a closed scheduler's budgets read the clock again").isFalse();
            int afterClose = readings.size();
            b.onCall();
            assertThat(readings.size() - afterClose).isEqualTo(1);
            assertThat(otherDriverReads.get()).as("clock readings by the second scheduler").isZero();
        } finally {
            scheduler.close();
            other.close();
        }
    }

    @Test
    void aClockEndsWhenCancelledOrWhenItsTimersRejectATick() {
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1);
        try {
            RetryBudget b = budget(0.1, 0, Duration.ofSeconds(10));
            CompletableFuture<Void> clock = b.driveClock(timers);
            assertThat(clock).as("the first driver").isNotNull();
            assertThat(b.isTicking()).as("the first tick runs on the calling thread").isTrue();
            assertThat(b.driveClock(timers)).as("one driver per budget").isNull();
            assertThat(timers.getQueue()).as("the next tick is scheduled").hasSize(1);
            clock.cancel(false);
            assertThat(b.isTicking()).as("a cancelled clock's budget reads the clock again").isFalse();
            // the tick scheduled before the cancel is still queued: run it now
            Runnable queued = timers.getQueue().iterator().next();
            assertThat(timers.remove(queued)).isTrue();
            queued.run();
            assertThat(b.isTicking()).as("a tick after the cancel does not publish").isFalse();

            RetryBudget c = budget(0.1, 0, Duration.ofSeconds(10));
            timers.shutdownNow();
            CompletableFuture<Void> rejected = c.driveClock(timers);
            assertThat(rejected).as("the timers rejected the next tick").isDone();
            assertThat(c.isTicking()).isFalse();
        } finally {
            timers.shutdownNow();
        }
    }

    @Test
    void closedSlotSumsDecideAsAFullWindowSumDoes() {
        // two budgets on one clock: one ticked at every slot boundary (decisions read the tick's sum of
        // the closed slots and the current slot), one never ticked (decisions sum all 20 slots)
        RetryBudget ticked = budget(0.2, 1, Duration.ofSeconds(2));
        RetryBudget summing = budget(0.2, 1, Duration.ofSeconds(2));
        long slot = ticked.slotNanos();
        ticked.tick();
        Random random = new Random(42);
        int granted = 0;
        int refused = 0;
        for (int step = 0; step < 200_000; step++) {
            long before = Math.floorDiv(now.get(), slot);
            now.addAndGet(random.nextInt((int) (slot / 50)));
            if (Math.floorDiv(now.get(), slot) != before) {
                ticked.tick(); // at the boundary, as the scheduler's timer does
            }
            if (random.nextInt(4) == 0) {
                boolean a = ticked.tryAcquireRetry();
                boolean b = summing.tryAcquireRetry();
                assertThat(a).as("decision at step %d", step).isEqualTo(b);
                if (a) {
                    granted++;
                } else {
                    refused++;
                }
            } else {
                ticked.onCall();
                summing.onCall();
            }
        }
        assertThat(ticked.balance()).isEqualTo(summing.balance());
        assertThat(granted).as("granted").isGreaterThan(1_000);
        assertThat(refused).as("refused").isGreaterThan(1_000);
    }
}
