package io.github.grpcretry.sample.traces;

import io.opentelemetry.exporter.logging.LoggingSpanExporter;
import java.util.List;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The sample's traces (docs/observability.md): the dashboard's waterfall of the last retried or hedged calls
 * ({@code GET /api/demo/waterfall}), and with {@code sample.traces.log=true} retried calls' spans to the log
 * through OpenTelemetry's logging exporter (off by default: up to five retried calls a second, a summary
 * line and a line per span each, some 540 INFO lines a minute under the demo's traffic).
 */
@Configuration(proxyBeanMethods = false)
public class TracesConfiguration {

    @Bean
    @ConditionalOnProperty(name = "sample.traces.log", havingValue = "true")
    RetriedCallSpanExporter retriedCallSpanExporter() {
        return new RetriedCallSpanExporter(LoggingSpanExporter.create());
    }

    @Bean
    AttemptWaterfall attemptWaterfall() {
        return new AttemptWaterfall();
    }

    /** The waterfall's rows, oldest first. */
    @RestController
    static class WaterfallController {
        private final AttemptWaterfall waterfall;

        WaterfallController(AttemptWaterfall waterfall) {
            this.waterfall = waterfall;
        }

        @GetMapping("/api/demo/waterfall")
        List<AttemptWaterfall.Row> rows() {
            return waterfall.rows();
        }
    }
}
