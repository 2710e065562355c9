package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.testing.ForwardingInterceptors;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.observation.ObservationRegistry;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * What the engine adds to a unary call that succeeds at once (about 200 B over a bare channel before
 * every attempt's streams were traced so that the buffer is counted from what the transport writes;
 * the tracing costs ~240 B: the copy of the call options grpc-java makes to add a stream tracer factory, the
 * factory and the stream's tracer; a listener, which the Spring Boot lines always have, adds nothing more since
 * the same tracer counts transparent retries). In-process with a direct-executor server and a blocking stub the whole call runs on the
 * calling thread, so that thread's allocation counter sees every byte of it (no sampling); the
 * figure is the difference between the same calls with and without the engine (throttle, budget and
 * the channel's service config as the starter renders it), and what the engine adds beyond
 * {@link ForwardingInterceptors#traced()}, the least any interceptor pays that wraps the call and counts the bytes
 * each attempt wrote.
 *
 * <p>Measured in a JVM of its own with escape analysis off: what the JIT scalar-replaces depends on
 * its inlining decisions, which on a loaded machine differ from run to run by whole objects (±24 B
 * and more, in both configurations), while without escape analysis every allocation the code makes
 * is counted, the same in every run. That is an upper bound of the figure with escape analysis on
 * (the benchmarks' {@code AllocationProbe} measures that one: 168 B).
 */
class SuccessPathAllocationTest {

    /**
     * "Adds nothing" with the slack of the measurement: each figure is a per-call average rounded to a byte, and a
     * one-off allocation in the measured window (a JIT or class-loading object) can move it by a byte; any object the
     * code made per call would be 16 B or more.
     */
    private static final long NO_OBJECT = 2L;
    private static final int WARM_CALLS = 20_000;
    private static final int MEASURED_CALLS = 20_000;
    private static final SimpleRequest REQUEST = SimpleRequest.newBuilder()
            .setRequestMessage("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef").build();

    @Test
    void engineAddsAtMost460BytesToAUnaryCallThatSucceedsAtOnce() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "-XX:-DoEscapeAnalysis", "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), SuccessPathAllocationTest.class.getName())
                .redirectErrorStream(true).start();
        Map<String, Long> figures = new HashMap<>();
        StringBuilder output = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                output.append(line).append('\n');
                String[] f = line.split(" ");
                if (f.length == 2 && f[1].matches("\\d+")) {
                    figures.put(f[0], Long.parseLong(f[1]));
                }
            }
        }
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output.toString()).isZero();
        System.out.print(output);
        long added = figures.get("engine") - figures.get("bare");
        assertThat(added).as("bytes the engine adds per unary call, escape analysis off").isBetween(0L, 460L);
        assertThat(figures.get("engine") - figures.get("traced"))
                .as("bytes the engine adds per unary call beyond the stream tracer each attempt needs, escape analysis off")
                .isBetween(0L, 192L);
        assertThat(figures.get("held")).as("bytes held for replay after the calls").isZero();
        assertThat(figures.get("observer") - figures.get("engine"))
                .as("bytes the attempt observer adds to a call with no observation of its own (docs/observability.md)")
                .isLessThanOrEqualTo(NO_OBJECT);
        // a listener (meters, the endpoint's counts) has each attempt count grpc-java's transparent retries: the
        // stream tracer every attempt has anyway (docs/observability.md)
        assertThat(figures.get("listener") - figures.get("engine"))
                .as("bytes a listener adds per call")
                .isLessThanOrEqualTo(NO_OBJECT);
    }

    /**
     * Runs in the forked JVM: prints {@code bare N}, {@code traced N}, {@code engine N}, {@code observer N},
     * {@code listener N} (bytes per call) and {@code held N}.
     */
    public static void main(String[] args) throws Exception {
        String name = "alloc-" + System.nanoTime();
        Server server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new SimpleServiceGrpc.SimpleServiceImplBase() {
                    @Override
                    public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> out) {
                        out.onNext(SimpleResponse.newBuilder().setResponseMessage(request.getRequestMessage()).build());
                        out.onCompleted();
                    }
                }).build().start();
        try {
            ChannelRetryConfig config = Configs.channel(Configs.service(Configs.policy(4, 1, 8, 2,
                    Status.Code.UNAVAILABLE), new RetryThrottlingPolicy(10, 1)), 1 << 20, 16 << 20,
                    new RetryBudgetPolicy(0.5, 10, Duration.ofSeconds(10)));
            RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config)
                    .throttle(new RetryThrottle(config.serviceConfig().retryThrottling()))
                    .budget(new RetryBudget(config.budget()))
                    .build();
            // the engine with the observation switch on: a registry with a handler, no observation current
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(context -> true);
            RetryingClientInterceptor observed = RetryingClientInterceptor.builder(config)
                    .throttle(new RetryThrottle(config.serviceConfig().retryThrottling()))
                    .budget(new RetryBudget(config.budget()))
                    .attemptObserver(new ObservationAttemptObserver(registry))
                    .build();
            RetryingClientInterceptor listened = RetryingClientInterceptor.builder(config)
                    .throttle(new RetryThrottle(config.serviceConfig().retryThrottling()))
                    .budget(new RetryBudget(config.budget()))
                    .eventListener(new RetryEventListener() {
                    })
                    .build();
            for (String which : List.of("bare", "traced", "engine", "observer", "listener")) {
                RetryingClientInterceptor e = which.equals("observer") ? observed
                        : which.equals("listener") ? listened : engine;
                UnaryOperator<ManagedChannelBuilder<?>> setup = which.equals("bare") ? b -> b
                        : which.equals("traced") ? b -> b.intercept(ForwardingInterceptors.traced())
                        : b -> b.defaultServiceConfig(config.serviceConfig().withoutRetry().toServiceConfigMap(false))
                                .intercept(e);
                System.out.println(which + " " + bytesPerCall(name, setup));
            }
            System.out.println("held " + EngineTestAccess.bufferPool(engine).used());
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static long bytesPerCall(String name, UnaryOperator<ManagedChannelBuilder<?>> setup) throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().getId();
        ManagedChannel channel = setup.apply(InProcessChannelBuilder.forName(name)).build();
        try {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(channel);
            for (int i = 0; i < WARM_CALLS; i++) {
                stub.unaryRpc(REQUEST);
            }
            long before = threads.getThreadAllocatedBytes(self);
            for (int i = 0; i < MEASURED_CALLS; i++) {
                stub.unaryRpc(REQUEST);
            }
            long after = threads.getThreadAllocatedBytes(self);
            return Math.round((after - before) / (double) MEASURED_CALLS);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
