package io.github.grpcretry.benchmarks;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcClientInterceptor;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.List;
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
 * What per-attempt observation costs a unary call that succeeds at once (docs/benchmarks.md,
 * docs/observability.md): the interceptor engine (throttle and budget on) under Micrometer's gRPC client
 * observation interceptor, as net.devh and Spring gRPC install it, with spans through micrometer-tracing's
 * OpenTelemetry bridge (every call sampled, W3C propagation, spans ended into no exporter):
 * <ul>
 *   <li>{@code OFF}: the call's observation and span only, the engine without its attempt observer
 *       ({@code grpc.retry.observation.enabled=false});</li>
 *   <li>{@code ON}: the same with the attempt observer: one more observation and span per attempt, its
 *       trace context written into the attempt's headers.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ObservationBenchmark {

    public enum Observation { OFF, ON }

    @Param({"IN_PROCESS", "NETTY"})
    public Transport transport;

    @Param({"OFF", "ON"})
    public Observation observation;

    private EchoServer server;
    private ManagedChannel channel;
    private SdkTracerProvider provider;
    private SimpleServiceGrpc.SimpleServiceBlockingStub stub;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        server = EchoServer.start(transport, 0);
        provider = SdkTracerProvider.builder().setSampler(Sampler.alwaysOn()).build();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(tracing(provider));
        ChannelRetryConfig config = BenchConfig.channel();
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config)
                .throttle(new RetryThrottle(config.serviceConfig().retryThrottling()))
                .budget(new RetryBudget(config.budget()))
                .eventListener(RetryEventListener.NOOP)
                .attemptObserver(observation == Observation.ON ? new ObservationAttemptObserver(registry) : null)
                .build();
        ManagedChannelBuilder<?> b = Clients.builder(server, transport);
        b.defaultServiceConfig(config.serviceConfig().withoutRetry().toServiceConfigMap(false))
                .intercept(engine)
                .intercept(new ObservationGrpcClientInterceptor(registry)); // added last: outermost, the call's
        channel = b.build();
        stub = SimpleServiceGrpc.newBlockingStub(channel);
        stub.unaryRpc(BenchConfig.REQUEST); // connect before measuring
    }

    /** micrometer-tracing over the OpenTelemetry SDK, as Spring Boot's tracing auto-configuration groups it. */
    static ObservationHandler<?> tracing(SdkTracerProvider provider) {
        io.opentelemetry.api.trace.Tracer otel = provider.get("observation-benchmark");
        OtelCurrentTraceContext current = new OtelCurrentTraceContext();
        OtelTracer tracer = new OtelTracer(otel, current, event -> { }, new OtelBaggageManager(current, List.of(), List.of()));
        OtelPropagator propagator = new OtelPropagator(ContextPropagators.create(W3CTraceContextPropagator.getInstance()),
                otel);
        return new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
        provider.close();
    }

    @Benchmark
    @Threads(1)
    public SimpleResponse unary1Thread() {
        return stub.unaryRpc(BenchConfig.REQUEST);
    }
}
