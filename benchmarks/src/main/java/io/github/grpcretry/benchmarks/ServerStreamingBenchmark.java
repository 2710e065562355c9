package io.github.grpcretry.benchmarks;

import io.grpc.Channel;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Success path of a server stream of {@value EchoServer#STREAM_RESPONSES} responses read through an
 * async stub (which asks for one message at a time, after each). The response headers arrive with the first message and commit the call, so all but the first message measure
 * what a retrying engine costs after commit (delivery and demand passed through).
 */
@State(Scope.Benchmark)
public class ServerStreamingBenchmark extends StreamingBenchmark {

    private SimpleServiceGrpc.SimpleServiceStub stub;

    @Override
    void connect(Channel channel) throws InterruptedException {
        stub = SimpleServiceGrpc.newStub(channel).withExecutor(DIRECT);
        int received = serverStream();
        if (received != EchoServer.STREAM_RESPONSES) {
            throw new IllegalStateException("received " + received + " of " + EchoServer.STREAM_RESPONSES);
        }
    }

    /** Reads the whole stream; returns the number of responses. */
    @Benchmark
    public int serverStream() throws InterruptedException {
        Responses<SimpleResponse> responses = new Responses<>();
        stub.serverStreamingRpc(BenchConfig.REQUEST, responses);
        return responses.closed().count();
    }
}
