package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The adaptive hedging delay of a method on a controllable ticker: the configured delay until min-samples calls
 * are in the window, then the (1 - max-extra-load) quantile of the call latencies within the bounds, refreshed
 * every tenth of the window; hedges capped at max-extra-load of the calls; each method on its own; the state kept
 * across a refresh of the configuration when the adaptive settings are equal.
 */
class AdaptiveDelayTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long CONFIGURED = 40 * MS;
    /** 5 %, 1 ms .. unbounded, 100 samples, a 10 s window (refreshed every second). */
    private static final AdaptiveHedgingPolicy POLICY = new AdaptiveHedgingPolicy(0.05, Duration.ofMillis(1), null, 100,
            Duration.ofSeconds(10));

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AdaptiveHedgingRegistry registry = new AdaptiveHedgingRegistry(now::get);

    private AdaptiveDelay method(AdaptiveHedgingPolicy policy, String name) {
        return registry.channel("inventory", policy).method("shop.Inventory/" + name);
    }

    /** {@code n} calls of {@code latencyMs} each. */
    private static void calls(AdaptiveDelay d, int n, long latencyMs) {
        for (int i = 0; i < n; i++) {
            d.onCall();
            d.record(latencyMs * MS);
        }
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    @Test
    void theConfiguredDelayAppliesUntilMinSamplesCallsAreInTheWindow() {
        AdaptiveDelay d = method(POLICY, "Reserve");
        calls(d, 99, 200);
        advance(Duration.ofSeconds(1));
        assertThat(d.delayNanos(CONFIGURED)).as("99 of 100").isEqualTo(CONFIGURED);
        assertThat(d.adapted()).isFalse();
        assertThat(d.delay()).isEqualTo(Duration.ofNanos(CONFIGURED));

        calls(d, 1, 200);
        assertThat(d.delayNanos(CONFIGURED)).as("not before the next refresh").isEqualTo(CONFIGURED);
        advance(Duration.ofSeconds(1));
        assertThat(d.delayNanos(CONFIGURED)).as("200 ms within a bucket's 6.25 %").isBetween(200 * MS, 213 * MS);
        assertThat(d.adapted()).isTrue();
    }

    @Test
    void theDelayIsTheQuantileOfOneMinusTheExtraLoad() {
        AdaptiveDelay d = method(POLICY, "Reserve");
        SplittableRandom random = new SplittableRandom(42);
        int[] shuffled = random.ints(1, 1001).limit(20_000).toArray(); // uniform 1..1000 ms
        for (int ms : shuffled) {
            d.onCall();
            d.record(ms * MS);
        }
        advance(Duration.ofSeconds(1));
        long p95 = d.delayNanos(CONFIGURED);
        assertThat(p95).as("the 95th percentile of 1..1000 ms").isBetween(930 * MS, 1010 * MS);

        AdaptiveDelay tighter = method(new AdaptiveHedgingPolicy(0.2, Duration.ofMillis(1), null, 100,
                Duration.ofSeconds(10)), "Reserve");
        for (int ms : shuffled) {
            tighter.record(ms * MS);
        }
        advance(Duration.ofSeconds(1));
        assertThat(tighter.delayNanos(CONFIGURED)).as("the 80th").isBetween(780 * MS, 850 * MS);
    }

    @Test
    void theDelayStaysWithinMinAndMaxDelay() {
        AdaptiveHedgingPolicy bounded = new AdaptiveHedgingPolicy(0.05, Duration.ofMillis(20), Duration.ofMillis(300),
                10, Duration.ofSeconds(10));
        AdaptiveDelay fast = method(bounded, "Fast");
        AdaptiveDelay slow = method(bounded, "Slow");
        calls(fast, 100, 2);
        calls(slow, 100, 900);
        advance(Duration.ofSeconds(1));
        assertThat(fast.delayNanos(CONFIGURED)).isEqualTo(20 * MS);
        assertThat(slow.delayNanos(CONFIGURED)).isEqualTo(300 * MS);
    }

    @Test
    void eachMethodFollowsItsOwnLatency() {
        AdaptiveDelay reserve = method(POLICY, "Reserve");
        AdaptiveDelay release = method(POLICY, "Release");
        calls(reserve, 200, 10);
        calls(release, 200, 100);
        calls(release, 20, 1); // a method seen less than min-samples times keeps the configured delay
        AdaptiveDelay rare = method(POLICY, "Rare");
        calls(rare, 50, 5_000);
        advance(Duration.ofSeconds(1));
        assertThat(reserve.delayNanos(CONFIGURED)).isBetween(10 * MS, 11 * MS);
        assertThat(release.delayNanos(CONFIGURED)).isBetween(100 * MS, 107 * MS);
        assertThat(rare.delayNanos(CONFIGURED)).isEqualTo(CONFIGURED);
        assertThat(registry.delays("inventory")).extracting(AdaptiveHedgingRegistry.MethodDelay::fullMethodName)
                .containsExactlyInAnyOrder("shop.Inventory/Reserve", "shop.Inventory/Release", "shop.Inventory/Rare");
    }

    @Test
    void theWindowSlidesAndOldLatenciesLeaveIt() {
        AdaptiveDelay d = method(POLICY, "Reserve");
        calls(d, 200, 50);
        advance(Duration.ofSeconds(1));
        assertThat(d.delayNanos(CONFIGURED)).isBetween(50 * MS, 54 * MS);
        for (int second = 0; second < 12; second++) { // the latency quadruples; the old samples age out
            calls(d, 200, 200);
            advance(Duration.ofSeconds(1));
        }
        assertThat(d.delayNanos(CONFIGURED)).isBetween(200 * MS, 213 * MS);
        assertThat(d.windowSamples()).as("nine full intervals of 200").isEqualTo(1_800);

        advance(Duration.ofSeconds(30)); // idle past the whole window
        assertThat(d.delayNanos(CONFIGURED)).as("nothing left: the configured delay again").isEqualTo(CONFIGURED);
    }

    @Test
    void hedgesStayWithinTheExtraLoadOfTheCallsInTheWindow() {
        AdaptiveDelay d = method(POLICY, "Reserve");
        assertThat(d.tryAcquireHedge()).as("no call yet: no hedge").isFalse();
        calls(d, 19, 5);
        assertThat(d.tryAcquireHedge()).as("19 calls × 5 % < 1").isFalse();
        calls(d, 1, 5);
        assertThat(d.tryAcquireHedge()).as("20 calls: one hedge").isTrue();
        assertThat(d.tryAcquireHedge()).isFalse();

        calls(d, 180, 5); // 200 calls: 10 hedges in all
        int granted = 1;
        while (d.tryAcquireHedge()) {
            granted++;
        }
        assertThat(granted).isEqualTo(10);
        advance(Duration.ofSeconds(1));
        assertThat(d.tryAcquireHedge()).as("the hedges stay counted in the window").isFalse();
        assertThat(d.windowCalls()).isEqualTo(200);
        assertThat(d.windowHedges()).isEqualTo(10);

        advance(Duration.ofSeconds(10)); // the window moved past them
        calls(d, 20, 5);
        assertThat(d.tryAcquireHedge()).isTrue();
        assertThat(d.windowHedges()).isEqualTo(1);
    }

    @Test
    void equalSettingsKeepTheStateAndChangedSettingsStartAfresh() {
        AdaptiveDelay d = method(POLICY, "Reserve");
        calls(d, 200, 50);
        advance(Duration.ofSeconds(1));
        assertThat(registry.keeps("inventory", POLICY)).isTrue();
        AdaptiveHedgingPolicy equal = new AdaptiveHedgingPolicy(0.05, Duration.ofMillis(1), null, 100,
                Duration.ofSeconds(10));
        assertThat(method(equal, "Reserve")).isSameAs(d);

        AdaptiveHedgingPolicy changed = new AdaptiveHedgingPolicy(0.1, Duration.ofMillis(1), null, 100,
                Duration.ofSeconds(10));
        assertThat(registry.keeps("inventory", changed)).isFalse();
        AdaptiveDelay fresh = method(changed, "Reserve");
        assertThat(fresh).isNotSameAs(d);
        assertThat(fresh.delayNanos(CONFIGURED)).isEqualTo(CONFIGURED);
    }

    @Test
    void bucketsHoldEveryLatencyWithinTheirResolution() {
        for (long micros : new long[] {0, 1, 15, 16, 17, 31, 32, 1_000, 50_000, 123_456, 4_000_000_000L}) {
            int b = AdaptiveDelay.bucket(micros * 1_000);
            long upper = AdaptiveDelay.upperEdgeMicros(b);
            assertThat(upper).as(micros + " µs").isGreaterThan(micros).isLessThanOrEqualTo(Math.max(micros + 1,
                    (long) (micros * 1.0625) + 1));
            if (b > 0) {
                assertThat(AdaptiveDelay.upperEdgeMicros(b - 1)).as(micros + " µs: the bucket below").isLessThanOrEqualTo(micros);
            }
        }
        assertThat(AdaptiveDelay.bucket(Long.MAX_VALUE)).isEqualTo(AdaptiveDelay.BUCKETS - 1);
    }
}
