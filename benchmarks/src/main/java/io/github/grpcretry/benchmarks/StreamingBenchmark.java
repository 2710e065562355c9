package io.github.grpcretry.benchmarks;

import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
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
 * server and channel for the trial, and one whole stream before measuring. The stubs run the
 * application's callbacks on the transport's thread (a direct executor, as for callbacks that do
 * not block), so what a message costs is not buried under a hand-off to another thread per message.
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

    static final Executor DIRECT = Runnable::run;

    /** Makes the stub on {@code channel} and runs one whole stream, failing if it was not whole. */
    abstract void connect(Channel channel) throws Exception;

    /** The responses of one call: counts them, keeps the last, waits for the close, rethrows a failure. */
    static final class Responses<T> extends CountDownLatch implements StreamObserver<T> {
        private int count;
        private @Nullable T last;
        private @Nullable Throwable error;

        Responses() {
            super(1);
        }

        @Override
        public void onNext(T value) {
            count++;
            last = value;
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

        /** Waits up to 10 s for the close (the count and last response are then safe to read). */
        Responses<T> closed() throws InterruptedException {
            if (!await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no close in 10 s");
            }
            if (error != null) {
                throw new IllegalStateException(error);
            }
            return this;
        }

        int count() {
            return count;
        }

        T last() {
            if (last == null) {
                throw new IllegalStateException("closed without a response");
            }
            return last;
        }
    }
}
