package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.grpcretry.testing.LoopbackOnly;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The running sample (tracing on, as it ships) scraped by a real Prometheus: the one Debian ships (2.42,
 * installed by {@code .ci/run} for promtool) reads the sample's OpenMetrics scrape without an error, which
 * it does not when exemplars sit on {@code _count} lines (docs/observability.md). And the sample listens on
 * loopback only.
 *
 * <p>{@code prometheus} comes from {@code -Dprometheus.binary} or the PATH; without it the scrape test is
 * skipped on a developer's machine and fails under {@code CI=true}, as the promtool tests do.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "sample.showcase.enabled=false",
        "sample.demo.rate=20",
        "logging.level.io.github.grpcretry=WARN",
        "logging.level.io.opentelemetry.exporter.logging=WARN"})
@AutoConfigureObservability // tracing on (exemplars written) and the Prometheus scrape exported, as the sample runs
@DirtiesContext // closed after this class: its generator must not keep loading the machine under the next test class
class PrometheusScrapeOfTheSampleTest {

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry registry) throws IOException {
        SampleGrpcPort.free(registry);
    }

    @LocalServerPort
    int port;

    @Value("${sample.grpc-port}")
    int grpcPort;

    @TempDir
    Path dir;

    @Test
    void theSampleListensOnLoopbackOnly() {
        if (LoopbackOnly.canTell()) {
            for (int p : new int[] {port, grpcPort}) {
                assertThat(LoopbackOnly.listeningAddresses(p)).as("listening sockets of port " + p)
                        .isNotEmpty().allMatch(LoopbackOnly::isLoopback);
            }
        }
    }

    @Test
    void debiansPrometheusScrapesTheSampleWithoutAnError() throws Exception {
        Path prometheus = RequiredTools.executable("prometheus.binary", List.of("prometheus"));
        if (prometheus == null) {
            RequiredTools.missing("the scrape test needs prometheus: none found (searched -Dprometheus.binary and the PATH "
                    + System.getenv("PATH") + "); install Debian's prometheus package (apt-get install -y prometheus,"
                    + " as .ci/run does)");
        }
        int webPort;
        try (ServerSocket s = new ServerSocket(0)) {
            webPort = s.getLocalPort();
        }
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 2s
                  scrape_timeout: 2s
                scrape_configs:
                  - job_name: sample
                    metrics_path: /actuator/prometheus
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """.formatted(port));
        Process process = new ProcessBuilder(prometheus.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + webPort)
                .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
        try {
            HttpClient http = HttpClient.newHttpClient();
            String api = "http://127.0.0.1:" + webPort + "/api/v1/";
            // three scrapes: each one's health and error is the target's state. A scrape that timed out on a busy
            // machine says nothing about the format and is not counted; any other error fails the test
            JsonNode target = null;
            long scrapes = 0;
            String lastScrape = "";
            long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (scrapes < 3 && System.nanoTime() < end) {
                assertThat(process.isAlive()).as("prometheus runs: " + log()).isTrue();
                target = activeTarget(http, api);
                if (target != null && !target.path("lastScrape").asText().startsWith("0001")
                        && !target.path("lastScrape").asText().equals(lastScrape)) {
                    lastScrape = target.path("lastScrape").asText();
                    String error = target.path("lastError").asText();
                    if (!error.contains("context deadline exceeded")) {
                        assertThat(error).as("the scrape's error").isEmpty();
                        assertThat(target.path("health").asText()).isEqualTo("up");
                        scrapes++;
                    }
                }
                Thread.sleep(200); // polls Prometheus' API, bounded by the deadline above
            }
            assertThat(scrapes).as("scrapes seen; last target state " + target + "; " + log()).isEqualTo(3);
            JsonNode result = new ObjectMapper().readTree(http.send(HttpRequest.newBuilder(URI.create(api + "query?query="
                    + URLEncoder.encode("grpc_client_retry_attempts_total{job=\"sample\"}", StandardCharsets.UTF_8)))
                    .build(), HttpResponse.BodyHandlers.ofString()).body()).path("data").path("result");
            assertThat(result.size()).as("series of grpc_client_retry_attempts_total stored").isPositive();
        } finally {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    /** The one active target of the running Prometheus; null while its API does not answer yet. */
    private static JsonNode activeTarget(HttpClient http, String api) throws InterruptedException {
        try {
            JsonNode targets = new ObjectMapper().readTree(http.send(HttpRequest.newBuilder(URI.create(api + "targets"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body()).path("data").path("activeTargets");
            return targets.size() == 1 ? targets.get(0) : null;
        } catch (IOException e) {
            return null;
        }
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("prometheus.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
