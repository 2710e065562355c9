package io.github.grpcretry.springgrpc;

import io.github.grpcretry.integration.HttpDeadlineHeader;
import io.grpc.Context;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * HTTP ingress of deadlines for Spring Boot 4's servlet stack: the caller's timeout in milliseconds, read from the
 * {@code grpc.retry.deadline.http.header} request header and clamped to {@code http.max}
 * ({@link HttpDeadlineHeader}), becomes the deadline of a gRPC {@code Context} in which the rest of the
 * filter chain and the handler run, so the gRPC calls made for the request inherit it (less the
 * reserve). The context is cancelled when the request has been handled (for an async request, when it
 * completes). A missing, negative, non-numeric or overflowing value is ignored (logged at DEBUG): the
 * request is handled as if the header were absent, never failed.
 */
public class GrpcDeadlineHttpFilter extends OncePerRequestFilter implements DisposableBean {

    private static final Log log = LogFactory.getLog(GrpcDeadlineHttpFilter.class);

    private final HttpDeadlineHeader header;

    public GrpcDeadlineHttpFilter(String header, Duration max) {
        this.header = new HttpDeadlineHeader(header, max);
    }

    public String getHeader() {
        return header.header();
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String value = request.getHeader(header.header());
        Context.CancellableContext context = header.context(value);
        if (context == null) {
            if (value != null) {
                log.debug("Ignoring " + header.header() + " header '" + value
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
            if (request.isAsyncStarted()) {
                request.getAsyncContext().addListener(new CancelWhenDone(context));
            } else {
                context.cancel(null);
            }
        }
    }

    @Override
    public void destroy() {
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
