package io.github.grpcretry.policy;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One {@code methodConfig} entry. Every field but {@code names} is optional ({@code @Nullable}: absent when not set).
 * At most one of {@code retryPolicy} and {@code hedgingPolicy} is set.
 */
public record MethodConfig(
        List<MethodName> names,
        @Nullable Boolean waitForReady,
        @Nullable Duration timeout,
        @Nullable Long maxRequestMessageBytes,
        @Nullable Long maxResponseMessageBytes,
        @Nullable RetryPolicy retryPolicy,
        @Nullable HedgingPolicy hedgingPolicy) {

    public MethodConfig {
        names = List.copyOf(names);
    }

    public MethodConfig withNames(List<MethodName> newNames) {
        return new MethodConfig(newNames, waitForReady, timeout, maxRequestMessageBytes, maxResponseMessageBytes,
                retryPolicy, hedgingPolicy);
    }

    public MethodConfig withoutRetry() {
        if (retryPolicy == null && hedgingPolicy == null) {
            return this;
        }
        return new MethodConfig(names, waitForReady, timeout, maxRequestMessageBytes, maxResponseMessageBytes,
                null, null);
    }

    public MethodConfig capped(int maxAttemptsCap) {
        RetryPolicy r = retryPolicy == null ? null : retryPolicy.capped(maxAttemptsCap);
        HedgingPolicy h = hedgingPolicy == null ? null : hedgingPolicy.capped(maxAttemptsCap);
        if (r == retryPolicy && h == hedgingPolicy) {
            return this;
        }
        return new MethodConfig(names, waitForReady, timeout, maxRequestMessageBytes, maxResponseMessageBytes, r, h);
    }
}
