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
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * HTTP ingress of deadlines on Spring Boot 4's servlet stack: the caller's timeout from the
 * {@code grpc.retry.deadline.http.header} request header (clamped to {@code http.max}, see
 * {@link HttpDeadlineHeader}) becomes the deadline of a gRPC {@code Context} in which the rest of the
 * filter chain and the handler run, so the gRPC calls made for the request inherit it (less the
 * reserve). The context is cancelled when the request has been handled, for an async request when it
 * completes. An unusable header value is ignored, never an error.
 */
public class GrpcDeadlineHttpFilter extends OncePerRequestFilter implements DisposableBean {

    private final HttpDeadlineHeader header;
    private final ScheduledExecutorService timer;

    public GrpcDeadlineHttpFilter(String header, Duration max) {
        this.header = new HttpDeadlineHeader(header, max);
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "grpc-retry-http-deadline");
            thread.setDaemon(true);
            return thread;
        });
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
    }

    public String getHeader() {
        return header.header();
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long nanos = header.timeoutNanos(request.getHeader(header.header()));
        if (nanos < 0) {
            chain.doFilter(request, response);
            return;
        }
        Context.CancellableContext context = Context.current().withDeadlineAfter(nanos, TimeUnit.NANOSECONDS, timer);
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
        timer.shutdownNow();
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
