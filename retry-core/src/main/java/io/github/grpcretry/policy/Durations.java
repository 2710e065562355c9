package io.github.grpcretry.policy;

import java.time.Duration;

/**
 * The one place for the rules about durations that every part of grpc-retry shares: the longest
 * duration accepted (what fits in a signed 64-bit count of nanoseconds, about 292 years: the unit
 * grpc-java and the engine work in), the conversion to nanoseconds that never overflows, and the
 * protobuf-JSON form used in service configs and in problem reports ({@code "1.5s"}).
 */
public final class Durations {

    /** The longest duration accepted anywhere (timeouts, backoffs, delays): {@code 2^63-1} nanoseconds. */
    public static final Duration MAX = Duration.ofNanos(Long.MAX_VALUE);

    /** Whole seconds that always fit in nanoseconds, whatever the nano-of-second part. */
    private static final long SAFE_SECONDS = Long.MAX_VALUE / 1_000_000_000L - 1;

    private Durations() {
    }

    /** Whether {@code d} fits in a signed 64-bit count of nanoseconds, in either direction. */
    public static boolean fitsInNanos(Duration d) {
        return d.compareTo(MAX) <= 0 && d.compareTo(MAX.negated()) >= 0;
    }

    /** {@code d} in nanoseconds, saturated to {@link Long#MAX_VALUE} / {@link Long#MIN_VALUE}. */
    public static long saturatedNanos(Duration d) {
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

    /** A protobuf-JSON duration: seconds with up to nine fractional digits and an "s" suffix ({@code "0.05s"}). */
    public static String toJson(Duration d) {
        long seconds = d.getSeconds();
        int nanos = d.getNano();
        String sign = "";
        if (d.isNegative()) {
            // without negated(): the most negative Duration cannot be negated
            sign = "-";
            if (nanos == 0) {
                return seconds + "s";
            }
            seconds = -(seconds + 1);
            nanos = 1_000_000_000 - nanos;
        }
        if (nanos == 0) {
            return sign + seconds + "s";
        }
        String frac = String.format("%09d", nanos).replaceFirst("0+$", "");
        return sign + seconds + "." + frac + "s";
    }
}
