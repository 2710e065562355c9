package io.github.grpcretry.attempt;

import java.util.Locale;

/** How an attempt came about; the {@code kind} tag of {@code grpc.client.retry.attempts}. */
public enum AttemptKind {
    INITIAL, RETRY, HEDGE;

    private final String tagValue = name().toLowerCase(Locale.ROOT);

    public String tagValue() {
        return tagValue;
    }
}
