package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The dashboard's stall control in a real Chromium (the same set-up as {@link DemoDashboardTest}): the
 * demo's backend has 4 workers × 40 ms (100 calls/s) and the generator offers 50 calls/s with a 2 s
 * deadline. After a 2 s stall on "retry" (3 attempts, 500 ms per attempt) the queue the chart plots
 * rises and stays up: 3 × 50 attempts/s exceed the capacity, so the backlog never drains. On
 * "retry + budget" the same stall's queue returns to empty (docs/metastable.md has the model).
 * Without Chromium the browser part is skipped, except under {@code CI=true}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "sample.showcase.enabled=false",
        "sample.demo.rate=50",
        "sample.demo.failure-rate=0",
        "sample.demo.slow-share=0",
        "sample.demo.strategy=NONE",
        "logging.level.io.github.grpcretry=WARN"})
@DirtiesContext // its own backend and generator: closed after this class, so they do not load the next one
class DemoStallDashboardTest {

    /** Calls waiting that count as "up": a second and a half of the backend's work. */
    static final int UP = 150;
    /** Calls waiting that count as "empty" (a few calls in line at 50 % load). */
    static final int EMPTY = 5;

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry registry) throws IOException {
        SampleGrpcPort.free(registry);
    }

    @LocalServerPort
    int port;

    @Autowired
    TestRestTemplate http;

    private final ObjectMapper json = new ObjectMapper();

    @Test
    void serverApiReportsTheCapacityAndValidatesTheStall() throws Exception {
        JsonNode s = json.readTree(http.getForObject("/api/demo/server", String.class));
        assertThat(s.path("workers").asInt()).isEqualTo(4);
        assertThat(s.path("serviceTimeMs").asInt()).isEqualTo(40);
        assertThat(s.path("capacity").asDouble()).isEqualTo(100.0);
        ResponseEntity<String> bad = http.postForEntity("/api/demo/server/stall", Map.of("seconds", 0), String.class);
        assertThat(bad.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(bad.getBody()).contains("seconds must be in (0, 30]");
    }

    @Test
    void aStallOnRetryStaysUpAndOnTheBudgetDrains() throws Exception {
        try (DashboardBrowser browser = DashboardBrowser.open(port, "no per-attempt receive timeout, no budget")) {
            ChromeDriver driver = browser.driver;
            JavascriptExecutor js = driver;
            assertThat(driver.findElement(By.id("serverState")).getText()).contains("4 workers × 40 ms = 100 calls/s");

            // healthy on "retry" first. A cold or overloaded machine can itself be the trigger that tips plain
            // retries over (that is the point of the experiment), so the strategy is re-armed from "none" (a
            // strategy change cancels the calls in flight and empties the queue) until it starts healthy
            armRetry(driver, js);

            // stall on "retry": the queue rises past UP and stays up, goodput near zero
            stall(driver, js, 1);
            until(driver, js, 30, () -> {
                Double q = last(js, 1);
                return q != null && q >= UP;
            }, "the queue up after a stall on retry");
            int pointsAtUp = points(js);
            // five more seconds: every one still up and growing overall, almost nothing succeeding
            until(driver, js, 60, () -> points(js) >= pointsAtUp + 5, "five more points");
            List<Double> queue = plotted(js, 1, 6);
            assertThat(queue).as("queue after the stall on retry").allMatch(q -> q != null && q >= UP);
            assertThat(queue.get(queue.size() - 1)).as("the backlog grows: 3 × 50 attempts/s > 100/s").isGreaterThan(queue.get(0));
            List<Double> goodput = plotted(js, 4, 3);
            List<Double> offered = plotted(js, 3, 3);
            for (int i = 0; i < 3; i++) {
                assertThat(goodput.get(i)).as("goodput on retry after the stall").isLessThanOrEqualTo(0.05 * offered.get(i));
            }
            browser.screenshot("dashboard-stall-retry-browser-test.png");

            // switch to "retry + budget": the old strategy's calls are cancelled and the queue emptied ...
            apply(driver, js, "BUDGET");
            until(driver, js, 60, () -> healthy(js), "healthy on retry + budget");

            // ... and the same stall drains: the queue rises, then is empty again with every call OK
            stall(driver, js, 2);
            until(driver, js, 30, () -> {
                Double max = last(js, 2);
                return max != null && max >= 50;
            }, "the queue up during a stall on retry + budget");
            until(driver, js, 60, () -> healthy(js), "the queue empty again on retry + budget");
            browser.screenshot("dashboard-stall-budget-browser-test.png");
        }
    }

    /** Selects {@code strategy} in the form and applies it. */
    private static void apply(ChromeDriver driver, JavascriptExecutor js, String strategy) {
        int applied = ((Number) js.executeScript("return window.dashboard.applied || 0")).intValue();
        new Select(driver.findElement(By.id("strategy"))).selectByValue(strategy);
        driver.findElement(By.id("apply")).click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(d -> ((Number) js.executeScript("return window.dashboard.applied || 0")).intValue() > applied);
    }

    /** "retry", healthy: from "none" (healthy), switched to "retry", healthy within 20 s; up to three tries. */
    private static void armRetry(ChromeDriver driver, JavascriptExecutor js) {
        for (int attempt = 1; ; attempt++) {
            apply(driver, js, "NONE");
            until(driver, js, 60, () -> healthy(js), "healthy on none");
            apply(driver, js, "RETRY");
            try {
                until(driver, js, 20, () -> healthy(js), "healthy on retry");
                return;
            } catch (AssertionError e) {
                if (attempt == 3) {
                    throw e;
                }
            }
        }
    }

    /** Waits for {@code condition}; on a timeout, fails with the last points the queue chart plotted. */
    private static void until(ChromeDriver driver, JavascriptExecutor js, int seconds, java.util.function.BooleanSupplier condition,
            String what) {
        try {
            new WebDriverWait(driver, Duration.ofSeconds(seconds)).until(d -> condition.getAsBoolean());
        } catch (org.openqa.selenium.TimeoutException e) {
            Object recent = js.executeScript("return JSON.stringify(window.dashboard.points.slice(-8).map(p =>"
                    + " ({strategy: p.strategy, calls: p.calls, ok: p.ok, attempts: p.attempts, queue: p.queue})))");
            throw new AssertionError("no " + what + " within " + seconds + " s; last points: " + recent, e);
        }
    }

    private static void stall(ChromeDriver driver, JavascriptExecutor js, int count) {
        driver.findElement(By.id("stall")).click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(d -> ((Number) js.executeScript("return window.dashboard.stalls || 0")).intValue() >= count);
    }

    /** The last three points: queue at most {@link #EMPTY} and goodput at least 90 % of the offered calls. */
    private static boolean healthy(JavascriptExecutor js) {
        List<Double> queue = plotted(js, 1, 3);
        List<Double> offered = plotted(js, 3, 3);
        List<Double> goodput = plotted(js, 4, 3);
        if (queue.size() < 3 || offered.size() < 3 || goodput.size() < 3) {
            return false;
        }
        for (int i = 0; i < 3; i++) {
            if (queue.get(i) == null || offered.get(i) == null || goodput.get(i) == null || queue.get(i) > EMPTY
                    || offered.get(i) < 10 || goodput.get(i) < 0.9 * offered.get(i)) {
                return false;
            }
        }
        return true;
    }

    private static int points(JavascriptExecutor js) {
        return ((Number) js.executeScript("return window.dashboard.charts.queue.data[0].length")).intValue();
    }

    /** The last {@code n} values of series {@code series} of the queue chart, as plotted. */
    @SuppressWarnings("unchecked")
    private static List<Double> plotted(JavascriptExecutor js, int series, int n) {
        Object v = js.executeScript("const c = window.dashboard.charts.queue; if (!c || !c.data[arguments[0]]) return [];"
                + " return c.data[arguments[0]].slice(-arguments[1]);", series, n);
        return ((List<Object>) v).stream().map(x -> x == null ? null : ((Number) x).doubleValue()).toList();
    }

    private static Double last(JavascriptExecutor js, int series) {
        List<Double> l = plotted(js, series, 1);
        return l.isEmpty() ? null : l.get(0);
    }
}
