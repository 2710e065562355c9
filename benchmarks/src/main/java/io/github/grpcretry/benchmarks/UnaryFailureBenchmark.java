package io.github.grpcretry.benchmarks;

import io.github.resilience4j.retry.Retry;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * Failure path: the server answers 20 % of unary arrivals with UNAVAILABLE (seeded sequence), the
 * policy retries them after a 1 ms backoff (× U(0.8, 1.2)). Ops are logical calls; the aux counters
 * {@code attempts} (attempts/ms, counted from the server's echo of {@code grpc-previous-rpc-attempts},
 * or from the supplier's invocations for resilience4j) and {@code failedCalls} (calls that ran out
 * of attempts) are rates over the same time. (b) grpc-java, (c) interceptor engine, (d) resilience4j.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@Threads(1)
public class UnaryFailureBenchmark {

    static final int FAIL_PERCENT = 20;

    @Param({"IN_PROCESS", "NETTY"})
    public Transport transport;

    @Param({"NATIVE", "INTERCEPTOR", "R4J"})
    public Variant client;

    EchoServer server;
    Clients.Client channel;
    SimpleServiceGrpc.SimpleServiceBlockingStub stub;
    Retry retry;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        server = EchoServer.start(transport, FAIL_PERCENT);
        channel = Clients.open(client, server, transport);
        stub = SimpleServiceGrpc.newBlockingStub(channel.channel());
        retry = client == Variant.R4J ? Retry.of("bench", BenchConfig.resilience4jConfig()) : null;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        channel.close();
        server.close();
    }

    /** Per-thread counters, reported by JMH as rates next to the call rate. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Counters {
        public long attempts;
        public long failedCalls;
        Supplier<SimpleResponse> call;

        @Setup(Level.Trial)
        public void setUp(UnaryFailureBenchmark bench) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = bench.stub;
            if (bench.retry != null) {
                // resilience4j: every invocation of the supplier is one attempt
                call = Retry.decorateSupplier(bench.retry, () -> {
                    attempts++;
                    return stub.unaryRpc(BenchConfig.REQUEST);
                });
            } else {
                // the engines: the server echoes grpc-previous-rpc-attempts of the attempt that succeeded
                call = () -> {
                    SimpleResponse r = stub.unaryRpc(BenchConfig.REQUEST);
                    attempts += 1 + parseSmall(r.getResponseMessage());
                    return r;
                };
            }
        }

        @Setup(Level.Iteration)
        public void reset() {
            attempts = 0;
            failedCalls = 0;
        }
    }

    static int parseSmall(String digits) {
        int v = 0;
        for (int i = 0; i < digits.length(); i++) {
            v = v * 10 + (digits.charAt(i) - '0');
        }
        return v;
    }

    @Benchmark
    public Object unaryWithFailures(Counters counters) {
        try {
            return counters.call.get();
        } catch (StatusRuntimeException e) {
            counters.failedCalls++;
            if (retry == null) {
                counters.attempts += BenchConfig.MAX_ATTEMPTS; // ran out of attempts (or was throttled)
            }
            return e;
        }
    }
}
