package io.github.grpcretry.benchmarks;

import io.github.resilience4j.retry.Retry;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
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
 * Success path of a unary echo through a blocking stub: (a) bare channel, (b) grpc-java's retry,
 * (c) the interceptor engine, (d) resilience4j around the blocking stub, and (e) a forwarding
 * interceptor (the floor any interceptor pays, for reference); in-process and Netty
 * loopback; one and two calling threads. Throughput in calls/ms; latency percentiles (SampleTime)
 * with one thread (with two, on a two-core machine that also runs the server, percentiles mostly
 * show the scheduler). Warm-up is long because Netty's path needs ~6 s of JIT on a busy machine.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 8, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class UnaryBenchmark {

    @Param({"IN_PROCESS", "NETTY"})
    public Transport transport;

    @Param({"BARE", "NATIVE", "INTERCEPTOR", "R4J", "FORWARDING"})
    public Variant client;

    private EchoServer server;
    private Clients.Client channel;
    private Supplier<SimpleResponse> call;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        server = EchoServer.start(transport, 0);
        channel = Clients.open(client, server, transport);
        SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(channel.channel());
        Supplier<SimpleResponse> plain = () -> stub.unaryRpc(BenchConfig.REQUEST);
        call = client == Variant.R4J
                ? Retry.decorateSupplier(Retry.of("bench", BenchConfig.resilience4jConfig()), plain)
                : plain;
        call.get(); // connect before measuring
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        channel.close();
        server.close();
    }

    /** Throughput and, in a second fork, latency percentiles. */
    @Benchmark
    @Threads(1)
    @BenchmarkMode({Mode.Throughput, Mode.SampleTime})
    public SimpleResponse unary1Thread() {
        return call.get();
    }

    @Benchmark
    @Threads(2)
    public SimpleResponse unary2Threads() {
        return call.get();
    }
}
