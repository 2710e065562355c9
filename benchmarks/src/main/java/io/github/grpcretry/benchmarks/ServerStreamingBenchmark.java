package io.github.grpcretry.benchmarks;

import io.grpc.Channel;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.Iterator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Success path of a server stream of {@value EchoServer#STREAM_RESPONSES} responses read through a
 * blocking stub's iterator (which asks for one message at a time). The response headers arrive with the first message and commit the call, so all but the first message measure
 * what a retrying engine costs after commit (delivery and demand passed through).
 */
@State(Scope.Benchmark)
public class ServerStreamingBenchmark extends StreamingBenchmark {

    private SimpleServiceGrpc.SimpleServiceBlockingStub stub;

    @Override
    void connect(Channel channel) {
        stub = SimpleServiceGrpc.newBlockingStub(channel);
        int received = serverStream();
        if (received != EchoServer.STREAM_RESPONSES) {
            throw new IllegalStateException("received " + received + " of " + EchoServer.STREAM_RESPONSES);
        }
    }

    /** Reads the whole stream; returns the number of responses (and the last one's length, so none is dead). */
    @Benchmark
    public int serverStream() {
        Iterator<SimpleResponse> responses = stub.serverStreamingRpc(BenchConfig.REQUEST);
        int n = 0;
        int chars = 0;
        while (responses.hasNext()) {
            chars = responses.next().getResponseMessage().length();
            n++;
        }
        return chars > 0 ? n : -n;
    }
}
