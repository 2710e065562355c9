package io.github.grpcretry.integration;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * HTTP ingress of deadlines, the part every web stack shares: the caller's timeout in milliseconds,
 * read from a request header ({@code grpc.retry.deadline.http.header}) and clamped to a maximum
 * ({@code grpc.retry.deadline.http.max}). A missing, negative, non-numeric (ASCII digits only) or
 * overflowing value is unusable: the request is handled as if the header were absent, never failed.
 * The auto-configuration modules run the request in a gRPC {@code Context} with that deadline.
 */
public final class HttpDeadlineHeader {

    private final String header;
    private final long maxNanos;

    /**
     * @param header the header's name (not blank)
     * @param max the clamp (> 0)
     */
    public HttpDeadlineHeader(String header, @Nullable Duration max) {
        this.header = Objects.requireNonNull(header, "header").trim();
        if (this.header.isEmpty()) {
            throw new IllegalArgumentException("header must not be empty");
        }
        if (max == null || max.isNegative() || max.isZero()) {
            throw new IllegalArgumentException("max must be > 0, was " + max);
        }
        this.maxNanos = max.toNanos();
    }

    public String header() {
        return header;
    }

    /**
     * The timeout in nanoseconds a header value asks for, clamped to the maximum; -1 when the value is
     * missing or unusable.
     */
    public long timeoutNanos(@Nullable String value) {
        if (value == null) {
            return -1;
        }
        String v = value.trim();
        if (!isAsciiInteger(v)) {
            return -1;
        }
        long millis;
        try {
            millis = Long.parseLong(v);
        } catch (NumberFormatException e) {
            return -1;
        }
        if (millis < 0) {
            return -1;
        }
        return millis >= TimeUnit.NANOSECONDS.toMillis(maxNanos) ? maxNanos : TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /** An optional sign and one or more ASCII digits (Long.parseLong also takes other scripts' digits). */
    private static boolean isAsciiInteger(String v) {
        int len = v.length();
        int i = len > 0 && (v.charAt(0) == '+' || v.charAt(0) == '-') ? 1 : 0;
        if (i == len) {
            return false;
        }
        for (; i < len; i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }
}
