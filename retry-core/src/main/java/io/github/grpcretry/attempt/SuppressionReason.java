package io.github.grpcretry.attempt;

import java.util.Locale;

/**
 * Why a failed attempt was not retried; the {@code reason} tag of {@code grpc.client.retry.suppressed}.
 */
public enum SuppressionReason {
    /** The status is not in the policy's retryable codes (or a hedge's status is fatal). */
    NON_RETRYABLE_STATUS,
    /** The attempt cap was reached. */
    MAX_ATTEMPTS,
    /** The channel's A6 throttle is at or below its threshold. */
    THROTTLED,
    /** The channel's retry budget is spent. */
    BUDGET,
    /** Adaptive hedging's cap: the hedge would take the method's hedges past {@code max-extra-load} of its calls. */
    MAX_EXTRA_LOAD,
    /** The server's pushback said not to retry (negative, malformed or repeated value). */
    PUSHBACK,
    /** The next attempt could not start before the call's deadline. */
    DEADLINE,
    /** The call was already committed (response headers or a message arrived). */
    COMMITTED,
    /** The call was committed because its requests passed the per-RPC or channel buffer limit. */
    BUFFER_LIMIT,
    /** A server stream that broke after its commit was not resumed: its {@link StreamResumption}'s resumer gave no request. */
    RESUME_REFUSED;

    private final String tagValue = name().toLowerCase(Locale.ROOT);

    public String tagValue() {
        return tagValue;
    }
}
