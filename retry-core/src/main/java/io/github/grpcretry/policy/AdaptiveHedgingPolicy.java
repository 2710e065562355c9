package io.github.grpcretry.policy;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A channel's adaptive hedging delay ({@code grpc.retry.clients.<channel>.adaptive-hedging.*}): each hedged
 * method's delay is the {@code 1 - maxExtraLoad} quantile of its recent call latency over {@code window},
 * bounded by {@code minDelay} and {@code maxDelay}; until {@code minSamples} calls were seen the method's
 * configured {@code hedging.delay} applies. Hedges stay limited by the throttle, the budget and by
 * {@code maxExtraLoad} itself (hedges as a share of the method's calls over the window).
 *
 * @param maxDelay absent = no upper bound
 */
public record AdaptiveHedgingPolicy(double maxExtraLoad, Duration minDelay, @Nullable Duration maxDelay, int minSamples,
        Duration window) {

    public static final double DEFAULT_MAX_EXTRA_LOAD = 0.05;
    public static final Duration DEFAULT_MIN_DELAY = Duration.ofMillis(1);
    public static final int DEFAULT_MIN_SAMPLES = 100;
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(30);

    public AdaptiveHedgingPolicy {
        Objects.requireNonNull(minDelay, "minDelay");
        Objects.requireNonNull(window, "window");
        if (!(maxExtraLoad > 0) || maxExtraLoad > 0.5 || minDelay.isNegative() || minSamples < 1
                || window.isNegative() || window.isZero() || (maxDelay != null && maxDelay.compareTo(minDelay) < 0)) {
            throw new IllegalArgumentException("invalid adaptive hedging " + maxExtraLoad + ", " + minDelay + ", "
                    + maxDelay + ", " + minSamples + ", " + window);
        }
    }

    /** The defaults: 5 % extra load, at least 1ms, no upper bound, 100 samples, a 30s window. */
    public static AdaptiveHedgingPolicy defaults() {
        return new AdaptiveHedgingPolicy(DEFAULT_MAX_EXTRA_LOAD, DEFAULT_MIN_DELAY, null, DEFAULT_MIN_SAMPLES,
                DEFAULT_WINDOW);
    }
}
