package io.github.grpcretry.autoconfigure.observation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientMicrometerTraceAutoConfiguration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.common.autoconfigure.GrpcCommonCodecAutoConfiguration;
import net.devh.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration;
import net.devh.boot.grpc.server.autoconfigure.GrpcServerFactoryAutoConfiguration;
import net.devh.boot.grpc.server.autoconfigure.GrpcServerMicrometerTraceAutoConfiguration;
import net.devh.boot.grpc.server.service.GrpcService;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.opentelemetry.OpenTelemetryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.tracing.MicrometerTracingAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.tracing.OpenTelemetryTracingAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Per-attempt spans on the Spring Boot 3.5 line, all real: net.devh's client and server (in-process) with
 * their observation interceptors, Spring Boot's tracing with micrometer-tracing's OpenTelemetry bridge,
 * and OpenTelemetry's in-memory span exporter. The call's span is net.devh's; the engine's attempts are its
 * children and the server's spans are children of the attempts (docs/observability.md).
 */
class AttemptTracingContextTest {

    private static final String ATTEMPT = "Attempt.grpc.testing.SimpleService.UnaryRpc";
    private static final String M = "grpc.retry.clients.inventory.service-config.method[0].";
    private static final AttributeKey<String> PREVIOUS = AttributeKey.stringKey("previous-rpc-attempts");
    private static final AttributeKey<String> STATUS = AttributeKey.stringKey("grpc.status_code");
    private static final AttributeKey<String> COMMITTED = AttributeKey.stringKey("grpc.retry.committed");
    private static final AttributeKey<String> KIND = AttributeKey.stringKey("grpc.retry.kind");
    private static final AttributeKey<String> TRANSPARENT = AttributeKey.stringKey("transparent-retry");

    @SpringBootConfiguration
    @ImportAutoConfiguration({
            GrpcCommonCodecAutoConfiguration.class, GrpcServerFactoryAutoConfiguration.class,
            GrpcServerAutoConfiguration.class, GrpcClientAutoConfiguration.class,
            GrpcServerMicrometerTraceAutoConfiguration.class, GrpcClientMicrometerTraceAutoConfiguration.class,
            ObservationAutoConfiguration.class, MicrometerTracingAutoConfiguration.class,
            OpenTelemetryAutoConfiguration.class, OpenTelemetryTracingAutoConfiguration.class,
            GrpcRetryAutoConfiguration.class})
    @Import(Scripted.class)
    static class App {
        @Bean
        InMemorySpanExporter inMemorySpanExporter() {
            return InMemorySpanExporter.create();
        }
    }

    /** Answers arrival n (from 1) with {@link #script}: a status, after {@link #delayMs} for the first. */
    @GrpcService
    static class Scripted extends SimpleServiceGrpc.SimpleServiceImplBase {
        static volatile IntFunction<Status> script = n -> Status.OK;
        static volatile long firstDelayMs;
        private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "scripted-answers");
            t.setDaemon(true);
            return t;
        });
        final AtomicInteger arrivals = new AtomicInteger();

        @Override
        public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> out) {
            int n = arrivals.incrementAndGet();
            Status status = script.apply(n);
            Runnable answer = () -> {
                if (((ServerCallStreamObserver<SimpleResponse>) out).isCancelled()) {
                    return;
                }
                if (status.isOk()) {
                    out.onNext(SimpleResponse.newBuilder().setResponseMessage(request.getRequestMessage()).build());
                    out.onCompleted();
                } else {
                    out.onError(status.asRuntimeException());
                }
            };
            long delay = n == 1 ? firstDelayMs : 0;
            if (delay > 0) {
                TIMER.schedule(answer, delay, TimeUnit.MILLISECONDS); // the scripted slowness
            } else {
                answer.run();
            }
        }
    }

    private static ConfigurableApplicationContext context(String... policy) {
        String server = "traced-" + UUID.randomUUID();
        List<String> p = new ArrayList<>(List.of(
                "spring.application.name=traced",
                "grpc.server.port=-1",
                "grpc.server.in-process-name=" + server,
                "grpc.client.inventory.address=in-process:" + server,
                "management.tracing.sampling.probability=1.0",
                "management.tracing.grpc.enabled=true",
                M + "name[0].service=grpc.testing.SimpleService",
                "spring.main.banner-mode=off",
                "logging.level.root=warn"));
        p.addAll(List.of(policy));
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE).properties(p.toArray(String[]::new))
                .run();
    }

    private static SimpleServiceGrpc.SimpleServiceBlockingStub stub(ConfigurableApplicationContext ctx) {
        return SimpleServiceGrpc.newBlockingStub(ctx.getBean(GrpcChannelFactory.class).createChannel("inventory"))
                .withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    /** The exported spans once {@code done} holds (the exporter is polled; a span is exported when it ends). */
    private static List<SpanData> spans(ConfigurableApplicationContext ctx, Predicate<List<SpanData>> done) {
        SdkTracerProvider provider = ctx.getBean(SdkTracerProvider.class);
        InMemorySpanExporter exporter = ctx.getBean(InMemorySpanExporter.class);
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
            provider.forceFlush().join(10, TimeUnit.SECONDS);
            return done.test(exporter.getFinishedSpanItems());
        });
        return exporter.getFinishedSpanItems();
    }

    private static List<SpanData> named(List<SpanData> spans, String name) {
        return spans.stream().filter(s -> s.getName().equals(name))
                .sorted(Comparator.comparing(s -> s.getAttributes().get(PREVIOUS))).toList();
    }

    private static SpanData byId(List<SpanData> spans, String spanId) {
        return spans.stream().filter(s -> s.getSpanId().equals(spanId)).findFirst()
                .orElseThrow(() -> new AssertionError("no span " + spanId + " in " + spans));
    }

    private static List<SpanData> serverSpans(List<SpanData> spans) {
        return spans.stream().filter(s -> s.getKind() == SpanKind.SERVER).toList();
    }

    @Test
    void twoFailuresThenSuccessGiveThreeAttemptSpansUnderTheCall() {
        Scripted.script = n -> n <= 2 ? Status.UNAVAILABLE : Status.OK;
        Scripted.firstDelayMs = 0;
        try (ConfigurableApplicationContext ctx = context(M + "retry.max-attempts=3", M + "retry.initial-backoff=20ms",
                M + "retry.max-backoff=100ms", M + "retry.backoff-multiplier=2",
                M + "retry.retryable-status-codes=unavailable")) {
            stub(ctx).unaryRpc(SimpleRequest.newBuilder().setRequestMessage("hello").build());
            List<SpanData> spans = spans(ctx, s -> named(s, ATTEMPT).size() == 3 && serverSpans(s).size() == 3
                    && s.stream().anyMatch(x -> x.getName().equals("grpc.testing.SimpleService/UnaryRpc")
                            && x.getKind() == SpanKind.CLIENT));
            List<SpanData> attempts = named(spans, ATTEMPT);
            SpanData call = byId(spans, attempts.get(0).getParentSpanId());
            assertThat(call.getName()).isEqualTo("grpc.testing.SimpleService/UnaryRpc");
            assertThat(call.getKind()).isEqualTo(SpanKind.CLIENT);
            assertThat(spans).filteredOn(s -> s.getKind() == SpanKind.CLIENT && s != call && !attempts.contains(s))
                    .as("one call span").isEmpty();
            for (int i = 0; i < 3; i++) {
                SpanData a = attempts.get(i);
                assertThat(a.getParentSpanId()).isEqualTo(call.getSpanId());
                assertThat(a.getTraceId()).isEqualTo(call.getTraceId());
                assertThat(a.getKind()).isEqualTo(SpanKind.CLIENT);
                assertThat(a.getAttributes().get(PREVIOUS)).isEqualTo(String.valueOf(i));
                assertThat(a.getAttributes().get(STATUS)).isEqualTo(i < 2 ? "UNAVAILABLE" : "OK");
                assertThat(a.getAttributes().get(KIND)).isEqualTo(i == 0 ? "initial" : "retry");
                assertThat(a.getAttributes().get(TRANSPARENT)).isEqualTo("false");
            }
            List<SpanData> servers = serverSpans(spans);
            assertThat(servers).extracting(SpanData::getParentSpanId).as("each server span's parent is an attempt")
                    .containsExactlyInAnyOrderElementsOf(attempts.stream().map(SpanData::getSpanId).toList());
            assertThat(servers).allSatisfy(s -> assertThat(s.getTraceId()).isEqualTo(call.getTraceId()));
            // the server span of attempt i saw attempt i's status
            for (SpanData a : attempts) {
                SpanData s = servers.stream().filter(x -> x.getParentSpanId().equals(a.getSpanId())).findFirst().orElseThrow();
                assertThat(s.getAttributes().get(STATUS)).isEqualTo(a.getAttributes().get(STATUS));
            }
        }
    }

    @Test
    void aHedgedCallHasOverlappingAttemptSpansAndTheLoserIsCancelled() {
        Scripted.script = n -> Status.OK;
        Scripted.firstDelayMs = 3_000;
        try (ConfigurableApplicationContext ctx = context(M + "hedging.max-attempts=2", M + "hedging.delay=100ms",
                M + "hedging.non-fatal-status-codes=unavailable")) {
            stub(ctx).unaryRpc(SimpleRequest.newBuilder().setRequestMessage("hedged").build());
            List<SpanData> spans = spans(ctx, s -> named(s, ATTEMPT).size() == 2);
            List<SpanData> attempts = named(spans, ATTEMPT);
            SpanData first = attempts.get(0);
            SpanData hedge = attempts.get(1);
            assertThat(first.getParentSpanId()).isEqualTo(hedge.getParentSpanId());
            assertThat(byId(spans, first.getParentSpanId()).getName()).isEqualTo("grpc.testing.SimpleService/UnaryRpc");
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
        Scripted.script = n -> Status.UNAVAILABLE;
        Scripted.firstDelayMs = 0;
        try (ConfigurableApplicationContext ctx = context(M + "retry.max-attempts=3", M + "retry.initial-backoff=20ms",
                M + "retry.max-backoff=100ms", M + "retry.backoff-multiplier=2",
                M + "retry.retryable-status-codes=unavailable",
                "grpc.retry.clients.inventory.service-config.retrythrottling.max-tokens=2",
                "grpc.retry.clients.inventory.service-config.retrythrottling.token-ratio=0.1")) {
            assertThatThrownBy(() -> stub(ctx).unaryRpc(SimpleRequest.getDefaultInstance()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
            List<SpanData> spans = spans(ctx, s -> s.stream().anyMatch(x -> x.getKind() == SpanKind.CLIENT
                    && x.getName().equals("grpc.testing.SimpleService/UnaryRpc")));
            assertThat(named(spans, ATTEMPT)).hasSize(1);
            SpanData call = byId(spans, named(spans, ATTEMPT).get(0).getParentSpanId());
            assertThat(call.getEvents()).extracting(EventData::getName).contains("retry.suppressed.throttled");
        }
    }
}
