package io.github.grpcretry.benchmarks;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.testing.ForwardingInterceptors;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * Exact bytes allocated per unary call, by ablation, for finding where an engine's allocation goes.
 * In-process with a direct-executor server and a blocking stub, a whole call (client, transport,
 * server, response) runs on the calling thread, so {@code ThreadMXBean.getThreadAllocatedBytes} of
 * that thread counts every byte of it; no sampling. Configurations:
 *
 * <ul>
 *   <li>bare: grpc-java's defaults;</li>
 *   <li>bare + names-only method config: a methodConfig with names only (what the starter gave an
 *       interceptor-engine channel before {@code ServiceConfig.withoutRetry()} dropped such entries),
 *       grpc-java's own cost of having one;</li>
 *   <li>bare + forwarding interceptor: the least any interceptor that wraps call and listener costs;</li>
 *   <li>bare + traced forwarding interceptor: that, plus the stream tracer any engine that counts its buffer
 *       from the bytes written must give each attempt (variant f);</li>
 *   <li>interceptor engine without throttle/budget, and with both (variant c), on the channel the
 *       starter builds ({@code withoutRetry().toServiceConfigMap(false)});</li>
 *   <li>grpc-java's retry (variant b).</li>
 * </ul>
 *
 * <p>{@code java -cp benchmarks/target/benchmarks.jar io.github.grpcretry.benchmarks.AllocationProbe}
 */
public final class AllocationProbe {

    private static final int WARM_CALLS = 200_000;
    private static final int MEASURED_CALLS = 200_000;

    private AllocationProbe() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("histogram")) {
            histogram(args[1]);
            return;
        }
        for (Map.Entry<String, Long> e : measure().entrySet()) {
            System.out.printf("%-40s %6d B/call%n", e.getKey(), e.getValue());
        }
    }

    /**
     * Per-class instances and bytes per call of one configuration (by its index in {@link #setups()}),
     * from class histograms (all objects, reachable or not) before and after the measured calls. Run
     * it with a collector that never collects so nothing is lost in between:
     * {@code java -XX:+UnlockExperimentalVMOptions -XX:+UseEpsilonGC -Xmx3g -cp benchmarks.jar
     * io.github.grpcretry.benchmarks.AllocationProbe histogram 4}
     */
    static void histogram(String index) throws Exception {
        Map.Entry<String, UnaryOperator<ManagedChannelBuilder<?>>> setup =
                new java.util.ArrayList<>(setups().entrySet()).get(Integer.parseInt(index));
        int calls = 20_000;
        try (EchoServer server = EchoServer.start(Transport.IN_PROCESS, 0)) {
            ManagedChannel ch = setup.getValue().apply(InProcessChannelBuilder.forName(server.inProcessName())).build();
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(ch);
            for (int i = 0; i < 100_000; i++) {
                stub.unaryRpc(BenchConfig.REQUEST);
            }
            Map<String, long[]> before = classHistogram(true);
            for (int i = 0; i < calls; i++) {
                stub.unaryRpc(BenchConfig.REQUEST);
            }
            Map<String, long[]> after = classHistogram(true);
            System.out.println(setup.getKey() + ": instances and bytes per call, by class");
            long total = 0;
            java.util.List<Map.Entry<String, long[]>> rows = new java.util.ArrayList<>();
            for (Map.Entry<String, long[]> e : after.entrySet()) {
                long[] b = before.getOrDefault(e.getKey(), new long[2]);
                long n = e.getValue()[0] - b[0];
                long bytes = e.getValue()[1] - b[1];
                if (n * 10 >= calls) { // at least one instance per ten calls
                    rows.add(Map.entry(e.getKey(), new long[] {n, bytes}));
                }
                total += bytes;
            }
            rows.sort((x, y) -> Long.compare(y.getValue()[1], x.getValue()[1]));
            for (Map.Entry<String, long[]> r : rows) {
                System.out.printf("%8.2f  %8.1f B  %s%n", r.getValue()[0] / (double) calls,
                        r.getValue()[1] / (double) calls, r.getKey());
            }
            System.out.printf("total %.1f B/call%n", total / (double) calls);
            ch.shutdownNow();
        }
    }

    /**
     * class name -> {instances, bytes}: with {@code all} every object on the heap (GC.class_histogram -all),
     * otherwise the live objects only (the JVM runs a full collection first).
     */
    static Map<String, long[]> classHistogram(boolean all) throws Exception {
        javax.management.MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
        String[] options = all ? new String[] {"-all"} : new String[0];
        String text = (String) mbs.invoke(new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"),
                "gcClassHistogram", new Object[] {options}, new String[] {String[].class.getName()});
        Map<String, long[]> out = new java.util.HashMap<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[0].endsWith(":")) {
                out.put(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
            }
        }
        return out;
    }

    /** The configurations, in report order. */
    static Map<String, UnaryOperator<ManagedChannelBuilder<?>>> setups() {
        ChannelRetryConfig config = BenchConfig.channel();
        Map<String, UnaryOperator<ManagedChannelBuilder<?>>> setups = new LinkedHashMap<>();
        setups.put("(a) bare", b -> b);
        setups.put("bare + names-only method config",
                b -> b.defaultServiceConfig(config.serviceConfig().toServiceConfigMap(false)));
        setups.put("bare + forwarding interceptor", b -> b.intercept(ForwardingInterceptors.forwarding()));
        setups.put("bare + traced forwarding interceptor", b -> b.intercept(ForwardingInterceptors.traced()));
        setups.put("interceptor engine, no throttle/budget", b -> b
                .defaultServiceConfig(config.serviceConfig().withoutRetry().toServiceConfigMap(false))
                .intercept(RetryingClientInterceptor.builder(config).build()));
        setups.put("(c) interceptor engine", b -> b
                .defaultServiceConfig(config.serviceConfig().withoutRetry().toServiceConfigMap(false))
                .intercept(RetryingClientInterceptor.builder(config)
                        .throttle(new RetryThrottle(config.serviceConfig().retryThrottling()))
                        .budget(new RetryBudget(config.budget()))
                        .eventListener(RetryEventListener.NOOP)
                        .build()));
        setups.put("(b) grpc-java retry", b -> b
                .defaultServiceConfig(config.serviceConfig().toServiceConfigMap(true))
                .enableRetry()
                .maxRetryAttempts(config.maxAttemptsCap()));
        return setups;
    }

    /** Bytes per call of every configuration, from the calling thread's allocation counter. */
    static Map<String, Long> measure() throws Exception {
        Map<String, UnaryOperator<ManagedChannelBuilder<?>>> setups = setups();
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().getId();
        Map<String, Long> out = new LinkedHashMap<>();
        try (EchoServer server = EchoServer.start(Transport.IN_PROCESS, 0)) {
            for (Map.Entry<String, UnaryOperator<ManagedChannelBuilder<?>>> e : setups.entrySet()) {
                ManagedChannel ch = e.getValue().apply(InProcessChannelBuilder.forName(server.inProcessName())).build();
                try {
                    SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(ch);
                    for (int i = 0; i < WARM_CALLS; i++) {
                        stub.unaryRpc(BenchConfig.REQUEST);
                    }
                    long before = threads.getThreadAllocatedBytes(self);
                    for (int i = 0; i < MEASURED_CALLS; i++) {
                        stub.unaryRpc(BenchConfig.REQUEST);
                    }
                    long after = threads.getThreadAllocatedBytes(self);
                    out.put(e.getKey(), Math.round((after - before) / (double) MEASURED_CALLS));
                } finally {
                    ch.shutdownNow();
                    ch.awaitTermination(5, TimeUnit.SECONDS);
                }
            }
        }
        return out;
    }
}
