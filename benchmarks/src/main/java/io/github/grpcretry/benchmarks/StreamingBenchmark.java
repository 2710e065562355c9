package io.github.grpcretry.benchmarks;

import io.grpc.Channel;
import java.util.concurrent.TimeUnit;
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
 * What the streaming benchmarks share: (a) bare, (b) grpc-java's retry and (c) the interceptor
 * engine, in-process and over Netty loopback, one calling thread, one op = one whole stream; the
 * server and channel for the trial, and one whole stream before measuring.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@Threads(1)
public abstract class StreamingBenchmark {

    @Param({"IN_PROCESS", "NETTY"})
    public Transport transport;

    @Param({"BARE", "NATIVE", "INTERCEPTOR"})
    public Variant client;

    private EchoServer server;
    private Clients.Client channel;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        server = EchoServer.start(transport, 0);
        channel = Clients.open(client, server, transport);
        connect(channel.channel());
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        channel.close();
        server.close();
    }

    /** Makes the stub on {@code channel} and runs one whole stream, failing if it was not whole. */
    abstract void connect(Channel channel) throws Exception;
}
