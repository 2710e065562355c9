package io.github.grpcretry.internal.config;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A {@code retryPolicy} as configured, not yet validated: every field may be missing.
 *
 * @param path the path of the policy object ({@code ...method[0].retry} or {@code ... $.methodConfig[0].retryPolicy})
 */
public record RetryPolicyDraft(
        String path,
        ConfigNaming naming,
        @Nullable Sourced<Integer> maxAttempts,
        @Nullable Sourced<Duration> initialBackoff,
        @Nullable Sourced<Duration> maxBackoff,
        @Nullable Sourced<Double> backoffMultiplier,
        @Nullable Sourced<List<String>> retryableStatusCodes,
        @Nullable Sourced<Duration> perAttemptReceiveTimeout) {

    /** Whether no field is set. */
    public boolean isEmpty() {
        return maxAttempts == null && initialBackoff == null && maxBackoff == null && backoffMultiplier == null
                && retryableStatusCodes == null && perAttemptReceiveTimeout == null;
    }

    /** This draft's fields where set, {@code under}'s elsewhere; this draft's path and naming. */
    public RetryPolicyDraft overlay(RetryPolicyDraft under) {
        if (under == null) {
            return this;
        }
        return new RetryPolicyDraft(path, naming,
                Sourced.firstSet(maxAttempts, under.maxAttempts),
                Sourced.firstSet(initialBackoff, under.initialBackoff),
                Sourced.firstSet(maxBackoff, under.maxBackoff),
                Sourced.firstSet(backoffMultiplier, under.backoffMultiplier),
                Sourced.firstSet(retryableStatusCodes, under.retryableStatusCodes),
                Sourced.firstSet(perAttemptReceiveTimeout, under.perAttemptReceiveTimeout));
    }

    String field(String jsonName) {
        return naming.child(path, jsonName);
    }
}
