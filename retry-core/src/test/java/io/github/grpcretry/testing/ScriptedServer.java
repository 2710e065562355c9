package io.github.grpcretry.testing;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A real gRPC server for {@code grpc.testing.SimpleService} (all four RPC types) that answers each
 * arrival from a script and records it: time, headers ({@code grpc-previous-rpc-attempts}), request
 * messages, cancellation. In-process or Netty on loopback.
 *
 * <p>Success answers: unary and client-streaming reply with the request messages joined by ","
 * (after half-close); server-streaming sends {@link Action#responses} messages "r0", "r1", ...;
 * bidi echoes every message and closes OK on half-close.
 */
public final class ScriptedServer implements AutoCloseable {

    public static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    public static final Metadata.Key<String> PUSHBACK =
            Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);
    /**
     * Request header: when present, every server-streaming response is this value followed by "r0",
     * "r1", ..., so a response can be told apart from another call's.
     */
    public static final Metadata.Key<String> RESPONSE_PREFIX =
            Metadata.Key.of("x-response-prefix", Metadata.ASCII_STRING_MARSHALLER);

    private final ConcurrentLinkedQueue<Arrival> arrivals = new ConcurrentLinkedQueue<>();
    private final AtomicInteger arrivalCount = new AtomicInteger();
    private final ScheduledExecutorService timers = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "scripted-server-timer");
        t.setDaemon(true);
        return t;
    });
    private volatile Function<Arrival, Action> script = a -> Action.ok();
    private final Server server;
    private final String inProcessName;

    /** An in-process server named {@code inProcessName}. */
    public static ScriptedServer start(String inProcessName) throws IOException {
        return create(inProcessName, 0, true);
    }

    /** A Netty server on loopback, ephemeral port. */
    public static ScriptedServer startNetty() throws IOException {
        return create(null, 0, false);
    }

    /** A Netty server on loopback on the given port (0 = ephemeral). */
    public static ScriptedServer startNetty(int port) throws IOException {
        return create(null, port, false);
    }

    /** A Netty server builder on {@code address}: grpc-netty-shaded's, else grpc-netty's (the Spring Boot 4.1 tests). */
    private static io.grpc.ServerBuilder<?> netty(InetSocketAddress address) {
        for (String type : List.of("io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder",
                "io.grpc.netty.NettyServerBuilder")) {
            try {
                return (io.grpc.ServerBuilder<?>) Class.forName(type).getMethod("forAddress", java.net.SocketAddress.class)
                        .invoke(null, address);
            } catch (ClassNotFoundException e) {
                // not on this class path: the next
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("neither grpc-netty-shaded nor grpc-netty is on the class path");
    }

    private static ScriptedServer create(String name, int port, boolean inProcess) throws IOException {
        Holder holder = new Holder();
        ServerServiceDefinition def = holder.definition();
        Server srv = inProcess
                ? InProcessServerBuilder.forName(name).addService(def).build().start()
                : netty(new InetSocketAddress("127.0.0.1", port)).addService(def).build().start();
        holder.server = new ScriptedServer(srv, name, holder);
        return holder.server;
    }

    /** Late binding: the service definition is made before the server, and routes to it. */
    private static final class Holder {
        ScriptedServer server;

        ServerServiceDefinition definition() {
            ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(SimpleServiceGrpc.getServiceDescriptor());
            b.addMethod(SimpleServiceGrpc.getUnaryRpcMethod(), handler(SimpleServiceGrpc.getUnaryRpcMethod()));
            b.addMethod(SimpleServiceGrpc.getClientStreamingRpcMethod(), handler(SimpleServiceGrpc.getClientStreamingRpcMethod()));
            b.addMethod(SimpleServiceGrpc.getServerStreamingRpcMethod(), handler(SimpleServiceGrpc.getServerStreamingRpcMethod()));
            b.addMethod(SimpleServiceGrpc.getBidiStreamingRpcMethod(), handler(SimpleServiceGrpc.getBidiStreamingRpcMethod()));
            return b.build();
        }

        private ServerCallHandler<SimpleRequest, SimpleResponse> handler(MethodDescriptor<SimpleRequest, SimpleResponse> m) {
            return (call, headers) -> server.startCall(m, call, headers);
        }
    }

    private ScriptedServer(Server server, String inProcessName, Holder unused) {
        this.server = server;
        this.inProcessName = inProcessName;
    }

    /** Answers every arrival with {@code script} from now on. */
    public ScriptedServer script(Function<Arrival, Action> script) {
        this.script = script;
        return this;
    }

    public List<Arrival> arrivals() {
        return new ArrayList<>(arrivals);
    }

    public int arrivalCount() {
        return arrivalCount.get();
    }

    /** Forgets recorded arrivals (the script stays). */
    public void reset() {
        arrivals.clear();
        arrivalCount.set(0);
    }

    public int port() {
        return server.getPort();
    }

    public String inProcessName() {
        return inProcessName;
    }

    /** A target string a channel builder accepts: {@code 127.0.0.1:port} for Netty. */
    public String target() {
        return "127.0.0.1:" + server.getPort();
    }

    /**
     * Graceful shutdown: the server sends GOAWAY, refuses new streams and lets the calls in flight
     * finish; waits up to {@code timeoutMillis} for them, then forces the rest.
     */
    public void shutdownGracefully(long timeoutMillis) {
        server.shutdown();
        try {
            if (!server.awaitTermination(timeoutMillis, TimeUnit.MILLISECONDS)) {
                server.shutdownNow();
                server.awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        timers.shutdownNow();
    }

    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        timers.shutdownNow();
    }

    private ServerCall.Listener<SimpleRequest> startCall(MethodDescriptor<SimpleRequest, SimpleResponse> method,
            ServerCall<SimpleRequest, SimpleResponse> call, Metadata headers) {
        int index = arrivalCount.incrementAndGet();
        String prev = headers.get(PREVIOUS_ATTEMPTS);
        Arrival arrival = new Arrival(method.getBareMethodName(), index, System.nanoTime(),
                prev == null ? null : Integer.valueOf(prev), headers);
        arrivals.add(arrival);
        Action action;
        try {
            action = script.apply(arrival);
        } catch (RuntimeException e) {
            action = Action.fail(Status.Code.INTERNAL);
        }
        return new ScriptedCall(method.getType(), call, arrival, action).start();
    }

    private final class ScriptedCall extends ServerCall.Listener<SimpleRequest> {
        private final MethodDescriptor.MethodType type;
        private final ServerCall<SimpleRequest, SimpleResponse> call;
        private final Arrival arrival;
        private final Action action;
        private boolean closed;

        ScriptedCall(MethodDescriptor.MethodType type, ServerCall<SimpleRequest, SimpleResponse> call, Arrival arrival,
                Action action) {
            this.type = type;
            this.call = call;
            this.arrival = arrival;
            this.action = action;
        }

        ScriptedCall start() {
            call.request(Integer.MAX_VALUE);
            if (action.failure != null && !action.failOnHalfClose) {
                later(this::fail);
            }
            return this;
        }

        private void later(Runnable r) {
            if (action.delayMillis > 0) {
                timers.schedule(() -> {
                    synchronized (this) {
                        r.run();
                    }
                }, action.delayMillis, TimeUnit.MILLISECONDS);
            } else {
                synchronized (this) {
                    r.run();
                }
            }
        }

        private void fail() {
            if (closed || arrival.cancelled) {
                return;
            }
            closed = true;
            try {
                if (action.headersFirst) {
                    call.sendHeaders(new Metadata());
                }
                Metadata trailers = new Metadata();
                for (String p : action.pushback) {
                    trailers.put(PUSHBACK, p);
                }
                call.close(Status.fromCode(action.failure).withDescription(action.description != null ? action.description
                        : "scripted failure #" + arrival.index), trailers);
                arrival.closedByServer = true;
            } catch (IllegalStateException ignored) {
                // already cancelled by the client
            }
        }

        @Override
        public synchronized void onMessage(SimpleRequest message) {
            arrival.messages.add(message.getRequestMessage());
            if (type == MethodDescriptor.MethodType.BIDI_STREAMING && action.failure == null && !closed) {
                ensureHeaders();
                call.sendMessage(SimpleResponse.newBuilder().setResponseMessage(message.getRequestMessage()).build());
            }
        }

        private boolean headersSent;

        private void ensureHeaders() {
            if (!headersSent) {
                headersSent = true;
                call.sendHeaders(new Metadata());
            }
        }

        @Override
        public void onHalfClose() {
            arrival.halfClosed = true;
            if (action.failure != null) {
                if (action.failOnHalfClose) {
                    later(this::fail);
                }
                return;
            }
            later(this::succeed);
        }

        private void succeed() {
            if (closed || arrival.cancelled) {
                return;
            }
            closed = true;
            try {
                ensureHeaders();
                switch (type) {
                    case UNARY, CLIENT_STREAMING -> call.sendMessage(
                            SimpleResponse.newBuilder().setResponseMessage(String.join(",", arrival.messages)).build());
                    case SERVER_STREAMING -> {
                        String prefix = arrival.headers.get(RESPONSE_PREFIX);
                        for (int i = 0; i < action.responses; i++) {
                            call.sendMessage(SimpleResponse.newBuilder()
                                    .setResponseMessage(prefix == null ? "r" + i : prefix + "r" + i).build());
                        }
                        if (action.failAfterResponses != null) {
                            call.close(Status.fromCode(action.failAfterResponses), new Metadata());
                            arrival.closedByServer = true;
                            return;
                        }
                    }
                    default -> {
                    }
                }
                call.close(Status.OK, new Metadata());
                arrival.closedByServer = true;
            } catch (IllegalStateException ignored) {
                // already cancelled by the client
            }
        }

        @Override
        public void onCancel() {
            arrival.cancelled = true;
        }
    }

    /** One attempt as the server saw it. */
    public static final class Arrival {
        public final String method;
        /** 1-based arrival number across all methods since start or {@link #reset()}. */
        public final int index;
        public final long nanoTime;
        /** The {@code grpc-previous-rpc-attempts} header, null when absent. */
        public final Integer previousAttempts;
        public final Metadata headers;
        public final List<String> messages = java.util.Collections.synchronizedList(new ArrayList<>());
        public volatile boolean halfClosed;
        public volatile boolean cancelled;
        /** The server closed the call (with its scripted status); an arrival neither closed nor cancelled is still running. */
        public volatile boolean closedByServer;
        /**
         * Time left to the call's deadline as the server saw it on arrival (from the call's gRPC
         * Context), null when the call had no deadline.
         */
        public final Long deadlineRemainingNanos = remainingOfCurrentContext();

        private static Long remainingOfCurrentContext() {
            io.grpc.Deadline d = io.grpc.Context.current().getDeadline();
            return d == null ? null : d.timeRemaining(TimeUnit.NANOSECONDS);
        }

        Arrival(String method, int index, long nanoTime, Integer previousAttempts, Metadata headers) {
            this.method = method;
            this.index = index;
            this.nanoTime = nanoTime;
            this.previousAttempts = previousAttempts;
            this.headers = headers;
        }

        public String header(String name) {
            return headers.get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
        }
    }

    /** How the server answers one arrival. Immutable; build with the static factories and withers. */
    public static final class Action {
        final Status.Code failure;
        final boolean failOnHalfClose;
        final boolean headersFirst;
        final List<String> pushback;
        final long delayMillis;
        final int responses;
        final Status.Code failAfterResponses;
        /** The failure's description (null: "scripted failure #" and the arrival's number). */
        final String description;

        private Action(Status.Code failure, boolean failOnHalfClose, boolean headersFirst, List<String> pushback,
                long delayMillis, int responses, Status.Code failAfterResponses, String description) {
            this.failure = failure;
            this.failOnHalfClose = failOnHalfClose;
            this.headersFirst = headersFirst;
            this.pushback = pushback;
            this.delayMillis = delayMillis;
            this.responses = responses;
            this.failAfterResponses = failAfterResponses;
            this.description = description;
        }

        /** Succeed (server-streaming: 3 responses). */
        public static Action ok() {
            return new Action(null, false, false, List.of(), 0, 3, null, null);
        }

        /** Fail at once with {@code code}, before reading any request. */
        public static Action fail(Status.Code code) {
            return new Action(code, false, false, List.of(), 0, 0, null, null);
        }

        /** Fail with {@code code} after the client half-closed (all request messages were received). */
        public static Action failOnHalfClose(Status.Code code) {
            return new Action(code, true, false, List.of(), 0, 0, null, null);
        }

        /** Send response headers before failing (an A6 client is committed by them). */
        public Action headersFirst() {
            return new Action(failure, failOnHalfClose, true, pushback, delayMillis, responses, failAfterResponses,
                    description);
        }

        /** Add one {@code grpc-retry-pushback-ms} trailer value per argument. */
        public Action pushback(String... values) {
            return new Action(failure, failOnHalfClose, headersFirst, List.of(values), delayMillis, responses,
                    failAfterResponses, description);
        }

        /** Answer only after {@code millis}. */
        public Action delay(long millis) {
            return new Action(failure, failOnHalfClose, headersFirst, pushback, millis, responses, failAfterResponses,
                    description);
        }

        /** Server-streaming: number of response messages. */
        public Action responses(int n) {
            return new Action(failure, failOnHalfClose, headersFirst, pushback, delayMillis, n, failAfterResponses,
                    description);
        }

        /** The failure's status carries {@code text} as its description. */
        public Action described(String text) {
            return new Action(failure, failOnHalfClose, headersFirst, pushback, delayMillis, responses, failAfterResponses,
                    text);
        }

        /** Server-streaming: after the responses, close with {@code code} instead of OK. */
        public Action thenFail(Status.Code code) {
            return new Action(failure, failOnHalfClose, headersFirst, pushback, delayMillis, responses, code,
                    description);
        }
    }

    /** Common scripts. */
    public static Function<Arrival, Action> failFirst(int n, Status.Code code) {
        return a -> a.index <= n ? Action.fail(code) : Action.ok();
    }

    public static Function<Arrival, Action> always(Status.Code code) {
        return a -> Action.fail(code);
    }
}
