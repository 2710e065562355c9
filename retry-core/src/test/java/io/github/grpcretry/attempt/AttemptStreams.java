package io.github.grpcretry.attempt;

import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * Counts the streams (attempts) a client sends and closes, through a stream tracer its interceptor
 * puts on every call's CallOptions: grpc-java's engine makes one per attempt, ours opens each
 * attempt as a call of its own. An attempt counts once its headers went out; transparent retries (a
 * stream the server never processed) are not attempts. With the server's record this tells when a scenario is over: every attempt opened has
 * reached the server and ended there ({@link #settle}), so nothing is left in transit and no fixed
 * sleep is needed before counting.
 */
final class AttemptStreams extends ClientStreamTracer.Factory {

    final AtomicInteger opened = new AtomicInteger();
    final AtomicInteger closed = new AtomicInteger();

    @Override
    public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
        boolean attempt = !info.isTransparentRetry();
        return new ClientStreamTracer() {
            private final java.util.concurrent.atomic.AtomicBoolean sent = new java.util.concurrent.atomic.AtomicBoolean();

            @Override
            public void outboundHeaders() {
                // the attempt went out: grpc-java makes the next attempt's stream (and tracer) as soon as
                // the previous one fails, before the backoff, and never starts it if the call ends first
                if (attempt && sent.compareAndSet(false, true)) {
                    opened.incrementAndGet();
                }
            }

            @Override
            public void streamClosed(Status status) {
                if (sent.get()) {
                    closed.incrementAndGet();
                }
            }
        };
    }

    /** An interceptor that adds this tracer to every call. */
    ClientInterceptor interceptor() {
        AttemptStreams streams = this;
        return new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options,
                    Channel next) {
                return next.newCall(method, options.withStreamTracerFactory(streams));
            }
        };
    }

    /**
     * Waits until the client has closed every attempt it opened, the server has recorded as many
     * arrivals matching {@code mine} as attempts were opened, and has seen each of them end (answered
     * or cancelled). Events, not time: fails after {@link RetryEngineTest#waitFor}'s limit.
     */
    void settle(ScriptedServer server, Predicate<Arrival> mine) throws InterruptedException {
        try {
            RetryEngineTest.waitFor(() -> settled(server, mine));
        } catch (AssertionError e) {
            List<Arrival> arrivals = server.arrivals().stream().filter(mine).toList();
            throw new AssertionError(String.format("not settled: %d attempts opened, %d closed; the server has %d"
                    + " arrivals, %d of them ended", opened.get(), closed.get(), arrivals.size(),
                    arrivals.stream().filter(a -> a.closedByServer || a.cancelled).count()), e);
        }
    }

    private boolean settled(ScriptedServer server, Predicate<Arrival> mine) {
        int n = opened.get();
        if (closed.get() != n) {
            return false;
        }
        List<Arrival> arrivals = server.arrivals().stream().filter(mine).toList();
        return arrivals.size() == n && arrivals.stream().allMatch(a -> a.closedByServer || a.cancelled);
    }
}
