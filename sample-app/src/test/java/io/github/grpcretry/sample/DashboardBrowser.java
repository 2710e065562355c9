package io.github.grpcretry.sample;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The sample's dashboard in a real, headless Chromium (Debian's chromium + chromium-driver, driven by
 * Selenium), for the browser tests. Chromium and chromedriver are looked up on the PATH (or given with
 * {@code -Dchrome.binary} and {@code -Dwebdriver.chrome.driver}); without them a test is skipped on a
 * developer's machine and fails under {@code CI=true}, where {@code .ci/run} installs them.
 */
final class DashboardBrowser implements AutoCloseable {

    /** The browser: {@code -Dchrome.binary}, else the first of these names on the PATH. */
    static final List<String> CHROMIUM_NAMES = List.of("chromium", "chromium-browser");
    /** Its driver: {@code -Dwebdriver.chrome.driver}, else {@code chromedriver} on the PATH. */
    static final List<String> CHROMEDRIVER_NAMES = List.of("chromedriver");

    final ChromeDriver driver;

    private DashboardBrowser(ChromeDriver driver) {
        this.driver = driver;
    }

    /**
     * Opens the dashboard of the demo on {@code port} and waits until its script is ready. Skips the test
     * (or fails it under CI) without a browser, and skips it when the interceptor engine is not in the
     * build ({@code engineNeededFor} says why the test needs it).
     */
    static DashboardBrowser open(int port, String engineNeededFor) throws IOException {
        Path chromium = RequiredTools.executable("chrome.binary", CHROMIUM_NAMES);
        Path chromedriver = RequiredTools.executable("webdriver.chrome.driver", CHROMEDRIVER_NAMES);
        if (chromium == null || chromedriver == null) {
            String missing = "the real-browser test needs Chromium and its driver: "
                    + (chromium == null ? "no " + String.join(" or ", CHROMIUM_NAMES) : "found " + chromium)
                    + ", " + (chromedriver == null ? "no " + String.join(" or ", CHROMEDRIVER_NAMES) : "found " + chromedriver)
                    + " (searched -Dchrome.binary, -Dwebdriver.chrome.driver and the PATH " + System.getenv("PATH")
                    + "); install Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver,"
                    + " as .ci/run does)";
            RequiredTools.missing(missing);
        }
        Assumptions.assumeTrue(interceptorEngineOnClassPath(), "the interceptor engine is not in this build: " + engineNeededFor);

        Path profile = Files.createTempDirectory("chromium-profile");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium.toFile());
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
                "--user-data-dir=" + profile, "--window-size=1280,1500");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(chromedriver.toFile())
                .usingAnyFreePort().build();
        DashboardBrowser browser = new DashboardBrowser(new ChromeDriver(service, options));
        try {
            browser.driver.get("http://127.0.0.1:" + port + "/"); // the sample answers on 127.0.0.1 only
            new WebDriverWait(browser.driver, Duration.ofSeconds(30)).until(d -> Boolean.TRUE.equals(
                    browser.driver.executeScript("return window.dashboard && window.dashboard.ready === true")));
            return browser;
        } catch (RuntimeException e) {
            browser.close();
            throw e;
        }
    }

    /** Saves what the browser shows as {@code target/<name>}. */
    void screenshot(String name) throws IOException {
        File shot = driver.getScreenshotAs(OutputType.FILE);
        Path target = Path.of("target", name);
        Files.createDirectories(target.getParent());
        Files.copy(shot.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
    }

    @Override
    public void close() {
        driver.quit();
    }

    /** Whether the starter's interceptor engine is in the build (the samples can also run on grpc-java's own). */
    static boolean interceptorEngineOnClassPath() {
        try {
            Class.forName("io.github.grpcretry.attempt.RetryingClientInterceptor");
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
