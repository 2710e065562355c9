package io.github.grpcretry.spring.web;

import io.grpc.Context;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.time.Duration;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.jspecify.annotations.Nullable;

/**
 * HTTP ingress of deadlines on a servlet stack (Jakarta Servlet 6, as both Spring Boot lines run it): the
 * caller's timeout in milliseconds, read from the {@code grpc.retry.deadline.http.header} request header
 * and clamped to {@code http.max} ({@link HttpDeadlineHeader}), becomes the deadline of a gRPC
 * {@code Context} in which the rest of the filter chain and the handler run, so the gRPC calls made for
 * the request inherit it (less the reserve). The context is cancelled when the request has been handled
 * (for an async request, when it completes). A missing, negative, non-numeric or overflowing value is
 * ignored (logged at FINE): the request is handled as if the header were absent, never failed.
 *
 * <p>Register it for {@code REQUEST} dispatches only (the default of Spring Boot's
 * {@code FilterRegistrationBean} for a plain filter): an async or error dispatch of the same request runs
 * in the context the first dispatch made. Each Spring Boot line's auto-configuration registers it
 * when {@code grpc.retry.deadline.http.header} is set; {@link #close()} (or the container's
 * {@link #destroy()}) stops its timer.
 */
public class GrpcDeadlineHttpFilter implements Filter, AutoCloseable {

    private static final Logger log = Logger.getLogger(GrpcDeadlineHttpFilter.class.getName());

    private final HttpDeadlineHeader header;

    /**
     * @param header the request header's name (not blank)
     * @param max the clamp (> 0)
     */
    public GrpcDeadlineHttpFilter(String header, @Nullable Duration max) {
        this.header = new HttpDeadlineHeader(header, max);
    }

    public String getHeader() {
        return header.header();
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!(request instanceof HttpServletRequest http)) {
            chain.doFilter(request, response);
            return;
        }
        String value = http.getHeader(header.header());
        Context.CancellableContext context = header.context(value);
        if (context == null) {
            if (value != null && log.isLoggable(Level.FINE)) {
                log.fine("Ignoring " + header.header() + " header '" + value
                        + "': not a whole, non-negative number of milliseconds");
            }
            chain.doFilter(request, response);
            return;
        }
        Context previous = context.attach();
        try {
            chain.doFilter(request, response);
        } finally {
            context.detach(previous);
            if (http.isAsyncStarted()) {
                http.getAsyncContext().addListener(new CancelWhenDone(context));
            } else {
                context.cancel(null);
            }
        }
    }

    @Override
    public void destroy() {
        close();
    }

    /** Stops the deadline timer (idempotent). */
    @Override
    public void close() {
        header.close();
    }

    private record CancelWhenDone(Context.CancellableContext context) implements AsyncListener {
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
