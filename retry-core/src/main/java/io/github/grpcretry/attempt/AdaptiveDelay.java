package io.github.grpcretry.attempt;

import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * The adaptive hedging delay of one method of one channel (docs/design.md, "Adaptive hedging delay"): the
 * {@code 1 - max-extra-load} quantile of the method's recent call latency, and the cap on hedges as a share of
 * its calls. The window is a ring of {@value #SLOTS} intervals of {@code window / }{@value #SLOTS}, each a
 * histogram with fixed buckets (16 per power of two of microseconds: at most 6.25 % above the true value) and
 * two counters (calls, hedges). Recording is an atomic increment into the current interval; the first thread
 * that sees an interval end (a compare-and-set) moves the ring on, clears the interval that leaves the window
 * and takes the quantile of the others: no lock on any path.
 */
final class AdaptiveDelay implements AdaptiveHedgingRegistry.MethodDelay {

    static final int SLOTS = 10;
    private static final int SUB = 16;
    /** Microseconds up to 2^32 (about 71 minutes); longer latencies count in the last bucket. */
    static final int BUCKETS = SUB + (32 - 4) * SUB;

    private static final VarHandle NEXT_REFRESH;

    static {
        try {
            NEXT_REFRESH = MethodHandles.lookup().findVarHandle(AdaptiveDelay.class, "nextRefresh", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String channel;
    private final String method;
    private final AdaptiveHedgingPolicy policy;
    private final LongSupplier ticker;
    private final long intervalNanos;
    private final long minNanos;
    private final long maxNanos;
    private final Slot[] slots = new Slot[SLOTS];

    private volatile int current;
    private volatile long nextRefresh;
    /** The last refresh's results: the delay (-1: fewer samples than min-samples), and the window without the current interval. */
    private volatile long adaptedNanos = -1;
    private volatile long olderCalls;
    private volatile long olderHedges;
    private volatile long windowSamples;
    /** The configured delay the engine gave last (what applies until the delay adapts). */
    private volatile long fixedNanos;

    private static final class Slot {
        final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
        final AtomicLong calls = new AtomicLong();
        final AtomicLong hedges = new AtomicLong();

        void clear() {
            for (int i = 0; i < BUCKETS; i++) {
                counts.set(i, 0);
            }
            calls.set(0);
            hedges.set(0);
        }
    }

    AdaptiveDelay(String channel, String method, AdaptiveHedgingPolicy policy, LongSupplier ticker) {
        this.channel = channel;
        this.method = method;
        this.policy = policy;
        this.ticker = ticker;
        this.intervalNanos = Math.max(1, Nanos.saturated(policy.window()) / SLOTS);
        this.minNanos = Nanos.saturated(policy.minDelay());
        this.maxNanos = policy.maxDelay() == null ? Long.MAX_VALUE : Nanos.saturated(policy.maxDelay());
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = new Slot();
        }
        this.nextRefresh = ticker.getAsLong() + intervalNanos;
    }

    long now() {
        return ticker.getAsLong();
    }

    /** The hedging delay now: the adapted one, or {@code configuredNanos} until the window holds min-samples calls. */
    long delayNanos(long configuredNanos) {
        fixedNanos = configuredNanos;
        refreshIfDue(ticker.getAsLong());
        long a = adaptedNanos;
        return a < 0 ? configuredNanos : a;
    }

    /** A call starts (it counts toward the share hedges may take). */
    void onCall() {
        refreshIfDue(ticker.getAsLong());
        slots[current].calls.incrementAndGet();
    }

    /** A call ended after {@code latencyNanos}, as its caller waited (a cancelled call: until the cancel). */
    void record(long latencyNanos) {
        refreshIfDue(ticker.getAsLong());
        slots[current].counts.incrementAndGet(bucket(latencyNanos));
    }

    /** Takes one hedge if hedges stay within max-extra-load of the calls in the window; false: none may go. */
    boolean tryAcquireHedge() {
        Slot s = slots[current];
        while (true) {
            long h = s.hedges.get();
            double allowed = policy.maxExtraLoad() * (olderCalls + s.calls.get());
            if (olderHedges + h + 1 > allowed) {
                return false;
            }
            if (s.hedges.compareAndSet(h, h + 1)) {
                return true;
            }
        }
    }

    private void refreshIfDue(long now) {
        long next = nextRefresh;
        if (now - next < 0 || !NEXT_REFRESH.compareAndSet(this, next, now + intervalNanos)) {
            return;
        }
        long ended = 1 + (now - next) / intervalNanos; // intervals that ended since the last refresh
        int cur = current;
        for (long i = 0; i < Math.min(SLOTS, ended); i++) {
            cur = (cur + 1) % SLOTS;
            slots[cur].clear();
        }
        current = cur;
        long[] sum = new long[BUCKETS];
        long total = 0;
        long calls = 0;
        long hedges = 0;
        for (int i = 0; i < SLOTS; i++) {
            if (i == cur) {
                continue;
            }
            Slot s = slots[i];
            calls += s.calls.get();
            hedges += s.hedges.get();
            for (int b = 0; b < BUCKETS; b++) {
                long c = s.counts.get(b);
                sum[b] += c;
                total += c;
            }
        }
        olderCalls = calls;
        olderHedges = hedges;
        windowSamples = total;
        adaptedNanos = total < policy.minSamples() ? -1
                : Math.min(maxNanos, Math.max(minNanos, quantileNanos(sum, total, 1 - policy.maxExtraLoad())));
    }

    /** The upper edge of the bucket that holds the {@code q} quantile of {@code total} samples. */
    static long quantileNanos(long[] counts, long total, double q) {
        long rank = Math.max(1, (long) Math.ceil(q * total));
        long seen = 0;
        for (int b = 0; b < counts.length; b++) {
            seen += counts[b];
            if (seen >= rank) {
                return upperEdgeMicros(b) * 1_000L;
            }
        }
        return upperEdgeMicros(counts.length - 1) * 1_000L;
    }

    /** The bucket of a latency: microseconds below 16 one each, then 16 buckets per power of two. */
    static int bucket(long nanos) {
        long micros = Math.max(0, nanos / 1_000L);
        if (micros < SUB) {
            return (int) micros;
        }
        int e = 63 - Long.numberOfLeadingZeros(micros);
        int b = SUB + (e - 4) * SUB + (int) ((micros >> (e - 4)) & (SUB - 1));
        return Math.min(b, BUCKETS - 1);
    }

    /** The exclusive upper edge of bucket {@code b}, in microseconds. */
    static long upperEdgeMicros(int b) {
        if (b < SUB) {
            return b + 1;
        }
        int e = (b - SUB) / SUB + 4;
        int sub = (b - SUB) % SUB;
        return (long) (SUB + sub + 1) << (e - 4);
    }

    @Override
    public String channel() {
        return channel;
    }

    @Override
    public String fullMethodName() {
        return method;
    }

    @Override
    public Duration delay() {
        long a = adaptedNanos;
        return Duration.ofNanos(a < 0 ? fixedNanos : a);
    }

    @Override
    public boolean adapted() {
        return adaptedNanos >= 0;
    }

    @Override
    public long windowCalls() {
        return olderCalls + slots[current].calls.get();
    }

    @Override
    public long windowHedges() {
        return olderHedges + slots[current].hedges.get();
    }

    @Override
    public long windowSamples() {
        return windowSamples;
    }

    @Override
    public String toString() {
        return "AdaptiveDelay[" + channel + " " + method + " " + delay() + (adapted() ? "" : " (configured)") + "]";
    }
}
