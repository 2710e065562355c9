package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.sample.traces.AttemptWaterfall;
import io.github.grpcretry.sample.traces.RetriedCallSpanExporter;
import io.github.grpcretry.sample.traces.TracesConfiguration;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The sample's span filter on OpenTelemetry's real SDK: a call with two attempt spans reaches the logging
 * exporter whole, a call with one does not; the summary names each attempt, its status, the wait and the backend's port. The
 * trace log is opt-in ({@code sample.traces.log=true}).
 */
class RetriedCallSpanExporterTest {

    private final InMemorySpanExporter logged = InMemorySpanExporter.create();
    private final SdkTracerProvider provider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(new RetriedCallSpanExporter(logged))).build();
    private final Tracer tracer = provider.get("test");

    /** A call span with {@code statuses.length} attempt children, ended attempt by attempt, then the call. */
    private String call(long t0, String... statuses) {
        Span call = tracer.spanBuilder("sample.flaky.Flaky/Call").setSpanKind(SpanKind.CLIENT)
                .setStartTimestamp(t0, TimeUnit.MILLISECONDS).startSpan();
        long t = t0;
        for (int i = 0; i < statuses.length; i++) {
            Span attempt = tracer.spanBuilder("Attempt.sample.flaky.Flaky.Call").setSpanKind(SpanKind.CLIENT)
                    .setParent(Context.root().with(call)).setStartTimestamp(t, TimeUnit.MILLISECONDS)
                    .setAttribute("previous-rpc-attempts", String.valueOf(i))
                    .setAttribute("grpc.status_code", statuses[i]).setAttribute("network.peer.port", "9090").startSpan();
            attempt.end(t + 2, TimeUnit.MILLISECONDS);
            t += 2 + 20; // 20 ms of backoff
        }
        call.end(t, TimeUnit.MILLISECONDS);
        return call.getSpanContext().getTraceId();
    }

    @Test
    void onlyRetriedCallsReachTheLoggingExporterWhole() {
        String single = call(1_000, "OK");
        String retried = call(2_000, "UNAVAILABLE", "UNAVAILABLE", "OK");
        List<SpanData> out = logged.getFinishedSpanItems();
        assertThat(out).hasSize(4).allSatisfy(s -> assertThat(s.getTraceId()).isEqualTo(retried));
        assertThat(out).extracting(SpanData::getTraceId).doesNotContain(single);
    }

    @Test
    void theSummaryListsTheAttemptsTheirStatusesAndTheWaits() {
        call(1_000, "UNAVAILABLE", "OK");
        List<SpanData> attempts = logged.getFinishedSpanItems().stream()
                .filter(s -> s.getName().startsWith("Attempt.")).toList();
        assertThat(RetriedCallSpanExporter.summary(attempts))
                .isEqualTo("attempt 1 UNAVAILABLE 2 ms :9090 | +20 ms attempt 2 OK 2 ms :9090");
    }

    @Test
    void theTraceLogIsOptIn() {
        ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(TracesConfiguration.class);
        runner.run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(RetriedCallSpanExporter.class)
                .hasSingleBean(AttemptWaterfall.class));
        runner.withPropertyValues("sample.traces.log=true")
                .run(ctx -> assertThat(ctx).hasSingleBean(RetriedCallSpanExporter.class));
    }
}
