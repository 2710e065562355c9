package io.github.grpcretry.testing;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * Interceptors that do only what every interceptor of their kind must, as references for what the engine costs (the
 * allocation test, the benchmarks' variants (e) and (f)).
 */
public final class ForwardingInterceptors {

    private ForwardingInterceptors() {
    }

    /** Wraps the call and its listener and forwards everything: the floor for any interceptor. */
    public static ClientInterceptor forwarding() {
        return Forwarding.INSTANCE;
    }

    /**
     * {@link #forwarding()}, plus what counting the bytes an attempt's streams wrote costs (docs/design.md §2): the
     * call's options copied with a tracer factory of its own, and a tracer per stream adding up
     * {@code outboundWireSize}.
     */
    public static ClientInterceptor traced() {
        return Traced.INSTANCE;
    }

    private enum Forwarding implements ClientInterceptor {
        INSTANCE;

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                @Override
                public void start(Listener<RespT> responseListener, Metadata headers) {
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(responseListener) {
                    }, headers);
                }
            };
        }
    }

    private enum Traced implements ClientInterceptor {
        INSTANCE;

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return Forwarding.INSTANCE.interceptCall(method, callOptions.withStreamTracerFactory(new Written()), next);
        }
    }

    /** One attempt's bytes written, over all its streams (a transparent retry is a second stream). */
    private static final class Written extends ClientStreamTracer.Factory {
        private static final AtomicLongFieldUpdater<Written> BYTES = AtomicLongFieldUpdater.newUpdater(Written.class, "bytes");

        private volatile long bytes;

        @Override
        public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
            return new ClientStreamTracer() {
                @Override
                public void outboundWireSize(long n) {
                    BYTES.addAndGet(Written.this, n);
                }
            };
        }
    }
}
