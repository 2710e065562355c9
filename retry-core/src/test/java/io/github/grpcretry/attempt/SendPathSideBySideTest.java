package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.attempt.Engines.Engine;
import io.github.grpcretry.attempt.Engines.Transport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.ForwardingClientCall;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The send path as grpc-java's own retry has it (docs/design.md §2, §18): each
 * scenario runs under grpc-java's engine ({@code enableRetry()} and the same service config, the same server) as
 * the control, then under ours, and ours must end as grpc-java's did. The engine keeps the application's message
 * object and lets each attempt's call marshal it; it counts the buffer from what the transport reports written.
 */
class SendPathSideBySideTest {

    @RegisterExtension
    static final SideBySideServers SERVERS = new SideBySideServers("send-path");

    private static final ChannelRetryConfig FAST = Configs.channel(Configs.fast(3));

    /** Unary {@code SimpleService} with a pass-through request marshaller: the stream handed in is what is sent. */
    private static final MethodDescriptor<InputStream, SimpleResponse> PASS_THROUGH = MethodDescriptor.<InputStream, SimpleResponse>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(Rpc.UNARY.getFullMethodName())
            .setRequestMarshaller(new MethodDescriptor.Marshaller<>() {
                @Override
                public InputStream stream(InputStream value) {
                    return value;
                }

                @Override
                public InputStream parse(InputStream stream) {
                    return stream;
                }
            })
            .setResponseMarshaller(Rpc.UNARY.getResponseMarshaller())
            .build();

    /** A stream over a buffer that can be read once: closing it gives the buffer back (a pooled buffer's stream). */
    private static class ReadOnce extends InputStream {
        private byte[] buffer;
        private int position;

        ReadOnce(byte[] buffer) {
            this.buffer = buffer;
        }

        @Override
        public int read() {
            return position < buffer.length ? buffer[position++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            int n = Math.min(len, buffer.length - position);
            if (n <= 0) {
                return len == 0 ? 0 : -1;
            }
            System.arraycopy(buffer, position, b, off, n);
            position += n;
            return n;
        }

        @Override
        public void close() {
            buffer = new byte[0]; // back to its pool: nothing more can be read
            position = 0;
        }
    }

    /** As {@link ReadOnce}, telling its length (as grpc-java's protobuf streams do). */
    private static final class KnownLengthReadOnce extends ReadOnce implements KnownLength {
        KnownLengthReadOnce(byte[] buffer) {
            super(buffer);
        }

        @Override
        public int available() {
            return super.buffer.length - super.position;
        }
    }

    private static Engines.Client client(Engine engine, Transport t, ChannelRetryConfig config, ClientInterceptor... below) {
        ScriptedServer server = SERVERS.server(t);
        return engine == Engine.NATIVE ? Engines.nativeClient(server, t, config)
                : Engines.interceptorClient(server, t, config, SERVERS.scheduler(), below);
    }

    // ------------------------------------------------------------------ a message stream read once

    @ParameterizedTest
    @CsvSource({"IN_PROCESS,true", "IN_PROCESS,false", "NETTY,true", "NETTY,false"})
    void aMessageWhoseStreamCanBeReadOnceReachesTheServerWhole(Transport t, boolean knownLength) throws Exception {
        List<String> received = new ArrayList<>();
        for (Engine engine : List.of(Engine.NATIVE, Engine.INTERCEPTOR)) {
            ScriptedServer server = SERVERS.server(t);
            server.reset();
            server.script(a -> Action.ok());
            try (Engines.Client c = client(engine, t, FAST)) {
                byte[] hello = Rpc.request("hello").toByteArray();
                InputStream message = knownLength ? new KnownLengthReadOnce(hello) : new ReadOnce(hello);
                SimpleResponse response = ClientCalls.blockingUnaryCall(c.channel(), PASS_THROUGH, CallOptions.DEFAULT,
                        message);

                assertThat(response.getResponseMessage()).as(engine.name()).isEqualTo("hello");
                assertThat(server.arrivals()).as(engine.name()).hasSize(1);
                received.add(String.join(",", server.arrivals().get(0).messages));
                if (c.interceptor() != null) {
                    assertThat(EngineTestAccess.bufferPool(c.interceptor()).used()).as("bytes held after the call").isZero();
                }
            }
        }
        assertThat(received).as("what the server read: grpc-java's, then ours").containsExactly("hello", "hello");
    }

    // ------------------------------------------------------------------ the call below or the marshaller throws

    /** What an application saw of a call whose attempt's call threw, and what the server saw of it. */
    record Failed(Status.Code code, String description, Class<?> cause, String causeMessage, int arrivals,
            boolean serverSawTheCancel) {
    }

    /** Throws from one operation of every attempt's call once armed. */
    private static final class ThrowingBelow implements ClientInterceptor {
        private final String op;
        volatile boolean armed;

        ThrowingBelow(String op) {
            this.op = op;
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
                @Override
                public void sendMessage(ReqT message) {
                    fail("sendMessage");
                    super.sendMessage(message);
                }

                @Override
                public void request(int numMessages) {
                    fail("request");
                    super.request(numMessages);
                }

                @Override
                public void halfClose() {
                    fail("halfClose");
                    super.halfClose();
                }
            };
        }

        private void fail(String what) {
            if (armed && op.equals(what)) {
                throw new IllegalStateException("below the engine: " + what + " failed");
            }
        }
    }

    /**
     * grpc-java's control: what is below its retry (the attempt's stream) throws when it takes the message. A
     * stream tracer that throws as the stream writes it does that (grpc-java's ClientCallImpl catches it).
     */
    private static CallOptions throwingStream(ThrowingBelow armedBy) {
        return CallOptions.DEFAULT.withStreamTracerFactory(new ClientStreamTracer.Factory() {
            @Override
            public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                return new ClientStreamTracer() {
                    @Override
                    public void outboundMessage(int seqNo) {
                        armedBy.fail("sendMessage");
                    }
                };
            }
        });
    }

    /**
     * A client stream whose server has the call open; then the operation throws below the engine (below
     * grpc-java's retry for the control). The application's call must close CANCELLED with the exception as
     * the cause, the attempt must be cancelled on both sides and nothing retried.
     */
    private static Failed throwBelow(Engine engine, Transport t, String op) throws Exception {
        ScriptedServer server = SERVERS.server(t);
        server.reset();
        server.script(a -> Action.ok());
        ThrowingBelow below = new ThrowingBelow(op);
        // CANCELLED retryable too: a call whose own send failed must not be retried all the same
        ChannelRetryConfig config = Configs.channel(Configs.policy(3, 10, 100, 2, Status.Code.UNAVAILABLE,
                Status.Code.CANCELLED));
        try (Engines.Client c = engine == Engine.NATIVE ? client(engine, t, config) : client(engine, t, config, below)) {
            CallOptions options = engine == Engine.NATIVE ? throwingStream(below) : CallOptions.DEFAULT;
            Rpc.Handle h = Rpc.start(c.channel(), Rpc.CLIENT_STREAMING, options);
            RetryEngineTest.waitFor(() -> server.arrivalCount() == 1);
            below.armed = true;
            switch (op) {
                case "sendMessage" -> h.send("a");
                case "request" -> h.call.request(1);
                default -> h.halfClose();
            }
            Rpc.Outcome o = h.await();
            Arrival arrival = server.arrivals().get(0);
            RetryEngineTest.waitFor(() -> arrival.cancelled); // nothing left open on the server
            if (c.events() != null) {
                RetryEngineTest.waitFor(() -> c.events().attemptsEnded.get() == 1); // nor on the client
                assertThat(c.events().ofType("retryScheduled")).isEmpty();
            }
            Throwable cause = o.status().getCause();
            return new Failed(o.code(), o.status().getDescription(), cause == null ? null : cause.getClass(),
                    cause == null ? null : cause.getMessage(), server.arrivalCount(), arrival.cancelled);
        }
    }

    /** An interceptor below the engine throws from sendMessage; grpc-java: its stream throws. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aSendMessageThatThrowsBelowTheEngineCancelsThatAttemptAndEndsTheCall(Transport t) throws Exception {
        Failed control = throwBelow(Engine.NATIVE, t, "sendMessage");
        assertThat(control).isEqualTo(new Failed(Status.Code.CANCELLED, "Failed to stream message",
                IllegalStateException.class, "below the engine: sendMessage failed", 1, true));

        assertThat(throwBelow(Engine.INTERCEPTOR, t, "sendMessage")).isEqualTo(control);
    }

    /**
     * The call below throws from request or halfClose: grpc-java's ClientCallImpl lets an exception of its stream's request or
     * half-close escape (no control to compare with); the engine ends the call as for a message: the attempt
     * cancelled on both sides, the call CANCELLED with the exception as the cause.
     */
    @ParameterizedTest
    @CsvSource({"IN_PROCESS,request", "IN_PROCESS,halfClose", "NETTY,request", "NETTY,halfClose"})
    void aRequestOrHalfCloseThatThrowsBelowTheEngineCancelsThatAttemptAndEndsTheCall(Transport t, String op)
            throws Exception {
        Failed ours = throwBelow(Engine.INTERCEPTOR, t, op);
        assertThat(ours).isEqualTo(new Failed(Status.Code.CANCELLED,
                op.equals("request") ? "Failed to request messages" : "Failed to half-close",
                IllegalStateException.class, "below the engine: " + op + " failed", 1, true));
    }

    /** A unary method whose request marshaller fails for the request "boom". */
    private static final MethodDescriptor<SimpleRequest, SimpleResponse> FAILING_MARSHALLER = Rpc.UNARY.toBuilder(
            new MethodDescriptor.Marshaller<SimpleRequest>() {
                @Override
                public InputStream stream(SimpleRequest value) {
                    if (value.getRequestMessage().equals("boom")) {
                        throw new IllegalArgumentException("cannot marshal boom");
                    }
                    return Rpc.UNARY.getRequestMarshaller().stream(value);
                }

                @Override
                public SimpleRequest parse(InputStream stream) {
                    return Rpc.UNARY.getRequestMarshaller().parse(stream);
                }
            }, Rpc.UNARY.getResponseMarshaller()).build();

    /** A marshaller that throws: a blocking stub gets a StatusRuntimeException, never the marshaller's exception itself. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aMarshallerFailureClosesTheCallCancelledWithItsCause(Transport t) throws Exception {
        List<Object> seen = new ArrayList<>();
        // CANCELLED retryable too: a call whose message cannot be marshalled is not retried all the same
        ChannelRetryConfig config = Configs.channel(Configs.policy(3, 10, 100, 2, Status.Code.UNAVAILABLE,
                Status.Code.CANCELLED));
        for (Engine engine : List.of(Engine.NATIVE, Engine.INTERCEPTOR)) {
            ScriptedServer server = SERVERS.server(t);
            server.reset();
            server.script(a -> Action.ok());
            try (Engines.Client c = client(engine, t, config)) {
                assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(c.channel(), FAILING_MARSHALLER,
                        CallOptions.DEFAULT, Rpc.request("boom")))
                        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> seen.add(List.of(
                                e.getStatus().getCode(), String.valueOf(e.getStatus().getDescription()),
                                e.getStatus().getCause() == null ? "no cause" : e.getStatus().getCause().toString())));
                // the call is closed: a retry (none may go) would have been sent before it closed
                assertThat(server.arrivalCount()).as(engine + ": arrivals").isLessThanOrEqualTo(1);
                if (c.events() != null) {
                    RetryEngineTest.waitFor(() -> c.events().callsEnded.get() == 1);
                    assertThat(c.events().ofType("retryScheduled")).isEmpty();
                    assertThat(EngineTestAccess.bufferPool(c.interceptor()).used()).isZero();
                }
                // the channel still works
                assertThat(ClientCalls.blockingUnaryCall(c.channel(), FAILING_MARSHALLER, CallOptions.DEFAULT,
                        Rpc.request("fine")).getResponseMessage()).isEqualTo("fine");
            }
        }
        assertThat(seen.get(0)).as("grpc-java's").isEqualTo(List.of(Status.Code.CANCELLED, "Failed to stream message",
                "java.lang.IllegalArgumentException: cannot marshal boom"));
        assertThat(seen.get(1)).as("ours").isEqualTo(seen.get(0));
    }

    // ------------------------------------------------------------------ per-message compression

    /** 1,003 bytes serialised; gzip makes a few dozen of them. */
    private static final SimpleRequest LONG_A = Rpc.request("a".repeat(1000));
    private static final SimpleRequest LONG_B = Rpc.request("b".repeat(1000));

    /**
     * A client stream with gzip: "a" sent uncompressed, then compression on and "b"; the first attempt fails on
     * half-close, the retry replays both. grpc-java replays each message with the setting it was sent with.
     * Over Netty, whose server reports the bytes of each message on the wire (in-process nothing is compressed).
     */
    @Test
    void eachMessageIsReplayedWithTheCompressionItWasSentWith() throws Exception {
        Map<Engine, List<List<Boolean>>> compressed = new java.util.EnumMap<>(Engine.class);
        for (Engine engine : List.of(Engine.NATIVE, Engine.INTERCEPTOR)) {
            try (CompressionServer server = CompressionServer.start()) {
                ManagedChannel channel = engine == Engine.NATIVE
                        ? NettyChannelBuilder.forTarget(server.target()).usePlaintext()
                                .defaultServiceConfig(FAST.serviceConfig().toServiceConfigMap(true)).enableRetry()
                                .maxRetryAttempts(FAST.maxAttemptsCap()).build()
                        : NettyChannelBuilder.forTarget(server.target()).usePlaintext()
                                .defaultServiceConfig(FAST.serviceConfig().toServiceConfigMap(false))
                                .intercept(RetryingClientInterceptor.builder(FAST).scheduler(SERVERS.scheduler()).build())
                                .build();
                try {
                    Rpc.Handle h = Rpc.start(channel, Rpc.CLIENT_STREAMING, CallOptions.DEFAULT.withCompression("gzip"));
                    h.call.setMessageCompression(false);
                    h.call.sendMessage(LONG_A);
                    h.call.setMessageCompression(true);
                    h.call.sendMessage(LONG_B);
                    Rpc.Outcome o = h.halfClose().await();
                    assertThat(o.code()).as(engine.name()).isEqualTo(Status.Code.OK);
                } finally {
                    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
                compressed.put(engine, server.compressedPerArrival());
            }
        }
        assertThat(compressed.get(Engine.NATIVE)).as("grpc-java: per arrival, whether each message came compressed")
                .containsExactly(List.of(false, true), List.of(false, true));
        assertThat(compressed.get(Engine.INTERCEPTOR)).as("ours").isEqualTo(compressed.get(Engine.NATIVE));
    }

    /**
     * A Netty server for the client-streaming method that fails its first arrival on half-close (UNAVAILABLE) and
     * answers the others, recording for each arrival whether each message came compressed (fewer bytes on the
     * wire than the message's serialised size).
     */
    private static final class CompressionServer implements AutoCloseable {
        private final Server server;
        private final AtomicInteger arrivals = new AtomicInteger();
        /** By arrival (its {@code grpc-previous-rpc-attempts}, 0 for the first): the wire size of each message. */
        private final Map<Integer, List<Long>> wireSizes = new ConcurrentHashMap<>();

        private CompressionServer() throws IOException {
            ServerServiceDefinition service = ServerServiceDefinition.builder(Configs.SERVICE)
                    .addMethod(Rpc.CLIENT_STREAMING, ServerCalls.asyncClientStreamingCall(this::answer))
                    .build();
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(service)
                    .addStreamTracerFactory(new ServerStreamTracer.Factory() {
                        @Override
                        public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
                            String prev = headers.get(ScriptedServer.PREVIOUS_ATTEMPTS);
                            List<Long> sizes = Collections.synchronizedList(new ArrayList<>());
                            wireSizes.put(prev == null ? 0 : Integer.parseInt(prev), sizes);
                            return new ServerStreamTracer() {
                                @Override
                                public void inboundMessageRead(int seqNo, long wireSize, long uncompressedSize) {
                                    sizes.add(wireSize);
                                }
                            };
                        }
                    })
                    .build().start();
        }

        static CompressionServer start() throws IOException {
            return new CompressionServer();
        }

        String target() {
            return "127.0.0.1:" + server.getPort();
        }

        private StreamObserver<SimpleRequest> answer(StreamObserver<SimpleResponse> out) {
            boolean fail = arrivals.incrementAndGet() == 1;
            return new StreamObserver<>() {
                @Override
                public void onNext(SimpleRequest value) {
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    if (fail) {
                        out.onError(Status.UNAVAILABLE.withDescription("first arrival fails").asRuntimeException());
                    } else {
                        out.onNext(SimpleResponse.newBuilder().setResponseMessage("ok").build());
                        out.onCompleted();
                    }
                }
            };
        }

        /** Per arrival in attempt order: whether each of its messages came compressed. */
        List<List<Boolean>> compressedPerArrival() {
            List<List<Boolean>> out = new ArrayList<>();
            for (int i = 0; wireSizes.containsKey(i); i++) {
                List<Boolean> flags = new ArrayList<>();
                for (long size : wireSizes.get(i)) {
                    flags.add(size < LONG_A.getSerializedSize());
                }
                out.add(flags);
            }
            return out;
        }

        @Override
        public void close() throws InterruptedException {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
