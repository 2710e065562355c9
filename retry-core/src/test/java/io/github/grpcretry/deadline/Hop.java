package io.github.grpcretry.deadline;

import io.grpc.BindableService;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One layer of a service chain on a real Netty loopback server: records the deadline each arrival
 * carries (as an absolute {@code System.nanoTime()} value) and answers with its {@link Body}.
 */
final class Hop implements AutoCloseable {

    /** What the handler does; runs on the server's executor in the call's Context. */
    interface Body {
        SimpleResponse handle(SimpleRequest request) throws Exception;
    }

    final String name;
    final List<Long> deadlines = new CopyOnWriteArrayList<>();
    final AtomicInteger handled = new AtomicInteger();
    private volatile Body body = r -> SimpleResponse.newBuilder().setResponseMessage("ok").build();
    private final Server server;

    Hop(String name, ServerInterceptor... interceptors) throws IOException {
        this.name = name;
        BindableService impl = new SimpleServiceGrpc.SimpleServiceImplBase() {
            @Override
            public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
                Deadline d = Context.current().getDeadline();
                deadlines.add(d == null ? null : System.nanoTime() + d.timeRemaining(TimeUnit.NANOSECONDS));
                handled.incrementAndGet();
                SimpleResponse response;
                try {
                    response = body.handle(request);
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                observer.onNext(response);
                observer.onCompleted();
            }

            @Override
            public StreamObserver<SimpleRequest> bidiStreamingRpc(StreamObserver<SimpleResponse> observer) {
                // grpc-java invokes a streaming handler when the call starts, before any message
                Deadline d = Context.current().getDeadline();
                deadlines.add(d == null ? null : System.nanoTime() + d.timeRemaining(TimeUnit.NANOSECONDS));
                handled.incrementAndGet();
                return new StreamObserver<>() {
                    @Override
                    public void onNext(SimpleRequest value) {
                        observer.onNext(resp(value.getRequestMessage()));
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        observer.onCompleted();
                    }
                };
            }
        };
        ServerServiceDefinition def = ServerInterceptors.intercept(impl, interceptors);
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(def).build().start();
    }

    Hop body(Body b) {
        this.body = b;
        return this;
    }

    /** A Netty channel to this hop with the given client interceptors. */
    ManagedChannel channel(io.grpc.ClientInterceptor... interceptors) {
        return NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().intercept(interceptors)
                .build();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }

    static SimpleRequest req(String s) {
        return SimpleRequest.newBuilder().setRequestMessage(s).build();
    }

    static SimpleResponse resp(String s) {
        return SimpleResponse.newBuilder().setResponseMessage(s).build();
    }
}
