package io.github.grpcretry.autoconfigure.deadline;

import io.grpc.Context;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * HTTP ingress of deadlines for Spring MVC: the caller's timeout in milliseconds, read from a request
 * header and clamped to a maximum, becomes the deadline of a gRPC {@code Context} in which the rest
 * of the filter chain (and the handler) runs, so gRPC calls made for the request inherit it. The
 * context is cancelled when the request has been handled (for an async request, when it completes).
 * A missing, negative, non-numeric or overflowing value is ignored (logged at DEBUG): the request is
 * handled as if the header were absent, never failed.
 */
public class GrpcDeadlineHttpFilter extends OncePerRequestFilter implements DisposableBean {

    private static final Log log = LogFactory.getLog(GrpcDeadlineHttpFilter.class);

    private final String header;
    private final long maxNanos;
    private final ScheduledExecutorService scheduler;

    public GrpcDeadlineHttpFilter(String header, Duration max) {
        this.header = Objects.requireNonNull(header, "header").trim();
        if (this.header.isEmpty()) {
            throw new IllegalArgumentException("header must not be empty");
        }
        if (max == null || max.isNegative() || max.isZero()) {
            throw new IllegalArgumentException("max must be > 0, was " + max);
        }
        this.maxNanos = max.toNanos();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "grpc-retry-http-deadline");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        this.scheduler = timer;
    }

    public String getHeader() {
        return header;
    }

    /**
     * The timeout in nanoseconds the header value asks for, clamped to the maximum; -1 when the value
     * is missing or unusable.
     */
    long timeoutNanos(String value) {
        if (value == null) {
            return -1;
        }
        String v = value.trim();
        if (!isAsciiInteger(v)) {
            // Long.parseLong also takes other scripts' digits (Arabic-Indic, fullwidth...): not an HTTP number
            log.debug("Ignoring " + header + " header '" + value + "': not a whole number of milliseconds");
            return -1;
        }
        long millis;
        try {
            millis = Long.parseLong(v);
        } catch (NumberFormatException e) {
            log.debug("Ignoring " + header + " header '" + value + "': not a whole number of milliseconds");
            return -1;
        }
        if (millis < 0) {
            log.debug("Ignoring " + header + " header '" + value + "': negative");
            return -1;
        }
        long maxMillis = TimeUnit.NANOSECONDS.toMillis(maxNanos);
        if (millis >= maxMillis) {
            return maxNanos;
        }
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /** An optional sign and one or more ASCII digits. */
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

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long nanos = timeoutNanos(request.getHeader(header));
        if (nanos < 0) {
            chain.doFilter(request, response);
            return;
        }
        Context.CancellableContext context = Context.current().withDeadlineAfter(nanos, TimeUnit.NANOSECONDS,
                scheduler);
        Context previous = context.attach();
        try {
            chain.doFilter(request, response);
        } finally {
            context.detach(previous);
            if (request.isAsyncStarted()) {
                request.getAsyncContext().addListener(new CancelOnComplete(context));
            } else {
                context.cancel(null);
            }
        }
    }

    @Override
    public void destroy() {
        scheduler.shutdownNow();
    }

    private record CancelOnComplete(Context.CancellableContext context) implements AsyncListener {
        @Override
        public void onComplete(AsyncEvent event) {
            context.cancel(null);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            context.cancel(null);
        }

        @Override
        public void onError(AsyncEvent event) {
            context.cancel(null);
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
        }
    }
}
