package io.github.grpcretry.attempt;

import java.util.Locale;

/**
 * How an attempt came about; the {@code kind} tag of {@code grpc.client.retry.attempts}: the call's first, a retry
 * before its commit, a hedge, or a resumption of a server stream after its commit (a {@link StreamResumption}).
 */
public enum AttemptKind {
    INITIAL, RETRY, HEDGE, RESUME;

    private final String tagValue = name().toLowerCase(Locale.ROOT);

    public String tagValue() {
        return tagValue;
    }
}
