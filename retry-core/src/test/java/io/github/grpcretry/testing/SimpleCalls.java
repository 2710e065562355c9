package io.github.grpcretry.testing;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Calls of {@code grpc.testing.SimpleService} (answered by {@link ScriptedServer}) through the raw
 * {@link ClientCall} API, each with a {@link ContractListener} that knows the responses its request
 * must produce. Every call carries a unique id ({@link #CALL_ID}) so attempts can be counted below
 * the engine ({@link AttemptCounter}) and arrivals matched on the server; server-streaming calls
 * carry a response prefix so their responses are tied to them too. Response demand is one message
 * at a time.
 */
public final class SimpleCalls {

    public static final MethodDescriptor<SimpleRequest, SimpleResponse> UNARY = SimpleServiceGrpc.getUnaryRpcMethod();
    public static final MethodDescriptor<SimpleRequest, SimpleResponse> CLIENT_STREAMING =
            SimpleServiceGrpc.getClientStreamingRpcMethod();
    public static final MethodDescriptor<SimpleRequest, SimpleResponse> SERVER_STREAMING =
            SimpleServiceGrpc.getServerStreamingRpcMethod();
    public static final MethodDescriptor<SimpleRequest, SimpleResponse> BIDI =
            SimpleServiceGrpc.getBidiStreamingRpcMethod();
    public static final List<MethodDescriptor<SimpleRequest, SimpleResponse>> ALL =
            List.of(UNARY, CLIENT_STREAMING, SERVER_STREAMING, BIDI);

    /** Request header naming the logical call. */
    public static final Metadata.Key<String> CALL_ID = Metadata.Key.of("x-call-id", Metadata.ASCII_STRING_MARSHALLER);

    private SimpleCalls() {
    }

    /** A started call. */
    public static final class Handle {
        public final String id;
        public final MethodDescriptor<SimpleRequest, SimpleResponse> method;
        public final ClientCall<SimpleRequest, SimpleResponse> call;
        public final ContractListener<SimpleResponse> listener;
        public final long startNanos = System.nanoTime();

        Handle(String id, MethodDescriptor<SimpleRequest, SimpleResponse> method,
                ClientCall<SimpleRequest, SimpleResponse> call, ContractListener<SimpleResponse> listener) {
            this.id = id;
            this.method = method;
            this.call = call;
            this.listener = listener;
        }

        public Handle send(List<String> messages) {
            for (String m : messages) {
                call.sendMessage(request(m));
            }
            return this;
        }

        public Handle halfClose() {
            call.halfClose();
            return this;
        }
    }

    public static SimpleRequest request(String m) {
        return SimpleRequest.newBuilder().setRequestMessage(m).build();
    }

    /** The request messages of call {@code id}: {@code count} of them, each padded to about {@code padding} chars. */
    public static List<String> messages(String id, int count, int padding) {
        List<String> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String m = id + "-m" + i;
            out.add(padding > m.length() ? m + "~".repeat(padding - m.length()) : m);
        }
        return out;
    }

    /**
     * What {@link ScriptedServer} answers on success: unary and client-streaming one response joining
     * the requests with ","; server-streaming {@code streamResponses} responses "{id}:r0", ...; bidi
     * one echo per request.
     */
    public static List<SimpleResponse> expected(MethodDescriptor<?, ?> method, String id, List<String> requests,
            int streamResponses) {
        List<SimpleResponse> out = new ArrayList<>();
        switch (method.getType()) {
            case UNARY, CLIENT_STREAMING -> out.add(response(String.join(",", requests)));
            case SERVER_STREAMING -> {
                for (int i = 0; i < streamResponses; i++) {
                    out.add(response(id + ":r" + i));
                }
            }
            default -> {
                for (String r : requests) {
                    out.add(response(r));
                }
            }
        }
        return out;
    }

    private static SimpleResponse response(String m) {
        return SimpleResponse.newBuilder().setResponseMessage(m).build();
    }

    /**
     * Starts call {@code id} with one-at-a-time demand; {@code extraHeaders} are added to the start
     * headers. The listener expects the responses {@link #expected} gives.
     */
    public static Handle start(Channel channel, MethodDescriptor<SimpleRequest, SimpleResponse> method,
            CallOptions options, String id, List<String> requests, int streamResponses, Metadata extraHeaders) {
        return start(channel, method, options, id, requests, streamResponses, extraHeaders, null);
    }

    /**
     * As {@link #start(Channel, MethodDescriptor, CallOptions, String, List, int, Metadata)}, running
     * {@code onClose} (when not null) with the listener on every close the application sees, after
     * the listener recorded it.
     */
    public static Handle start(Channel channel, MethodDescriptor<SimpleRequest, SimpleResponse> method,
            CallOptions options, String id, List<String> requests, int streamResponses, Metadata extraHeaders,
            java.util.function.Consumer<ContractListener<SimpleResponse>> onClose) {
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(method, options);
        @SuppressWarnings("unchecked")
        ContractListener<SimpleResponse>[] self = new ContractListener[1];
        ContractListener<SimpleResponse> listener = new ContractListener<>(new ClientCall.Listener<>() {
            @Override
            public void onMessage(SimpleResponse message) {
                call.request(1);
            }

            @Override
            public void onClose(io.grpc.Status status, Metadata trailers) {
                if (onClose != null) {
                    onClose.accept(self[0]);
                }
            }
        });
        self[0] = listener;
        listener.expect(expected(method, id, requests, streamResponses));
        Metadata headers = new Metadata();
        if (extraHeaders != null) {
            headers.merge(extraHeaders);
        }
        headers.put(CALL_ID, id);
        headers.put(ScriptedServer.RESPONSE_PREFIX, id + ":");
        call.start(listener, headers);
        call.request(1);
        return new Handle(id, method, call, listener);
    }

    /** Starts, sends every request and half-closes. */
    public static Handle run(Channel channel, MethodDescriptor<SimpleRequest, SimpleResponse> method,
            CallOptions options, String id, List<String> requests) {
        return start(channel, method, options, id, requests, 3, null).send(requests).halfClose();
    }

    /**
     * Counts the attempts of every call by its {@link #CALL_ID}. Install it below the retry engine
     * ({@code builder.intercept(counter, engine)}: the engine, given last, runs first) to see each
     * attempt, or above it to see each logical call.
     */
    public static final class AttemptCounter implements ClientInterceptor {
        private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
        private final AtomicInteger total = new AtomicInteger();

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                @Override
                public void start(Listener<RespT> responseListener, Metadata headers) {
                    String id = headers.get(CALL_ID);
                    if (id != null) {
                        attempts.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                    }
                    total.incrementAndGet();
                    super.start(responseListener, headers);
                }
            };
        }

        /** Attempts started for call {@code id} (0 when none). */
        public int attempts(String id) {
            AtomicInteger n = attempts.get(id);
            return n == null ? 0 : n.get();
        }

        public int total() {
            return total.get();
        }

        public void clear() {
            attempts.clear();
            total.set(0);
        }
    }
}
