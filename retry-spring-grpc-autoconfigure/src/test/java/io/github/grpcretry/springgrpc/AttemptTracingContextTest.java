package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.delayedOk;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Per-attempt spans on the Spring Boot 4.1 line, all real: Spring gRPC's client and server (in-process)
 * with Spring Boot's observation interceptors, micrometer-tracing's OpenTelemetry bridge (its tracing
 * handlers registered as an {@link ObservationHandler} bean in both applications, sampling everything)
 * and OpenTelemetry's in-memory span exporter. The call's span is Spring Boot's; the engine's attempts
 * are its children, the server's spans children of the attempts (docs/observability.md).
 */
class AttemptTracingContextTest {

    private static final String ATTEMPT = "Attempt.grpc.testing.SimpleService.UnaryRpc";
    private static final String CALL = "grpc.testing.SimpleService/UnaryRpc";
    private static final AttributeKey<String> PREVIOUS = AttributeKey.stringKey("previous-rpc-attempts");
    private static final AttributeKey<String> STATUS = AttributeKey.stringKey("grpc.status_code");
    private static final AttributeKey<String> COMMITTED = AttributeKey.stringKey("grpc.retry.committed");
    private static final AttributeKey<String> KIND = AttributeKey.stringKey("grpc.retry.kind");

    /** One exporter for both applications (a span is exported synchronously when it ends). */
    static final InMemorySpanExporter EXPORTER = InMemorySpanExporter.create();
    static final SdkTracerProvider PROVIDER = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(EXPORTER)).setSampler(Sampler.alwaysOn()).build();

    /** micrometer-tracing over OpenTelemetry, W3C propagation, as one first-matching observation handler. */
    @Configuration(proxyBeanMethods = false)
    static class Tracing {
        @Bean
        ObservationHandler<?> tracingObservationHandler() {
            io.opentelemetry.api.trace.Tracer otel = PROVIDER.get("attempt-tracing-test");
            OtelCurrentTraceContext current = new OtelCurrentTraceContext();
            OtelTracer tracer = new OtelTracer(otel, current, event -> { },
                    new OtelBaggageManager(current, List.of(), List.of()));
            OtelPropagator propagator = new OtelPropagator(
                    ContextPropagators.create(W3CTraceContextPropagator.getInstance()), otel);
            return new ObservationHandler.FirstMatchingCompositeObservationHandler(
                    new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                    new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                    new DefaultTracingObservationHandler(tracer));
        }
    }

    static ScriptedService service;
    static GrpcServerContext server;

    static ScriptedService.Action script(String key, int n) {
        return switch (key) {
            case "first2" -> n < 2 ? fail(Status.Code.UNAVAILABLE) : ok();
            case "hedged" -> n == 0 ? delayedOk(3_000) : ok();
            default -> fail(Status.Code.UNAVAILABLE);
        };
    }

    @BeforeAll
    static void start() {
        service = new ScriptedService(AttemptTracingContextTest::script);
        server = GrpcServerContext.start(new Object[] {service, Tracing.class});
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @BeforeEach
    void clear() {
        EXPORTER.reset();
    }

    private static GrpcClientContext client(String... policy) {
        String m = "grpc.retry.clients.[" + server.inProcessTarget() + "].service-config.method[0].";
        String[] p = new String[policy.length + 1];
        p[0] = m + "name[0].service=grpc.testing.SimpleService";
        for (int i = 0; i < policy.length; i++) {
            p[i + 1] = policy[i].startsWith("retrythrottling")
                    ? "grpc.retry.clients.[" + server.inProcessTarget() + "].service-config." + policy[i] : m + policy[i];
        }
        return GrpcClientContext.start(List.of(Tracing.class), p);
    }

    /** The exported spans once {@code done} holds (polled: a span is exported when it ends). */
    private static List<SpanData> spans(Predicate<List<SpanData>> done) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> done.test(EXPORTER.getFinishedSpanItems()));
        return EXPORTER.getFinishedSpanItems();
    }

    private static List<SpanData> named(List<SpanData> spans, String name) {
        return spans.stream().filter(s -> s.getName().equals(name))
                .sorted(Comparator.comparing(s -> s.getAttributes().get(PREVIOUS))).toList();
    }

    private static List<SpanData> serverSpans(List<SpanData> spans) {
        return spans.stream().filter(s -> s.getKind() == SpanKind.SERVER).toList();
    }

    private static SpanData byId(List<SpanData> spans, String id) {
        return spans.stream().filter(s -> s.getSpanId().equals(id)).findFirst()
                .orElseThrow(() -> new AssertionError("no span " + id + " in " + spans));
    }

    @Test
    void twoFailuresThenSuccessGiveThreeAttemptSpansUnderTheCall() {
        try (GrpcClientContext client = client("retry.max-attempts=3", "retry.initial-backoff=20ms",
                "retry.max-backoff=100ms", "retry.backoff-multiplier=2", "retry.retryable-status-codes=UNAVAILABLE")) {
            client.stub(server.inProcessTarget()).withDeadlineAfter(30, TimeUnit.SECONDS).unaryRpc(request("first2"));
            List<SpanData> spans = spans(s -> named(s, ATTEMPT).size() == 3 && serverSpans(s).size() == 3
                    && s.stream().anyMatch(x -> x.getName().equals(CALL) && x.getKind() == SpanKind.CLIENT));
            List<SpanData> attempts = named(spans, ATTEMPT);
            SpanData call = byId(spans, attempts.get(0).getParentSpanId());
            assertThat(call.getName()).isEqualTo(CALL);
            assertThat(call.getKind()).isEqualTo(SpanKind.CLIENT);
            assertThat(spans).filteredOn(s -> s.getKind() == SpanKind.CLIENT && !s.getName().equals(ATTEMPT))
                    .as("one call span").hasSize(1);
            for (int i = 0; i < 3; i++) {
                SpanData a = attempts.get(i);
                assertThat(a.getParentSpanId()).isEqualTo(call.getSpanId());
                assertThat(a.getAttributes().get(PREVIOUS)).isEqualTo(String.valueOf(i));
                assertThat(a.getAttributes().get(STATUS)).isEqualTo(i < 2 ? "UNAVAILABLE" : "OK");
                assertThat(a.getAttributes().get(KIND)).isEqualTo(i == 0 ? "initial" : "retry");
            }
            assertThat(serverSpans(spans)).extracting(SpanData::getParentSpanId)
                    .as("each server span's parent is an attempt")
                    .containsExactlyInAnyOrderElementsOf(attempts.stream().map(SpanData::getSpanId).toList());
            assertThat(serverSpans(spans)).allSatisfy(s -> assertThat(s.getTraceId()).isEqualTo(call.getTraceId()));
        }
    }

    @Test
    void aHedgedCallHasOverlappingAttemptSpansAndTheLoserIsCancelled() {
        try (GrpcClientContext client = client("hedging.max-attempts=2", "hedging.delay=100ms",
                "hedging.non-fatal-status-codes=UNAVAILABLE")) {
            client.stub(server.inProcessTarget()).withDeadlineAfter(30, TimeUnit.SECONDS).unaryRpc(request("hedged"));
            List<SpanData> attempts = named(spans(s -> named(s, ATTEMPT).size() == 2), ATTEMPT);
            SpanData first = attempts.get(0);
            SpanData hedge = attempts.get(1);
            assertThat(first.getParentSpanId()).isEqualTo(hedge.getParentSpanId());
            assertThat(hedge.getAttributes().get(KIND)).isEqualTo("hedge");
            assertThat(hedge.getAttributes().get(STATUS)).isEqualTo("OK");
            assertThat(hedge.getAttributes().get(COMMITTED)).isEqualTo("true");
            assertThat(first.getAttributes().get(STATUS)).isEqualTo("CANCELLED");
            assertThat(first.getAttributes().get(COMMITTED)).isEqualTo("false");
            assertThat(hedge.getStartEpochNanos()).as("the hedge started while the first attempt ran")
                    .isGreaterThan(first.getStartEpochNanos()).isLessThan(first.getEndEpochNanos());
        }
    }

    @Test
    void aThrottledRetryIsAnEventOnTheCallSpan() {
        try (GrpcClientContext client = client("retry.max-attempts=3", "retry.initial-backoff=20ms",
                "retry.max-backoff=100ms", "retry.backoff-multiplier=2", "retry.retryable-status-codes=UNAVAILABLE",
                "retrythrottling.max-tokens=2", "retrythrottling.token-ratio=0.1")) {
            StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> client
                    .stub(server.inProcessTarget()).withDeadlineAfter(30, TimeUnit.SECONDS).unaryRpc(request("down")));
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            List<SpanData> spans = spans(s -> s.stream().anyMatch(x -> x.getName().equals(CALL)
                    && x.getKind() == SpanKind.CLIENT));
            assertThat(named(spans, ATTEMPT)).hasSize(1);
            SpanData call = byId(spans, named(spans, ATTEMPT).get(0).getParentSpanId());
            assertThat(call.getEvents()).extracting(EventData::getName).contains("retry.suppressed.throttled");
        }
    }
}
