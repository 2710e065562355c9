package io.github.grpcretry.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.CallTarget;
import io.grpc.Status;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The gRFC A96 meters against A96's table (name, instrument, unit, attributes, recommended buckets), as
 * Micrometer registers them and as Prometheus exposes them.
 */
class A96MeterTableTest {

    /** One row of A96's table: name, type (Histogram for all), unit, required attributes, bucket advice. */
    private record Row(String name, String unit, Set<String> attributes, List<Double> buckets) {
    }

    private static final Set<String> ATTRIBUTES = Set.of("grpc.method", "grpc.target");
    private static final List<Double> LATENCY = List.of(0.0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001,
            0.002, 0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.013, 0.016, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065, 0.08,
            0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65, 0.8, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0);
    private static final List<Row> A96 = List.of(
            new Row("grpc.client.call.retries", "{retry}", ATTRIBUTES, List.of(1.0, 2.0, 3.0, 4.0, 5.0)),
            new Row("grpc.client.call.transparent_retries", "{transparent_retry}", ATTRIBUTES,
                    List.of(1.0, 2.0, 3.0, 4.0, 5.0, 10.0)),
            new Row("grpc.client.call.hedges", "{hedge}", ATTRIBUTES, List.of(1.0, 2.0, 3.0, 4.0, 5.0)),
            new Row("grpc.client.call.retry_delay", "s", ATTRIBUTES, LATENCY));

    private static final CallTarget TARGET = new CallTarget("inventory", "shop.Inventory/Reserve",
            "dns:///inventory.shop:443", true);

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    @Test
    void namesKindsUnitsAndAttributesAreA96s() {
        MicrometerRetryEventListener listener = new MicrometerRetryEventListener(registry);
        listener.callEnded(TARGET, Status.Code.OK, 2, 0, 1, 3_000_000L);
        listener.callEnded(TARGET, Status.Code.OK, 0, 3, 0, 0);

        Map<String, Row> table = A96.stream().collect(Collectors.toMap(Row::name, r -> r));
        Set<String> registered = registry.getMeters().stream().map(m -> m.getId().getName())
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(registered).containsExactlyInAnyOrderElementsOf(table.keySet());
        for (Meter m : registry.getMeters()) {
            Row row = table.get(m.getId().getName());
            // A96's instrument is a histogram: a Micrometer timer for seconds, a distribution summary for counts
            Meter.Type expected = row.unit().equals("s") ? Meter.Type.TIMER : Meter.Type.DISTRIBUTION_SUMMARY;
            assertThat(m.getId().getType()).as(row.name()).isEqualTo(expected);
            // a curly-brace unit is an annotation: no base unit (Prometheus would append it to the name)
            String baseUnit = row.unit().startsWith("{") ? null : "seconds";
            assertThat(m.getId().getBaseUnit()).as(row.name()).isEqualTo(baseUnit);
            assertThat(m.getId().getTags().stream().map(Tag::getKey).collect(Collectors.toSet()))
                    .as(row.name()).isEqualTo(row.attributes());
        }
    }

    @Test
    void prometheusExposesHistogramsWithA96Buckets() {
        MicrometerRetryEventListener listener = new MicrometerRetryEventListener(registry);
        listener.callEnded(TARGET, Status.Code.OK, 2, 0, 1, 3_000_000L);
        listener.callEnded(TARGET, Status.Code.OK, 0, 3, 0, 0);
        String scrape = registry.scrape();

        for (Row row : A96) {
            String name = row.name().replace('.', '_') + (row.unit().equals("s") ? "_seconds" : "");
            assertThat(scrape).as(row.name()).contains("# TYPE " + name + " histogram");
            Set<Double> bounds = scrape.lines()
                    .filter(l -> l.startsWith(name + "_bucket{"))
                    .map(l -> l.substring(l.indexOf("le=\"") + 4, l.indexOf('"', l.indexOf("le=\"") + 4)))
                    .filter(le -> !le.equals("+Inf"))
                    .map(Double::valueOf)
                    .collect(Collectors.toCollection(TreeSet::new));
            // Micrometer takes boundaries above 0: A66's first latency bucket, 0, is the only one left out
            List<Double> advised = row.buckets().stream().filter(b -> b > 0).toList();
            assertThat(bounds).as(row.name()).containsExactlyElementsOf(advised);
        }
        assertThat(scrape).contains("grpc_client_call_retries_bucket{grpc_method=\"shop.Inventory/Reserve\","
                + "grpc_target=\"dns:///inventory.shop:443\",le=\"2.0\"} 1");
        assertThat(scrape).doesNotContain("_retry_total").doesNotContain("{retry}").doesNotContain("_hedge_");
    }
}
