package io.github.grpcretry.benchmarks;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The server side of every benchmark: grpc.testing.SimpleService on a real in-process or Netty
 * loopback server (direct executor, so the server adds as little as possible around the client).
 *
 * <ul>
 *   <li>unary: echoes the request message; with a failure share set, answers that share of the
 *       arrivals with UNAVAILABLE instead, chosen by a seeded hash of the arrival number (the same
 *       sequence in every run) and otherwise answers with the arrival's
 *       {@code grpc-previous-rpc-attempts} (so the client can count attempts);</li>
 *   <li>server streaming: answers any request with {@value #STREAM_RESPONSES} responses of 64
 *       characters and OK, written at once (the transport's flow control paces them);</li>
 *   <li>client streaming: counts the messages and answers with the count on half-close (nothing
 *       before it, so a retrying client holds every message until then); when started with a
 *       receipt signal, releases one permit per message received.</li>
 * </ul>
 */
final class EchoServer implements AutoCloseable {

    static final long SEED = 0x5eed_9e37_79b9_7f4aL;
    static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    private static final Context.Key<String> PREVIOUS = Context.key("previous-attempts");
    /** One shared exception: the server needs no stack trace to send a status. */
    private static final StatusRuntimeException UNAVAILABLE =
            Status.UNAVAILABLE.withDescription("scripted failure").asRuntimeException();
    private static final SimpleResponse[] PREVIOUS_RESPONSES = new SimpleResponse[8];
    static final int STREAM_RESPONSES = 1000;
    private static final SimpleResponse STREAM_RESPONSE =
            SimpleResponse.newBuilder().setResponseMessage(BenchConfig.REQUEST.getRequestMessage()).build();

    static {
        for (int i = 0; i < PREVIOUS_RESPONSES.length; i++) {
            PREVIOUS_RESPONSES[i] = SimpleResponse.newBuilder().setResponseMessage(Integer.toString(i)).build();
        }
    }

    private final Server server;
    private final String inProcessName;
    private final AtomicLong arrivals = new AtomicLong();

    private EchoServer(Server server, String inProcessName) {
        this.server = server;
        this.inProcessName = inProcessName;
    }

    /**
     * @param failPercent share of unary arrivals answered UNAVAILABLE (0 = never)
     */
    static EchoServer start(Transport transport, int failPercent) throws IOException {
        return start(transport, failPercent, null);
    }

    /**
     * @param received released once per client-streamed message the service has read, or {@code null}
     */
    static EchoServer start(Transport transport, int failPercent, @Nullable Semaphore received) throws IOException {
        String name = null;
        ServerBuilder<?> builder;
        if (transport == Transport.IN_PROCESS) {
            name = "bench-" + System.nanoTime();
            builder = InProcessServerBuilder.forName(name);
        } else {
            builder = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0));
        }
        EchoServer[] self = new EchoServer[1];
        Service service = new Service(failPercent, () -> self[0].arrivals.getAndIncrement(), received);
        builder.directExecutor();
        if (failPercent > 0) {
            builder.addService(ServerInterceptors.intercept(service, new PreviousAttemptsInterceptor()));
        } else {
            builder.addService(service);
        }
        Server server = builder.build().start();
        self[0] = new EchoServer(server, name);
        return self[0];
    }

    String inProcessName() {
        return inProcessName;
    }

    int port() {
        return server.getPort();
    }

    long arrivals() {
        return arrivals.get();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }

    /** Whether arrival {@code n} fails: a seeded 64-bit mix of n, compared against the share. */
    static boolean fails(long n, int failPercent) {
        if (failPercent <= 0) {
            return false;
        }
        long z = n * 0x9e3779b97f4a7c15L + SEED;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        z ^= z >>> 31;
        return Long.remainderUnsigned(z, 100) < failPercent;
    }

    private interface Counter {
        long next();
    }

    private static final class Service extends SimpleServiceGrpc.SimpleServiceImplBase {
        private final int failPercent;
        private final Counter counter;
        private final @Nullable Semaphore received;

        Service(int failPercent, Counter counter, @Nullable Semaphore received) {
            this.failPercent = failPercent;
            this.counter = counter;
            this.received = received;
        }

        @Override
        public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> responseObserver) {
            if (failPercent <= 0) {
                responseObserver.onNext(SimpleResponse.newBuilder()
                        .setResponseMessage(request.getRequestMessage())
                        .build());
                responseObserver.onCompleted();
                return;
            }
            if (fails(counter.next(), failPercent)) {
                responseObserver.onError(UNAVAILABLE);
                return;
            }
            String previous = PREVIOUS.get();
            int p = previous == null ? 0 : Integer.parseInt(previous);
            responseObserver.onNext(PREVIOUS_RESPONSES[Math.min(p, PREVIOUS_RESPONSES.length - 1)]);
            responseObserver.onCompleted();
        }

        @Override
        public void serverStreamingRpc(SimpleRequest request, StreamObserver<SimpleResponse> responseObserver) {
            for (int i = 0; i < STREAM_RESPONSES; i++) {
                responseObserver.onNext(STREAM_RESPONSE);
            }
            responseObserver.onCompleted();
        }

        @Override
        public StreamObserver<SimpleRequest> clientStreamingRpc(StreamObserver<SimpleResponse> responseObserver) {
            return new StreamObserver<>() {
                private int messages;

                @Override
                public void onNext(SimpleRequest value) {
                    messages++;
                    if (received != null) {
                        received.release();
                    }
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    responseObserver.onNext(SimpleResponse.newBuilder()
                            .setResponseMessage(Integer.toString(messages))
                            .build());
                    responseObserver.onCompleted();
                }
            };
        }
    }

    /** Hands the arrival's {@code grpc-previous-rpc-attempts} to the service through the Context. */
    private static final class PreviousAttemptsInterceptor implements ServerInterceptor {
        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                ServerCallHandler<ReqT, RespT> next) {
            String previous = headers.get(PREVIOUS_ATTEMPTS);
            if (previous == null) {
                return next.startCall(call, headers);
            }
            return Contexts.interceptCall(Context.current().withValue(PREVIOUS, previous), call, headers, next);
        }
    }
}
