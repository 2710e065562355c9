package io.github.grpcretry.policy;

import io.grpc.Status;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * gRFC A6 {@code retryPolicy}, already validated.
 *
 * @param maxAttempts attempts in all, the first included (before the channel cap is applied)
 * @param perAttemptReceiveTimeout optional: absent = none
 */
public record RetryPolicy(
        int maxAttempts,
        Duration initialBackoff,
        Duration maxBackoff,
        double backoffMultiplier,
        Set<Status.Code> retryableStatusCodes,
        @Nullable Duration perAttemptReceiveTimeout) {

    public RetryPolicy {
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        retryableStatusCodes = retryableStatusCodes.isEmpty()
                ? Collections.emptySet()
                : Collections.unmodifiableSet(EnumSet.copyOf(retryableStatusCodes));
    }

    public boolean isRetryable(Status.Code code) {
        return retryableStatusCodes.contains(code);
    }

    /** This policy with max attempts limited to {@code cap}. */
    public RetryPolicy capped(int cap) {
        if (maxAttempts <= cap) {
            return this;
        }
        return new RetryPolicy(cap, initialBackoff, maxBackoff, backoffMultiplier, retryableStatusCodes,
                perAttemptReceiveTimeout);
    }
}
