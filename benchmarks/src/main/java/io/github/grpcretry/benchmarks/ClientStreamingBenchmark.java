package io.github.grpcretry.benchmarks;

import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Success path of a client stream of {@code messages} requests (1,000 unless {@code -p messages=N};
 * the server answers only after half-close, so the retrying engines hold every request for replay
 * until that answer commits the call). What a held request retains on the heap is measured by
 * {@link BufferProbe}.
 */
@State(Scope.Benchmark)
public class ClientStreamingBenchmark extends StreamingBenchmark {

    @Param({"1000"})
    public int messages;

    private SimpleServiceGrpc.SimpleServiceStub stub;

    @Override
    void connect(Channel channel) throws InterruptedException {
        stub = SimpleServiceGrpc.newStub(channel).withExecutor(DIRECT);
        String answer = stream().getResponseMessage();
        if (!Integer.toString(messages).equals(answer)) {
            throw new IllegalStateException("server counted " + answer + " messages");
        }
    }

    @Benchmark
    public SimpleResponse clientStream() throws InterruptedException {
        return stream();
    }

    private SimpleResponse stream() throws InterruptedException {
        Responses<SimpleResponse> response = new Responses<>();
        StreamObserver<SimpleRequest> requests = stub.clientStreamingRpc(response);
        for (int i = 0; i < messages; i++) {
            requests.onNext(BenchConfig.REQUEST);
        }
        requests.onCompleted();
        return response.closed().last();
    }
}
