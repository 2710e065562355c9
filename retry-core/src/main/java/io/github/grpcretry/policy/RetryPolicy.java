package io.github.grpcretry.policy;

import io.github.grpcretry.internal.time.Durations;
import io.grpc.Status;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * gRFC A6 {@code retryPolicy}. The record checks its own invariants, whoever builds it (the
 * configuration, a {@link ServiceConfigCustomizer}, a per-call policy): at least one attempt, positive
 * backoffs, a multiplier that is not negative or zero, a non-empty set of retryable codes without OK, a positive per-attempt
 * timeout when there is one; it throws {@link IllegalArgumentException} otherwise. The configuration
 * rules on top of these (at least 2 attempts as configured, a finite multiplier, durations of at most
 * 2<sup>63</sup>-1 nanoseconds, about 292 years)
 * are checked where the values are read, and reported with their property or JSON path
 * (docs/design.md §13).
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
        Objects.requireNonNull(retryableStatusCodes, "retryableStatusCodes");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        }
        if (initialBackoff.isNegative() || initialBackoff.isZero()) {
            throw new IllegalArgumentException("initialBackoff must be > 0, was " + Durations.toJson(initialBackoff));
        }
        if (maxBackoff.isNegative() || maxBackoff.isZero()) {
            throw new IllegalArgumentException("maxBackoff must be > 0, was " + Durations.toJson(maxBackoff));
        }
        if (backoffMultiplier <= 0) {
            // NaN passes here (the engine then waits max-backoff); the configuration rejects it with its path
            throw new IllegalArgumentException("backoffMultiplier must be > 0, was " + backoffMultiplier);
        }
        if (retryableStatusCodes.isEmpty() || retryableStatusCodes.contains(Status.Code.OK)) {
            throw new IllegalArgumentException("retryableStatusCodes must be non-empty and must not contain OK, was "
                    + retryableStatusCodes);
        }
        if (perAttemptReceiveTimeout != null && (perAttemptReceiveTimeout.isNegative() || perAttemptReceiveTimeout.isZero())) {
            throw new IllegalArgumentException("perAttemptReceiveTimeout must be > 0, was "
                    + Durations.toJson(perAttemptReceiveTimeout));
        }
        retryableStatusCodes = retryableStatusCodes.isEmpty()
                ? Collections.emptySet()
                : Collections.unmodifiableSet(EnumSet.copyOf(retryableStatusCodes));
    }

    public boolean isRetryable(Status.Code code) {
        return retryableStatusCodes.contains(code);
    }

    /**
     * This policy as the {@code retryPolicy} object of the JSON-shaped map grpc-java's
     * {@code ManagedChannelBuilder.defaultServiceConfig} takes (numbers as {@link Double}, durations as
     * {@code "1.5s"} strings, codes by name); an optional field that is not set is left out.
     */
    public Map<String, Object> toServiceConfigMap() {
        Map<String, Object> rp = new LinkedHashMap<>();
        rp.put("maxAttempts", (double) maxAttempts);
        rp.put("initialBackoff", Durations.toJson(initialBackoff));
        rp.put("maxBackoff", Durations.toJson(maxBackoff));
        rp.put("backoffMultiplier", backoffMultiplier);
        rp.put("retryableStatusCodes", ServiceConfig.codeNames(retryableStatusCodes));
        if (perAttemptReceiveTimeout != null) {
            rp.put("perAttemptRecvTimeout", Durations.toJson(perAttemptReceiveTimeout));
        }
        return rp;
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
