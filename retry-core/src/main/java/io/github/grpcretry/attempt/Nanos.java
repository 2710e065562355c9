package io.github.grpcretry.attempt;

import java.time.Duration;

/**
 * Durations as {@code long} nanoseconds without overflow. Policies checked by the configuration
 * validator fit, but a policy built in code (a per-call {@link GrpcRetryCallOptions#POLICY}, or an
 * engine used without the starter) may hold any {@link Duration}; {@link Duration#toNanos()} throws
 * for those, and an exception inside an attempt's listener would leave the call hanging.
 */
final class Nanos {

    /** Whole seconds that always fit in nanoseconds, whatever the nano-of-second part. */
    private static final long SAFE_SECONDS = Long.MAX_VALUE / 1_000_000_000L - 1;

    private Nanos() {
    }

    /** {@code d} in nanoseconds, saturated to {@link Long#MAX_VALUE} / {@link Long#MIN_VALUE}. */
    static long saturated(Duration d) {
        long seconds = d.getSeconds();
        if (seconds >= -SAFE_SECONDS && seconds <= SAFE_SECONDS) {
            return d.toNanos();
        }
        try {
            return d.toNanos(); // within two seconds of the edge: exact when it fits
        } catch (ArithmeticException e) {
            return seconds < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }
}
