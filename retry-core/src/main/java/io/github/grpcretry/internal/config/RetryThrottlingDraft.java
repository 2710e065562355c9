package io.github.grpcretry.internal.config;

import org.jspecify.annotations.Nullable;

/** A {@code retryThrottling} as configured, not yet validated. */
public record RetryThrottlingDraft(String path, ConfigNaming naming, @Nullable Sourced<Double> maxTokens, @Nullable Sourced<Double> tokenRatio) {

    public boolean isEmpty() {
        return maxTokens == null && tokenRatio == null;
    }

    /** This draft's fields where set, {@code under}'s elsewhere. */
    public RetryThrottlingDraft overlay(@Nullable RetryThrottlingDraft under) {
        if (under == null || under.isEmpty()) {
            return this;
        }
        if (isEmpty()) {
            return under;
        }
        return new RetryThrottlingDraft(path, naming, Sourced.firstSet(maxTokens, under.maxTokens),
                Sourced.firstSet(tokenRatio, under.tokenRatio));
    }

    String field(String jsonName) {
        return naming.child(path, jsonName);
    }
}
