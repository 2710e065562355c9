package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.sample.OpsKit.Selector;
import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyReply;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.github.grpcretry.sample.proto.Script;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Every metric the operations kit's alert rules and dashboard query is in the running sample's
 * {@code /actuator/prometheus} scrape, with every label the queries match on and every value they match
 * exactly (so a misspelt {@code reason="max_attempt"} cannot make an alert silently never fire). The names
 * come from the shipped rule and dashboard files themselves.
 *
 * <p>The demo runs on its budget channel against a backend that fails 60 % of attempts, which makes the
 * engine record first attempts, retries, and retries refused for the budget and at the attempt cap; the
 * showcase and throttled channels carry throttles, and every demo call has a deadline. Calls on the
 * hedging channel (adaptive hedging on) register the method's adaptive hedging delay gauge and record a
 * hedge.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "sample.showcase.enabled=false",
        "sample.demo.rate=50",
        "sample.demo.failure-rate=0.6",
        "sample.demo.slow-share=0",
        "sample.demo.strategy=BUDGET",
        "grpc.retry.deadline.min-remaining=50ms",
        "logging.level.io.github.grpcretry=WARN",
        "logging.level.io.opentelemetry.exporter.logging=WARN"})
@AutoConfigureObservability // Boot's tests turn metrics export (the Prometheus scrape) off otherwise
@DirtiesContext // closed after this class: its generator must not keep loading the machine under the next test class
class OpsKitScrapeTest {

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry registry) throws IOException {
        SampleGrpcPort.free(registry);
    }

    @BeforeAll
    static void engineInBuild() {
        Assumptions.assumeTrue(DashboardBrowser.interceptorEngineOnClassPath(),
                "the kit's meters of refused retries and limiters come from the interceptor engine");
    }

    @Autowired
    TestRestTemplate http;

    @GrpcClient("flaky-hedging")
    FlakyGrpc.FlakyBlockingStub hedging;

    @Test
    void everyLabelAndValueOfRulesAndDashboardIsInTheScrape() throws Exception {
        Set<Selector> used = new LinkedHashSet<>();
        OpsKit.alertExpressions().values().forEach(e -> used.addAll(OpsKit.selectors(e)));
        OpsKit.dashboardExpressions().forEach(e -> used.addAll(OpsKit.selectors(e)));
        assertThat(used).extracting(Selector::metric).contains("grpc_client_retry_attempts_total",
                "grpc_client_retry_tokens", "grpc_client_retry_budget_balance", "grpc_client_deadline_fast_fail_total",
                "grpc_client_hedging_delay_seconds");

        assertThat(hedgedCall()).as("a call answered by its hedge").isTrue();

        // the scrape grows as the demo's calls make the engine register meters: poll it, bounded
        long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        List<String> missing;
        Scrape scrape;
        while (true) {
            scrape = Scrape.parse(http.getForObject("/actuator/prometheus", String.class));
            missing = missing(used, scrape);
            if (missing.isEmpty() || System.nanoTime() > end) {
                break;
            }
            Thread.sleep(500); // polls the scrape, bounded by the timeout
        }
        assertThat(missing).as("used by the operations kit but not in /actuator/prometheus").isEmpty();
        assertThat(scrape.series.keySet()).as("the scrape parsed").hasSizeGreaterThan(used.size());
    }

    /**
     * Calls on the hedging channel whose first attempt fails UNAVAILABLE (non-fatal: the hedge goes at once)
     * until one is answered by its hedge. The extra-load cap (max-extra-load 0.1) lets a method hedge only
     * once it has ten calls in the window, so the first calls end with their first attempt's failure.
     */
    private boolean hedgedCall() {
        for (int i = 0; i < 100; i++) {
            try {
                FlakyReply reply = hedging.withDeadlineAfter(30, TimeUnit.SECONDS).call(FlakyRequest.newBuilder()
                        .setKey("ops-kit-hedged-" + i).setScript(Script.newBuilder().setFailFirst(1)).build());
                if (reply.getAttempt() == 2) {
                    return true;
                }
            } catch (StatusRuntimeException e) {
                assertThat(e.getStatus().getCode()).as("a first attempt's scripted failure").isEqualTo(Status.Code.UNAVAILABLE);
            }
        }
        return false;
    }

    /** The check itself: a scrape without a name, a label or a matched value is reported, one with all of them is not. */
    @Test
    void aMissingNameLabelOrMatchedValueIsReported() {
        Set<Selector> used = new LinkedHashSet<>(OpsKit.selectors(
                "rate(a_total{kind=\"initial\",job=~\"$job\"}[1m]) / b{reason=~\"x|y\"} > on (job, instance) c"));
        Scrape complete = Scrape.parse("""
                # TYPE a_total counter
                a_total{client="x",kind="initial"} 1.0
                b{reason="x"} 2.0
                c 3.0
                """);
        assertThat(missing(used, complete)).isEmpty();
        Scrape partial = Scrape.parse("""
                a_total{client="x",kind="retry"} 1.0
                b{client="x"} 2.0
                """);
        assertThat(missing(used, partial)).containsExactly("a_total{kind=initial}", "b label reason", "c");
    }

    /** What {@code used} needs that the scrape lacks: metric names, matched labels, exactly matched values. */
    private static List<String> missing(Set<Selector> used, Scrape scrape) {
        List<String> missing = new ArrayList<>();
        for (Selector s : used) {
            List<Map<String, String>> series = scrape.series.get(s.metric());
            if (series == null) {
                missing.add(s.metric());
                continue;
            }
            for (String label : s.matchedLabels()) {
                if (!OpsKit.TARGET_LABELS.contains(label) && series.stream().noneMatch(l -> l.containsKey(label))) {
                    missing.add(s.metric() + " label " + label);
                }
            }
            Map<String, String> exact = new HashMap<>(s.equalMatchers());
            exact.keySet().removeAll(OpsKit.TARGET_LABELS);
            if (!exact.isEmpty() && series.stream().noneMatch(l -> l.entrySet().containsAll(exact.entrySet()))) {
                missing.add(s.metric() + exact);
            }
        }
        return missing;
    }

    /** The Prometheus text format: each sample's metric name and labels (comments skipped). */
    record Scrape(Map<String, List<Map<String, String>>> series) {

        private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

        static Scrape parse(String text) {
            Map<String, List<Map<String, String>>> series = new HashMap<>();
            Set<String> names = new HashSet<>();
            for (String line : text.split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                int brace = line.indexOf('{');
                int space = line.indexOf(' ');
                boolean labelled = brace >= 0 && (space < 0 || brace < space);
                String name = line.substring(0, labelled ? brace : space);
                Map<String, String> labels = new HashMap<>();
                if (labelled) {
                    Matcher m = LABEL.matcher(line.substring(brace + 1, line.lastIndexOf('}')));
                    while (m.find()) {
                        labels.put(m.group(1), m.group(2));
                    }
                }
                names.add(name);
                series.computeIfAbsent(name, k -> new ArrayList<>()).add(labels);
            }
            return new Scrape(series);
        }
    }
}
