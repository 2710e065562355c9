package io.github.grpcretry.attempt;

import java.util.Locale;

/**
 * Where the delay before a retry came from; the {@code source} tag of {@code grpc.client.retry.delays}
 * and the attempt span's {@code grpc.retry.delay_source}.
 */
public enum DelaySource {
    /** The policy's own backoff (or a {@link RetryDecider}'s delay). */
    POLICY,
    /** The server's {@code grpc-retry-pushback-ms} trailer. */
    PUSHBACK,
    /** The server's {@code google.rpc.RetryInfo} in the {@code grpc-status-details-bin} trailer. */
    RETRY_INFO;

    private final String tagValue = name().toLowerCase(Locale.ROOT);

    /** {@code policy}, {@code pushback} or {@code retry_info}. */
    public String tagValue() {
        return tagValue;
    }
}
