package io.github.grpcretry.benchmarks;

import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.Iterator;
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
 * Success path of a server stream of {@value EchoServer#STREAM_RESPONSES} responses read through a
 * blocking stub's iterator (which asks for one message at a time): (a) bare, (b) grpc-java's retry,
 * (c) interceptor engine; in-process and Netty loopback; one op = one whole stream. The response
 * headers arrive with the first message and commit the call, so all but the first message measure
 * what a retrying engine costs after commit (delivery and demand passed through).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@Threads(1)
public class ServerStreamingBenchmark {

    @Param({"IN_PROCESS", "NETTY"})
    public Transport transport;

    @Param({"BARE", "NATIVE", "INTERCEPTOR"})
    public Variant client;

    private EchoServer server;
    private Clients.Client channel;
    private SimpleServiceGrpc.SimpleServiceBlockingStub stub;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        server = EchoServer.start(transport, 0);
        channel = Clients.open(client, server, transport);
        stub = SimpleServiceGrpc.newBlockingStub(channel.channel());
        int received = serverStream();
        if (received != EchoServer.STREAM_RESPONSES) {
            throw new IllegalStateException("received " + received + " of " + EchoServer.STREAM_RESPONSES);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        channel.close();
        server.close();
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
