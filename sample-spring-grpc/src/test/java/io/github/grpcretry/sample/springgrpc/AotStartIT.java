package io.github.grpcretry.sample.springgrpc;

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
 * The sample started from the code Spring AOT generated at build time ({@code spring-boot:process-aot},
 * after the unit tests; failsafe sets {@code spring.aot.enabled=true}): its channels retry through the
 * engine, and the meters show it.
 */
class AotStartIT {

    @Test
    void startsFromTheGeneratedInitializerAndRetriesThroughTheEngine() throws Exception {
        assertThat(AotDetector.useGeneratedArtifacts()).isTrue();
        // the initializer process-aot generated; without it SpringApplication refuses to start in AOT mode
        assertThat(Class.forName(SpringGrpcSampleApplication.class.getName() + "__ApplicationContextInitializer"))
                .isNotNull();
        int grpcPort;
        try (ServerSocket s = new ServerSocket(0)) {
            grpcPort = s.getLocalPort();
        }
        SpringApplication app = new SpringApplication(SpringGrpcSampleApplication.class);
        // AOT mode looks for the initializer of the main class: the sample's, not the test runner's
        app.setMainApplicationClass(SpringGrpcSampleApplication.class);
        try (ConfigurableApplicationContext ctx = app.run("--server.port=0", "--spring.grpc.server.port=" + grpcPort)) {
            Showcase showcase = ctx.getBean(Showcase.class);
            assertThat(showcase.rows().get(1)).isEqualTo(new Showcase.Row("via-properties", 20, 25, 5.0, 6.7));
            assertThat(showcase.rows().get(2)).isEqualTo(new Showcase.Row("via-boot", 20, 25, 5.0, 6.7));
            // the FeedResumption bean, registered by the generated code, resumed the showcase's stream
            assertThat(showcase.feed().complete(Showcase.FEED_ITEMS)).as(showcase.feed().text()).isTrue();

            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            double retried = meters.find("grpc.client.retry.attempts").tag("kind", "retry").counters().stream()
                    .mapToDouble(Counter::count).sum();
            assertThat(retried).isEqualTo(10.0);
            // both retrying channels call the same target: one A96 series, 10 retries in all
            DistributionSummary retries = meters.get("grpc.client.call.retries")
                    .tag("grpc.method", "grpc.testing.SimpleService/UnaryRpc")
                    .tag("grpc.target", "dns:///127.0.0.1:" + grpcPort).summary();
            assertThat(retries.totalAmount()).isEqualTo(10.0);
        }
    }
}
