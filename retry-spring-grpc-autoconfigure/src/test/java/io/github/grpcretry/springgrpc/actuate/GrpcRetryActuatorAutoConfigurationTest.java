package io.github.grpcretry.springgrpc.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.GrpcRetryEndpoint;
import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.springgrpc.GrpcRetryAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@link GrpcRetryAutoConfiguration} in an ApplicationContextRunner, after the starter's report. */
class GrpcRetryActuatorAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, GrpcClientAutoConfiguration.class,
                    GrpcRetryAutoConfiguration.class))
            .withPropertyValues("management.endpoints.web.exposure.include=grpcretry");

    @Test
    void theReportGetsTheHealthIndicatorAndTheEndpoint() {
        runner.run(context -> assertThat(context).hasSingleBean(GrpcRetryHealthIndicator.class)
                .hasSingleBean(GrpcRetryEndpoint.class));
    }

    @Test
    void eachSwitchTurnsItsPartOff() {
        runner.withPropertyValues("management.health.grpcretry.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(GrpcRetryHealthIndicator.class).hasSingleBean(GrpcRetryEndpoint.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=health").run(context -> assertThat(context)
                .hasSingleBean(GrpcRetryHealthIndicator.class).doesNotHaveBean(GrpcRetryEndpoint.class));
    }

    @Test
    void disabledRegistersNeither() {
        runner.withPropertyValues("grpc.retry.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(RetryReport.class).doesNotHaveBean(GrpcRetryHealthIndicator.class)
                .doesNotHaveBean(GrpcRetryEndpoint.class));
    }

    @Test
    void ownIndicatorAndEndpointBackTheStartersOff() {
        runner.withBean("grpcRetryHealthIndicator", String.class, () -> "own")
                .withBean("ownEndpoint", GrpcRetryEndpoint.class,
                        () -> new GrpcRetryEndpoint(new RetryReport(io.github.grpcretry.spring.channel.ChannelSetup.Engine.INTERCEPTOR, () -> null, () -> null, () -> null, () -> null)))
                .run(context -> {
                    assertThat(context).doesNotHaveBean(GrpcRetryHealthIndicator.class);
                    assertThat(context).getBean(GrpcRetryEndpoint.class).isSameAs(context.getBean("ownEndpoint"));
                });
    }

    @Test
    void withoutActuatorNeitherAndTheEngineStays() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate", "org.springframework.boot.health"))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(GrpcRetryHealthIndicator.class)
                            .doesNotHaveBean("grpcRetryEndpoint").hasSingleBean(RetryReport.class);
                });
    }
}
