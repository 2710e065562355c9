package io.github.grpcretry.sample.lab;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.ServiceConfig;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The adaptive hedging delay against a latency shift (docs/benchmarks.md, "Adaptive hedging under a latency
 * shift"): a server whose attempts take a typical latency with a 2 % tail at 500 ms, the typical latency
 * quadrupling (5 ms, then 20 ms) between two phases of equal length; the same seeded load through three channels
 * of the interceptor engine: no hedging, a fixed delay tuned for the first phase, and the adaptive delay. Prints
 * p50, p99, p99.9 and the extra load (hedges per call) of each phase.
 *
 * <p>{@code --lab.calls=10000} calls per phase at {@code --lab.rate=1000} calls per second (open loop),
 * {@code --lab.seed=29}.
 */
public final class AdaptiveHedgingLab {

    private static final String SERVICE = "lab.Latency";
    private static final MethodDescriptor<byte[], byte[]> CALL = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Call"))
            .setRequestMarshaller(Bytes.INSTANCE)
            .setResponseMarshaller(Bytes.INSTANCE)
            .build();
    static final double TAIL_SHARE = 0.02;
    static final long TAIL_MS = 500;
    static final long[] TYPICAL_MS = {5, 20};
    /** The fixed delay: above the first phase's typical latency, well under its tail. */
    static final Duration FIXED_DELAY = Duration.ofMillis(10);
    static final AdaptiveHedgingPolicy ADAPTIVE = new AdaptiveHedgingPolicy(0.05, Duration.ofMillis(1), null, 200,
            Duration.ofSeconds(2));

    private AdaptiveHedgingLab() {
    }

    /** The figures of one phase of one channel. */
    record Phase(String channel, int phase, long typicalMs, int calls, long[] latenciesMicros, long hedges) {

        double quantileMs(double q) {
            long[] sorted = latenciesMicros.clone();
            Arrays.sort(sorted);
            int i = (int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
            return sorted[i] / 1000.0;
        }

        double extraLoad() {
            return (double) hedges / calls;
        }
    }

    public static void main(String[] args) throws Exception {
        int calls = Integer.parseInt(LabArgs.value(args, "calls", "10000"));
        int rate = Integer.parseInt(LabArgs.value(args, "rate", "1000"));
        long seed = LabArgs.seed(args, 29);
        System.out.println(table(run(calls, rate, seed), calls, rate, seed));
    }

    static List<Phase> run(int calls, int rate, long seed) throws Exception {
        String name = "adaptive-lab-" + System.nanoTime();
        ScheduledExecutorService answers = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "lab-server");
            t.setDaemon(true);
            return t;
        });
        LatencyScript script = new LatencyScript(seed);
        Server server = InProcessServerBuilder.forName(name).executor(answers)
                .addService(ServerServiceDefinition.builder(SERVICE)
                        .addMethod(CALL, ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> out) ->
                                answers.schedule(() -> answer(out), script.nextMicros(), TimeUnit.MICROSECONDS)))
                        .build())
                .build().start();
        RetryScheduler timers = RetryScheduler.create(1, "lab-timers");
        try {
            List<Phase> out = new java.util.ArrayList<>();
            out.addAll(runChannel("no hedging", null, null, name, script, calls, rate, seed, timers));
            out.addAll(runChannel("fixed " + FIXED_DELAY.toMillis() + " ms", FIXED_DELAY, null, name, script, calls, rate,
                    seed, timers));
            out.addAll(runChannel("adaptive", FIXED_DELAY, ADAPTIVE, name, script, calls, rate, seed, timers));
            return out;
        } finally {
            timers.close();
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            answers.shutdownNow();
        }
    }

    private static void answer(StreamObserver<byte[]> out) {
        try {
            out.onNext(new byte[0]);
            out.onCompleted();
        } catch (RuntimeException cancelled) {
            // the attempt lost to a hedge: cancelled meanwhile
        }
    }

    private static List<Phase> runChannel(String label, Duration delay, AdaptiveHedgingPolicy adaptive, String server,
            LatencyScript script, int calls, int rate, long seed, RetryScheduler timers) throws Exception {
        ServiceConfig sc = new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.of(SERVICE, null)), null,
                null, null, null, null, delay == null ? null : new HedgingPolicy(2, delay, Set.of(Status.Code.UNAVAILABLE)))),
                null);
        ChannelRetryConfig config = ChannelRetryConfig.of(label, sc).withAdaptiveHedging(adaptive);
        AtomicLong hedges = new AtomicLong();
        RetryEventListener countHedges = new RetryEventListener() {
            @Override
            public void attemptStarted(CallTarget target, AttemptKind kind, int attemptNumber) {
                if (kind == AttemptKind.HEDGE) {
                    hedges.incrementAndGet();
                }
            }
        };
        ManagedChannel channel = InProcessChannelBuilder.forName(server)
                .intercept(RetryingClientInterceptor.builder(config).eventListener(countHedges).scheduler(timers)
                        .adaptiveHedging(new AdaptiveHedgingRegistry()).build())
                .build();
        try {
            List<Phase> phases = new java.util.ArrayList<>();
            script.reset(seed);
            for (int p = 0; p < TYPICAL_MS.length; p++) {
                script.typicalMs(TYPICAL_MS[p]);
                long before = hedges.get();
                long[] latencies = load(channel, calls, rate);
                phases.add(new Phase(label, p + 1, TYPICAL_MS[p], calls, latencies, hedges.get() - before));
            }
            return phases;
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** {@code calls} calls at {@code rate} per second (open loop); each call's latency in microseconds. */
    private static long[] load(ManagedChannel channel, int calls, int rate) throws InterruptedException {
        long[] latencies = new long[calls];
        CountDownLatch done = new CountDownLatch(calls);
        long start = System.nanoTime();
        long interval = TimeUnit.SECONDS.toNanos(1) / rate;
        for (int i = 0; i < calls; i++) {
            long due = start + i * interval;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            int index = i;
            long sent = System.nanoTime();
            ClientCalls.asyncUnaryCall(channel.newCall(CALL, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)),
                    new byte[0], new StreamObserver<>() {
                        @Override
                        public void onNext(byte[] value) {
                        }

                        @Override
                        public void onError(Throwable t) {
                            latencies[index] = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - sent);
                            done.countDown();
                        }

                        @Override
                        public void onCompleted() {
                            latencies[index] = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - sent);
                            done.countDown();
                        }
                    });
        }
        if (!done.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("calls did not end");
        }
        return latencies;
    }

    static String table(List<Phase> phases, int calls, int rate, long seed) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%d calls per phase at %d/s, seed %d; attempts: %.0f %% at %d ms, the rest"
                + " at the typical latency × U(0.8, 1.2)%n%n", calls, rate, seed, TAIL_SHARE * 100, TAIL_MS));
        sb.append("| channel | phase (typical) | p50 ms | p99 ms | p99.9 ms | extra load |\n");
        sb.append("|---|---|---:|---:|---:|---:|\n");
        for (Phase p : phases) {
            sb.append(String.format(Locale.ROOT, "| %s | %d (%d ms) | %.1f | %.1f | %.1f | %.3f |%n", p.channel(),
                    p.phase(), p.typicalMs(), p.quantileMs(0.5), p.quantileMs(0.99), p.quantileMs(0.999), p.extraLoad()));
        }
        return sb.toString();
    }

    /** Each attempt's latency: the tail with its share, else the typical latency × U(0.8, 1.2); seeded. */
    static final class LatencyScript {
        private SplittableRandom random;
        private volatile long typicalMicros;

        LatencyScript(long seed) {
            reset(seed);
        }

        synchronized void reset(long seed) {
            random = new SplittableRandom(seed);
        }

        void typicalMs(long ms) {
            typicalMicros = ms * 1000;
        }

        synchronized long nextMicros() {
            if (random.nextDouble() < TAIL_SHARE) {
                return TAIL_MS * 1000;
            }
            return (long) (typicalMicros * random.nextDouble(0.8, 1.2));
        }
    }

    /** Raw bytes as the message. */
    private enum Bytes implements MethodDescriptor.Marshaller<byte[]> {
        INSTANCE;

        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
