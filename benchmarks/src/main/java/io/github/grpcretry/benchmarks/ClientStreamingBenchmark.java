package io.github.grpcretry.benchmarks;

import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Success path of a client stream of {@code messages} requests (1,000 unless {@code -p messages=N};
 * the server answers only after half-close, so the retrying engines hold every request for replay
 * until that answer commits the call): (a) bare, (b) grpc-java's retry, (c) interceptor engine;
 * in-process and Netty loopback; one op = one whole stream. What a held request retains on the heap
 * is measured by {@link BufferProbe}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@Threads(1)
public class ClientStreamingBenchmark {

    @Param({"IN_PROCESS", "NETTY"})
    public Transport transport;

    @Param({"BARE", "NATIVE", "INTERCEPTOR"})
    public Variant client;

    @Param({"1000"})
    public int messages;

    private EchoServer server;
    private Clients.Client channel;
    private SimpleServiceGrpc.SimpleServiceStub stub;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        server = EchoServer.start(transport, 0);
        channel = Clients.open(client, server, transport);
        stub = SimpleServiceGrpc.newStub(channel.channel());
        String answer = stream().getResponseMessage();
        if (!Integer.toString(messages).equals(answer)) {
            throw new IllegalStateException("server counted " + answer + " messages");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        channel.close();
        server.close();
    }

    @Benchmark
    public SimpleResponse clientStream() throws InterruptedException {
        return stream();
    }

    private SimpleResponse stream() throws InterruptedException {
        Response response = new Response();
        StreamObserver<SimpleRequest> requests = stub.clientStreamingRpc(response);
        for (int i = 0; i < messages; i++) {
            requests.onNext(BenchConfig.REQUEST);
        }
        requests.onCompleted();
        return response.result();
    }

    /** The stream's one response: waits for the close, rethrows a failure. */
    static final class Response extends CountDownLatch implements StreamObserver<SimpleResponse> {
        private SimpleResponse value;
        private Throwable error;

        Response() {
            super(1);
        }

        @Override
        public void onNext(SimpleResponse v) {
            value = v;
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            countDown();
        }

        @Override
        public void onCompleted() {
            countDown();
        }

        SimpleResponse result() throws InterruptedException {
            if (!await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no response in 10 s");
            }
            if (error != null) {
                throw new IllegalStateException(error);
            }
            return value;
        }
    }
}
