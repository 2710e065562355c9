package io.github.grpcretry.policy;

import io.github.grpcretry.internal.time.Durations;
import io.grpc.Status;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * gRFC A6 {@code hedgingPolicy}. The record checks its own invariants (at least one attempt, a delay
 * &ge; 0, no OK among the non-fatal codes) and throws {@link IllegalArgumentException} otherwise; the
 * configuration rules on top (at least 2 attempts as configured, a delay of at most 2<sup>63</sup>-1 nanoseconds, about 292 years)
 * are reported with their path where the values are read (docs/design.md §13).
 */
public record HedgingPolicy(int maxAttempts, Duration hedgingDelay, Set<Status.Code> nonFatalStatusCodes) {

    public HedgingPolicy {
        Objects.requireNonNull(hedgingDelay, "hedgingDelay");
        Objects.requireNonNull(nonFatalStatusCodes, "nonFatalStatusCodes");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        }
        if (hedgingDelay.isNegative()) {
            throw new IllegalArgumentException("hedgingDelay must be >= 0, was " + Durations.toJson(hedgingDelay));
        }
        if (nonFatalStatusCodes.contains(Status.Code.OK)) {
            throw new IllegalArgumentException("OK is never a failure, so it cannot be a non-fatal status code");
        }
        nonFatalStatusCodes = nonFatalStatusCodes.isEmpty()
                ? Collections.emptySet()
                : Collections.unmodifiableSet(EnumSet.copyOf(nonFatalStatusCodes));
    }

    public boolean isNonFatal(Status.Code code) {
        return nonFatalStatusCodes.contains(code);
    }

    public HedgingPolicy capped(int cap) {
        return maxAttempts <= cap ? this : new HedgingPolicy(cap, hedgingDelay, nonFatalStatusCodes);
    }
}
