package io.github.grpcretry.attempt;

import io.github.grpcretry.internal.time.Durations;
import java.time.Duration;

/**
 * Durations as {@code long} nanoseconds without overflow. Policies checked by the configuration
 * validator fit, but a policy built in code (a per-call {@link GrpcRetryCallOptions#POLICY}, or an
 * engine used without the starter) may hold any {@link Duration}; {@link Duration#toNanos()} throws
 * for those, and an exception inside an attempt's listener would leave the call hanging.
 */
final class Nanos {

    private Nanos() {
    }

    /** {@code d} in nanoseconds, saturated to {@link Long#MAX_VALUE} / {@link Long#MIN_VALUE} ({@link Durations#saturatedNanos}). */
    static long saturated(Duration d) {
        return Durations.saturatedNanos(d);
    }
}
