package io.github.grpcretry.internal.time;

import java.time.Duration;

/**
 * The one place for the rules about durations that every part of grpc-retry shares: the longest
 * duration accepted (what fits in a signed 64-bit count of nanoseconds, about 292 years: the unit
 * grpc-java and the engine work in), the conversion to nanoseconds that never overflows, and the
 * protobuf-JSON form used in service configs ({@code "1.5s"}), and the form users write in
 * {@code application.yml} ({@code "50ms"}, {@code "10s"}) used in reports.
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
        // nine digits, trailing zeros dropped: arithmetic and a StringBuilder, no Formatter, regex or new
        // string-concatenation shape on the start-up path (each new shape spins method-handle classes)
        int digits = 9;
        while (nanos % 10 == 0) {
            nanos /= 10;
            digits--;
        }
        String frac = Integer.toString(nanos);
        StringBuilder out = new StringBuilder(32).append(sign).append(seconds).append('.');
        for (int i = frac.length(); i < digits; i++) {
            out.append('0');
        }
        return out.append(frac).append('s').toString();
    }

    private static final long[] UNIT_NANOS = {86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L,
            1_000_000_000L, 1_000_000L, 1_000L, 1L};
    private static final String[] UNIT_NAMES = {"d", "h", "m", "s", "ms", "us", "ns"};

    /**
     * {@code d} as a user writes it in {@code application.yml}: a whole number in the largest unit that
     * holds it exactly ({@code "50ms"}, {@code "1s"}, {@code "1500ms"}, {@code "2m"}, {@code "0s"}), the
     * form Spring Boot reads back. A duration past {@link #MAX} is written in seconds.
     */
    public static String toText(Duration d) {
        if (!fitsInNanos(d)) {
            return d.getNano() == 0 ? d.getSeconds() + "s" : toJson(d);
        }
        long nanos = d.toNanos();
        if (nanos == 0) {
            return "0s";
        }
        for (int i = 0; i < UNIT_NANOS.length; i++) {
            if (nanos % UNIT_NANOS[i] == 0) {
                return nanos / UNIT_NANOS[i] + UNIT_NAMES[i];
            }
        }
        throw new AssertionError(); // the last unit divides every count
    }
}
