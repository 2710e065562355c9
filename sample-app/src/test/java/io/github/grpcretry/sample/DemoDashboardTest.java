package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The demo as a user meets it: the whole application on a random HTTP port with its gRPC backend on
 * a free loopback port, the traffic generator running, the REST API and Actuator over HTTP, and the
 * dashboard in a real Chromium (Debian's chromium + chromium-driver, driven by Selenium).
 *
 * <p>Chromium and chromedriver are looked up on the PATH (or given with {@code -Dchrome.binary} and
 * {@code -Dwebdriver.chrome.driver}). Without them the browser test is skipped on a developer's
 * machine, but fails when the environment says {@code CI=true} (as {@code .ci/run} does), so CI
 * cannot pass without having run it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "sample.showcase.enabled=false",
        "sample.demo.rate=50",
        "sample.demo.failure-rate=0",
        "sample.demo.slow-share=0",
        "sample.demo.strategy=THROTTLED",
        "logging.level.io.github.grpcretry=WARN",
        "logging.level.io.opentelemetry.exporter.logging=WARN"})
@AutoConfigureObservability // Boot's tests turn metrics export (the Prometheus scrape) off otherwise
@DirtiesContext // closed after this class: its generator must not keep loading the machine under the next test class
class DemoDashboardTest {

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry registry) throws IOException {
        SampleGrpcPort.free(registry);
    }

    @LocalServerPort
    int port;

    @Autowired
    TestRestTemplate http;

    private final ObjectMapper json = new ObjectMapper();

    /** Both tests share one running demo: each starts from a healthy backend on retry + throttling. */
    @BeforeEach
    void healthyBackend() {
        ResponseEntity<String> r = http.postForEntity("/api/demo/settings",
                Map.of("rate", 50, "failureRate", 0, "slowShare", 0, "strategy", "THROTTLED"), String.class);
        assertThat(r.getStatusCode()).isEqualTo(HttpStatus.OK);
    }

    @Test
    void restApiValidatesAndServesTheSeriesAndActuatorIsExposed() throws Exception {
        ResponseEntity<String> overview = http.getForEntity("/api/demo", String.class);
        assertThat(overview.getStatusCode()).isEqualTo(HttpStatus.OK);
        JsonNode o = json.readTree(overview.getBody());
        assertThat(o.path("strategies")).hasSize(5);
        assertThat(o.path("strategies").findValuesAsText("channel"))
                .containsExactly("flaky-none", "flaky-retry", "flaky-throttled", "flaky-budget", "flaky-hedging");

        ResponseEntity<String> bad = http.postForEntity("/api/demo/settings", Map.of("failureRate", 1.5), String.class);
        assertThat(bad.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(bad.getBody()).contains("failureRate must be in [0, 1]");
        ResponseEntity<String> badStrategy = http.postForEntity("/api/demo/settings", Map.of("strategy", "NOPE"), String.class);
        assertThat(badStrategy.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);

        // traffic flows: points appear once a second with calls and attempts reaching the backend
        JsonNode last = waitForPoints(System.currentTimeMillis() + 2000, Duration.ofSeconds(30));
        assertThat(last.path("calls").asDouble()).isGreaterThan(10);
        assertThat(last.path("attempts").asDouble()).isGreaterThan(10);
        assertThat(last.path("successRate").asDouble()).isEqualTo(100.0);

        ResponseEntity<String> health = http.getForEntity("/actuator/health", String.class);
        assertThat(health.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(health.getBody()).contains("grpcRetry", "flaky-throttled");
        ResponseEntity<String> grpcretry = http.getForEntity("/actuator/grpcretry", String.class);
        assertThat(grpcretry.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(grpcretry.getBody()).contains("flaky-none", "flaky-retry", "flaky-throttled", "flaky-budget", "flaky-hedging");
        assertThat(http.getForEntity("/actuator/metrics/sample.demo.calls", String.class).getStatusCode()).isEqualTo(HttpStatus.OK);
        String scrape = http.getForObject("/actuator/prometheus", String.class);
        assertThat(scrape).contains("sample_demo_calls_total", "sample_flaky_arrivals_total", "sample_demo_latency_seconds",
                "grpc_client_retry_attempts_total", "grpc_client_retry_tokens");
        assertThat(http.getForEntity("/", String.class).getBody()).contains("uPlot.iife.min.js");
        assertThat(http.getForEntity("/webjars/uplot/1.6.30/dist/uPlot.iife.min.js", String.class).getStatusCode())
                .isEqualTo(HttpStatus.OK);
    }

    /** The first point that ends after {@code after} (epoch ms) and has calls. */
    private JsonNode waitForPoints(long after, Duration timeout) throws Exception {
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            JsonNode series = json.readTree(http.getForObject("/api/demo/series?since=" + after, String.class));
            for (JsonNode p : series) {
                if (p.path("calls").asDouble() > 0) {
                    return p;
                }
            }
            assertThat(System.nanoTime()).as("points of the series within " + timeout).isLessThan(end);
            Thread.sleep(250); // polls the series (a point a second), bounded by the timeout
        }
    }

    @Test
    void dashboardShowsTheBucketDrainAndTheAmplificationFallBackToOne() throws Exception {
        try (DashboardBrowser browser = DashboardBrowser.open(port, "the token level is not observable")) {
            ChromeDriver driver = browser.driver;
            JavascriptExecutor js = driver;
            WebDriverWait wait = new WebDriverWait(driver, Duration.ofSeconds(30));

            // healthy backend: the bucket is full, above its threshold, and nothing is amplified
            wait.until(d -> lastPlotted(js, "tokens", 1) != null && lastPlotted(js, "amplification", 1) != null);
            double threshold = lastPlotted(js, "tokens", 2);
            // (a cold start on a loaded machine can have attempts past the 500 ms per-attempt timeout, which
            // take tokens; every success gives 0.1 back, so at 50 calls/s the bucket is above it within seconds)
            new WebDriverWait(driver, Duration.ofSeconds(60)).until(d -> lastPlotted(js, "tokens", 1) > threshold);
            assertThat(driver.findElement(By.id("status")).getText()).contains("retry + throttling");

            // the user moves the failure rate to 100 % (strategy retry + throttling) and applies
            WebElement failure = driver.findElement(By.id("failureRate"));
            failure.clear();
            failure.sendKeys("100");
            new Select(driver.findElement(By.id("strategy"))).selectByValue("THROTTLED");
            driver.findElement(By.id("apply")).click();
            wait.until(d -> Number.class.isInstance(js.executeScript("return window.dashboard.applied"))
                    && ((Number) js.executeScript("return window.dashboard.applied")).intValue() >= 1);
            long appliedAt = System.currentTimeMillis();

            // the plotted token level falls to (at or below) the threshold ...
            new WebDriverWait(driver, Duration.ofSeconds(20)).until(d -> {
                Double tokens = lastPlotted(js, "tokens", 1);
                return tokens != null && tokens <= threshold;
            });
            // ... and the plotted amplification returns to 1 (three points in a row within 1 ± 0.1)
            new WebDriverWait(driver, Duration.ofSeconds(30)).until(d -> {
                List<Double> amp = plotted(js, "amplification", 1, 3);
                return amp.size() == 3 && amp.stream().allMatch(a -> a != null && a >= 0.9 && a <= 1.1)
                        && System.currentTimeMillis() - appliedAt > 3000;
            });
            assertThat(lastPlotted(js, "success", 1)).isLessThanOrEqualTo(5.0);
            // the waterfall of the last retried calls: the calls retried before the bucket fell to its threshold
            // show two or more attempt bars (the throttle lets no later call retry, so they stay on it)
            new WebDriverWait(driver, Duration.ofSeconds(20)).until(d -> maxWaterfallBars(js) >= 2);
            assertThat(((Number) js.executeScript("return window.waterfall.rows.length")).intValue()).isBetween(1, 20);
            WebElement waterfall = driver.findElement(By.id("waterfall-section"));
            js.executeScript("arguments[0].scrollIntoView()", waterfall);
            Path waterfallShot = Path.of("target", "waterfall-browser-test.png");
            Files.createDirectories(waterfallShot.getParent());
            Files.copy(waterfall.getScreenshotAs(OutputType.FILE).toPath(), waterfallShot, StandardCopyOption.REPLACE_EXISTING);
            js.executeScript("window.scrollTo(0, 0)");
            Thread.sleep(1500); // one more poll so the screenshot shows the settled state
            browser.screenshot("dashboard-browser-test.png");
            assertThat(Files.size(Path.of("target", "dashboard-browser-test.png"))).isGreaterThan(10_000);
        }
    }

    /** The most attempt bars the waterfall drew on one row in its last draw (0 when none). */
    private static int maxWaterfallBars(JavascriptExecutor js) {
        Object v = js.executeScript("const w = window.waterfall; if (!w || !w.drawn) return 0;"
                + " return w.drawn.reduce((m, r) => Math.max(m, r.bars), 0);");
        return ((Number) v).intValue();
    }

    /** The last {@code n} y-values of one series as the chart plots them (uPlot's own data arrays). */
    @SuppressWarnings("unchecked")
    private static List<Double> plotted(JavascriptExecutor js, String chart, int series, int n) {
        Object v = js.executeScript("const c = window.dashboard.charts[arguments[0]]; if (!c || !c.data[arguments[1]]) return [];"
                + " return c.data[arguments[1]].slice(-arguments[2]);", chart, series, n);
        return ((List<Object>) v).stream().map(x -> x == null ? null : ((Number) x).doubleValue()).toList();
    }

    private static Double lastPlotted(JavascriptExecutor js, String chart, int series) {
        List<Double> last = plotted(js, chart, series, 1);
        return last.isEmpty() ? null : last.get(0);
    }
}
