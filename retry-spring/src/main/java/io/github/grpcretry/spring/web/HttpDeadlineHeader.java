package io.github.grpcretry.spring.web;

import io.grpc.Context;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * HTTP ingress of deadlines, the part every web stack shares: the caller's timeout in milliseconds,
 * read from a request header ({@code grpc.retry.deadline.http.header}) and clamped to a maximum
 * ({@code grpc.retry.deadline.http.max}). A missing, negative, non-numeric (ASCII digits only) or
 * overflowing value is unusable: the request is handled as if the header were absent, never failed.
 * {@link #context(String)} gives the gRPC {@code Context} with that deadline that the web filters of
 * both Spring Boot lines run the request in (its timer is one daemon thread, started with the first
 * deadline, stopped by {@link #close()}).
 */
final class HttpDeadlineHeader implements AutoCloseable {

    private final String header;
    private final long maxNanos;
    private final ScheduledThreadPoolExecutor timer;

    /**
     * @param header the header's name (not blank)
     * @param max the clamp (> 0)
     */
    HttpDeadlineHeader(String header, @Nullable Duration max) {
        this.header = Objects.requireNonNull(header, "header").trim();
        if (this.header.isEmpty()) {
            throw new IllegalArgumentException("header must not be empty");
        }
        if (max == null || max.isNegative() || max.isZero()) {
            throw new IllegalArgumentException("max must be > 0, was " + max);
        }
        this.maxNanos = max.toNanos();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "grpc-retry-http-deadline");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
    }

    String header() {
        return header;
    }

    /**
     * The timeout in nanoseconds a header value asks for, clamped to the maximum; -1 when the value is
     * missing or unusable.
     */
    long timeoutNanos(@Nullable String value) {
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

    /**
     * A context, child of the current one, whose deadline is the one the header value asks for (clamped);
     * null when the value is missing or unusable. The caller attaches it around the request's handling
     * and cancels it when the request is done.
     */
    Context.@Nullable CancellableContext context(@Nullable String value) {
        long nanos = timeoutNanos(value);
        return nanos < 0 ? null : Context.current().withDeadlineAfter(nanos, TimeUnit.NANOSECONDS, timer);
    }

    /** Stops the timer; contexts made before lose their deadline's cancellation. */
    @Override
    public void close() {
        timer.shutdownNow();
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
