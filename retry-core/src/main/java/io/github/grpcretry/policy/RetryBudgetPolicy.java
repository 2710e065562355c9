package io.github.grpcretry.policy;

import java.time.Duration;
import java.util.Objects;

/**
 * A retry budget (beyond A6, in the manner of Finagle and Linkerd): over a sliding window of
 * {@code ttl}, retries and hedges may not exceed {@code ratio} × calls + {@code minRetriesPerSecond} × ttl.
 */
public record RetryBudgetPolicy(double ratio, double minRetriesPerSecond, Duration ttl) {

    public static final double DEFAULT_MIN_RETRIES_PER_SECOND = 10;
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(10);

    public RetryBudgetPolicy {
        Objects.requireNonNull(ttl, "ttl");
        if (!(ratio >= 0) || !(minRetriesPerSecond >= 0) || ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("invalid retry budget " + ratio + ", " + minRetriesPerSecond + ", " + ttl);
        }
    }
}
