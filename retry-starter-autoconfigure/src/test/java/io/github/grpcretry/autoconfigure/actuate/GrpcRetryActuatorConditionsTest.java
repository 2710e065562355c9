package io.github.grpcretry.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import io.github.grpcretry.spring.GrpcRetryEndpoint;
import io.github.grpcretry.spring.report.ChannelStateSource;
import io.github.grpcretry.spring.report.RetryStatistics;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The conditions of the events, health and endpoint auto-configurations, after the starter's and net.devh's
 * client auto-configuration, in an ApplicationContextRunner.
 */
class GrpcRetryActuatorConditionsTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class))
            .withPropertyValues("management.endpoints.web.exposure.include=grpcretry");

    @Test
    void enabledRegistersStatisticsHealthAndEndpoint() {
        runner.run(context -> assertThat(context).hasSingleBean(RetryStatistics.class)
                .hasSingleBean(ChannelStateSource.class).hasBean("grpcRetryHealthIndicator")
                .hasSingleBean(GrpcRetryEndpoint.class));
    }

    @Test
    void disabledRegistersNone() {
        runner.withPropertyValues("grpc.retry.enabled=false").run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(RetryStatistics.class).doesNotHaveBean("grpcRetryHealthIndicator")
                .doesNotHaveBean(GrpcRetryEndpoint.class));
    }

    @Test
    void ownBeansBackTheStartersOff() {
        HealthIndicator own = () -> Health.up().build();
        ChannelStateSource states = ChannelStateSource.NONE;
        RetryStatistics statistics = new RetryStatistics();
        runner.withBean("grpcRetryHealthIndicator", HealthIndicator.class, () -> own)
                .withBean("ownStates", ChannelStateSource.class, () -> states)
                .withBean("ownStatistics", RetryStatistics.class, () -> statistics)
                .run(context -> {
                    assertThat(context).getBean("grpcRetryHealthIndicator").isSameAs(own);
                    assertThat(context).getBean(ChannelStateSource.class).isSameAs(states);
                    assertThat(context).getBean(RetryStatistics.class).isSameAs(statistics);
                });
    }

    @Test
    void withoutActuatorNoHealthNorEndpoint() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate")).run(context -> assertThat(context)
                .hasNotFailed().hasSingleBean(RetryStatistics.class).doesNotHaveBean("grpcRetryHealthIndicator")
                .doesNotHaveBean(GrpcRetryEndpoint.class));
    }
}
