package io.github.grpcretry.sample.traces;

import io.opentelemetry.exporter.logging.LoggingSpanExporter;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The sample's traces (docs/observability.md): retried calls' spans to the log through OpenTelemetry's
 * logging exporter, and the dashboard's waterfall of the last retried or hedged calls
 * ({@code GET /api/demo/waterfall}).
 */
@Configuration(proxyBeanMethods = false)
public class TracesConfiguration {

    @Bean
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
