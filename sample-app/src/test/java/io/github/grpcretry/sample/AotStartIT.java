package io.github.grpcretry.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import org.springframework.aot.AotDetector;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The Spring Boot 3.5 sample started from the code Spring AOT generated at build time
 * ({@code spring-boot:process-aot}, after the unit tests; failsafe sets {@code spring.aot.enabled=true}): its
 * start-up showcase retries through the engine on the net.devh channel {@code flaky}, and the meters show it.
 */
class AotStartIT {

    @Test
    void startsFromTheGeneratedInitializerAndRetriesThroughTheEngine() throws Exception {
        assertThat(AotDetector.useGeneratedArtifacts()).isTrue();
        assertThat(Class.forName(SampleApplication.class.getName() + "__ApplicationContextInitializer")).isNotNull();
        int grpcPort;
        try (ServerSocket s = new ServerSocket(0)) {
            grpcPort = s.getLocalPort();
        }
        SpringApplication app = new SpringApplication(SampleApplication.class);
        // AOT mode looks for the initializer of the main class: the sample's, not the test runner's
        app.setMainApplicationClass(SampleApplication.class);
        try (ConfigurableApplicationContext ctx = app.run("--server.port=0", "--sample.grpc-port=" + grpcPort,
                "--sample.demo.rate=1")) {
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            // the showcase: two failures then OK (2 retries), a pushback of 300 ms (1 retry); the others are not retried
            double retried = meters.find("grpc.client.retry.attempts").tag("client", "flaky").tag("kind", "retry")
                    .counters().stream().mapToDouble(Counter::count).sum();
            assertThat(retried).isEqualTo(3.0);
            DistributionSummary retries = meters.get("grpc.client.call.retries")
                    .tag("grpc.method", "sample.flaky.Flaky/Call")
                    .tag("grpc.target", "static://127.0.0.1:" + grpcPort).summary();
            assertThat(retries.totalAmount()).isGreaterThanOrEqualTo(3.0);
            // the FeedResumption bean, registered by the generated code, resumed the showcase's stream
            io.github.grpcretry.sample.lab.FeedReader.Read feed = ctx.getBean(
                    io.github.grpcretry.sample.client.RetryShowcase.class).feed();
            assertThat(feed.complete(30)).as(feed.text()).isTrue();
        }
    }
}
