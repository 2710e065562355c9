package io.github.grpcretry.benchmarks;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcClientInterceptor;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The CPU time and bytes per unary call of {@link ObservationBenchmark}'s configurations, measured on
 * the calling thread in one JVM, the configurations in alternating batches: in-process with a
 * direct-executor server and a blocking stub the whole call runs on that thread, so its CPU time
 * ({@code ThreadMXBean.getCurrentThreadCpuTime}) counts the call's work and not the time the thread
 * waited for a core, and the JIT state is shared by all configurations. What a loaded machine does to
 * JMH's throughput (forks compiled differently, minutes of drift) mostly falls out. Configurations:
 * {@code engine} (the interceptor engine alone, no observation), {@code call} (plus Micrometer's gRPC
 * client observation with spans through the OpenTelemetry bridge: observation switched off in the
 * engine) and {@code attempts} (plus the engine's per-attempt observation).
 *
 * <p>{@code java -cp benchmarks/target/benchmarks.jar io.github.grpcretry.benchmarks.ObservationCostProbe [rounds]}
 */
public final class ObservationCostProbe {

    private static final int WARM_CALLS = 60_000;
    private static final int BATCH = 5_000;

    private ObservationCostProbe() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().getId();
        String[] names = {"engine", "call", "attempts"};
        try (EchoServer server = EchoServer.start(Transport.IN_PROCESS, 0);
                SdkTracerProvider provider = SdkTracerProvider.builder().setSampler(Sampler.alwaysOn()).build()) {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(ObservationBenchmark.tracing(provider));
            List<ManagedChannel> channels = new ArrayList<>();
            List<SimpleServiceGrpc.SimpleServiceBlockingStub> stubs = new ArrayList<>();
            for (int i = 0; i < names.length; i++) {
                ManagedChannel ch = channel(server, registry, i >= 1, i == 2);
                channels.add(ch);
                stubs.add(SimpleServiceGrpc.newBlockingStub(ch));
            }
            for (int w = 0; w < WARM_CALLS / BATCH; w++) {
                for (SimpleServiceGrpc.SimpleServiceBlockingStub s : stubs) {
                    batch(s);
                }
            }
            double[][] cpu = new double[names.length][rounds];
            double[][] bytes = new double[names.length][rounds];
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < names.length; k++) {
                    int i = (r % 2 == 0) ? k : names.length - 1 - k; // alternate the order
                    long c0 = threads.getCurrentThreadCpuTime();
                    long b0 = threads.getThreadAllocatedBytes(self);
                    batch(stubs.get(i));
                    cpu[i][r] = (threads.getCurrentThreadCpuTime() - c0) / (double) BATCH;
                    bytes[i][r] = (threads.getThreadAllocatedBytes(self) - b0) / (double) BATCH;
                }
            }
            for (int i = 0; i < names.length; i++) {
                System.out.printf(Locale.ROOT, "%-9s cpu %8.0f ns/call (median of %d batches of %d; %.0f-%.0f)  %6.0f B/call%n",
                        names[i], median(cpu[i]), rounds, BATCH, min(cpu[i]), max(cpu[i]), median(bytes[i]));
            }
            System.out.printf(Locale.ROOT, "attempts/call cpu per call: median %.3f (%.3f-%.3f); as throughput call/attempts %.3f%n",
                    medianRatio(cpu[2], cpu[1]), minRatio(cpu[2], cpu[1]), maxRatio(cpu[2], cpu[1]),
                    1 / medianRatio(cpu[2], cpu[1]));
            System.out.printf(Locale.ROOT, "call/engine cpu per call: median %.3f (%.3f-%.3f)%n",
                    medianRatio(cpu[1], cpu[0]), minRatio(cpu[1], cpu[0]), maxRatio(cpu[1], cpu[0]));
            for (ManagedChannel ch : channels) {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private static ManagedChannel channel(EchoServer server, ObservationRegistry registry, boolean callObservation,
            boolean attempts) {
        ChannelRetryConfig config = BenchConfig.channel();
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config)
                .throttle(new RetryThrottle(config.serviceConfig().retryThrottling()))
                .budget(new RetryBudget(config.budget()))
                .eventListener(RetryEventListener.NOOP)
                .attemptObserver(attempts ? new ObservationAttemptObserver(registry) : null)
                .build();
        InProcessChannelBuilder b = InProcessChannelBuilder.forName(server.inProcessName());
        b.defaultServiceConfig(config.serviceConfig().withoutRetry().toServiceConfigMap(false)).intercept(engine);
        if (callObservation) {
            b.intercept(new ObservationGrpcClientInterceptor(registry));
        }
        return b.build();
    }

    private static void batch(SimpleServiceGrpc.SimpleServiceBlockingStub stub) {
        for (int i = 0; i < BATCH; i++) {
            stub.unaryRpc(BenchConfig.REQUEST);
        }
    }

    private static double[] ratios(double[] a, double[] b) {
        double[] r = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            r[i] = a[i] / b[i];
        }
        return r;
    }

    private static double medianRatio(double[] a, double[] b) {
        return median(ratios(a, b));
    }

    private static double minRatio(double[] a, double[] b) {
        return min(ratios(a, b));
    }

    private static double maxRatio(double[] a, double[] b) {
        return max(ratios(a, b));
    }

    private static double median(double[] v) {
        List<Double> l = new ArrayList<>();
        for (double d : v) {
            l.add(d);
        }
        Collections.sort(l);
        int n = l.size();
        return n % 2 == 1 ? l.get(n / 2) : (l.get(n / 2 - 1) + l.get(n / 2)) / 2;
    }

    private static double min(double[] v) {
        double m = Double.MAX_VALUE;
        for (double d : v) {
            m = Math.min(m, d);
        }
        return m;
    }

    private static double max(double[] v) {
        double m = -Double.MAX_VALUE;
        for (double d : v) {
            m = Math.max(m, d);
        }
        return m;
    }
}
