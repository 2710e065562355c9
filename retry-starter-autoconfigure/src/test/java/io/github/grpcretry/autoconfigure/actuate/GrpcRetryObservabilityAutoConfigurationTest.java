package io.github.grpcretry.autoconfigure.actuate;

import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.GrpcRetryEndpoint;
import io.github.grpcretry.spring.report.RetryStatistics;
import io.github.grpcretry.testing.FixedChannelRetryConfigs;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Conditions and wiring of the observability part of the auto-configuration, in real (non-web) contexts, without
 * net.devh's client: the limiters and channel configurations are the test's own ({@link Limiters}).
 */
class GrpcRetryObservabilityAutoConfigurationTest {

    private static final AutoConfigurations OURS = AutoConfigurations.of(GrpcRetryAutoConfiguration.class);
    private static final AutoConfigurations BOOT_METRICS = AutoConfigurations.of(MetricsAutoConfiguration.class,
            SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class);
    private static final FilteredClassLoader NO_CLIENT = new FilteredClassLoader("net.devh.boot.grpc.client");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withClassLoader(NO_CLIENT)
            .withConfiguration(OURS)
            .withConfiguration(BOOT_METRICS)
            .withUserConfiguration(Limiters.class);

    @Configuration(proxyBeanMethods = false)
    static class Limiters {
        @Bean
        RetryLimiterRegistry retryLimiterRegistry() {
            return new RetryLimiterRegistry();
        }

        @Bean
        ChannelRetryConfigs channelRetryConfigs() {
            return new FixedChannelRetryConfigs(ObservabilityTestConfigs.inventory());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnListener {
        static final RetryStatistics SEEN = new RetryStatistics();

        @Bean
        RetryEventListener applicationListener() {
            return new RetryEventListener() {
                @Override
                public void callStarted(CallTarget target) {
                    SEEN.callStarted(target);
                }
            };
        }
    }

    @Test
    void engineGetsOneCompositeOfStatsMetersAndOwnListeners() {
        runner.withUserConfiguration(OwnListener.class).run(context -> {
            assertThat(context).hasNotFailed();
            RetryEventListener composite = context.getBean("grpcRetryEventListener", RetryEventListener.class);
            assertThat(context.getBean(RetryEventListener.class)).isSameAs(composite);
            assertThat(context.getBeansOfType(RetryEventListener.class)).hasSize(4).containsValues(composite,
                    context.getBean(RetryStatistics.class), context.getBean(MicrometerRetryEventListener.class),
                    context.getBean("applicationListener", RetryEventListener.class));
            assertThat(context).hasBean("grpcRetryDeadlineMeters").hasBean("grpcRetryGuardMeters");
            assertThat(context.getBean("grpcRetryDeadlineMeters")).isInstanceOf(DeadlineEventListener.class);
            assertThat(context.getBean("grpcRetryGuardMeters")).isInstanceOf(GuardEventListener.class);

            CallTarget t = new CallTarget("inventory", "grpc.testing.SimpleService/UnaryRpc");
            composite.callStarted(t);
            composite.attemptStarted(t, AttemptKind.INITIAL, 1);
            composite.attemptEnded(t, AttemptKind.INITIAL, 1, Status.Code.OK);
            composite.callEnded(t, Status.Code.OK, 0, 0, 0, 0);
            // each of the three other listener beans behind the composite, once
            assertThat(context.getBean(RetryStatistics.class).counts("inventory").attempts()).isEqualTo(1);
            assertThat(OwnListener.SEEN.counts("inventory").calls()).isEqualTo(1);
            assertThat(context.getBean(MeterRegistry.class).get("grpc.client.retry.attempts").counter().count())
                    .isEqualTo(1.0);
        });
    }

    @Test
    void withoutAMeterRegistryThereAreNoMetersButStatisticsStillCount() {
        new ApplicationContextRunner().withClassLoader(NO_CLIENT).withConfiguration(OURS)
                .withUserConfiguration(Limiters.class).run(context -> {
            assertThat(context).hasNotFailed()
                    .doesNotHaveBean(MicrometerRetryEventListener.class)
                    .doesNotHaveBean("grpcRetryDeadlineMeters")
                    .hasSingleBean(RetryStatistics.class);
            RetryEventListener composite = context.getBean("grpcRetryEventListener", RetryEventListener.class);
            RetryStatistics statistics = context.getBean(RetryStatistics.class);
            assertThat(composite).isNotSameAs(statistics);
            composite.callStarted(new CallTarget("inventory", "grpc.testing.SimpleService/UnaryRpc"));
            assertThat(statistics.counts("inventory").calls()).isEqualTo(1);
        });
    }

    @Test
    void withoutMicrometerTheMetricsConfigurationBacksOff() {
        new ApplicationContextRunner().withConfiguration(OURS).withUserConfiguration(Limiters.class)
                .withClassLoader(new FilteredClassLoader(MeterRegistry.class, GrpcChannelConfigurer.class))
                .run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(MicrometerRetryEventListener.class)
                        .hasSingleBean(RetryStatistics.class));
    }

    @Test
    void disabledStarterContributesNothing() {
        runner.withPropertyValues("grpc.retry.enabled=false",
                        "management.endpoints.web.exposure.include=grpcretry")
                .run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(RetryStatistics.class)
                        .doesNotHaveBean(MicrometerRetryEventListener.class)
                        .doesNotHaveBean(GrpcRetryHealthIndicator.class)
                        .doesNotHaveBean(GrpcRetryEndpoint.class));
    }

    @Test
    void healthIndicatorCanBeSwitchedOffAndEndpointNeedsExposure() {
        runner.run(context -> assertThat(context).hasSingleBean(GrpcRetryHealthIndicator.class)
                .hasBean("grpcRetryHealthIndicator")
                .doesNotHaveBean(GrpcRetryEndpoint.class));
        runner.withPropertyValues("management.health.grpcRetry.enabled=false",
                        "management.endpoints.web.exposure.include=grpcretry")
                .run(context -> assertThat(context).doesNotHaveBean(GrpcRetryHealthIndicator.class)
                        .hasSingleBean(GrpcRetryEndpoint.class));
    }

    @Test
    void healthIsUpUntilAThrottleRefusesThenConfiguredStatus() {
        runner.withPropertyValues("grpc.retry.health.status-when-throttled=out_of_service").run(context -> {
            GrpcRetryHealthIndicator indicator = context.getBean(GrpcRetryHealthIndicator.class);
            RetryThrottle throttle = context.getBean(RetryLimiterRegistry.class)
                    .throttle("inventory", ObservabilityTestConfigs.THROTTLING).orElseThrow();
            assertThat(indicator.health().getStatus().getCode()).isEqualTo("UP");

            for (int i = 0; i < 5; i++) {
                throttle.onQualifiedFailureThenCheckAllowed(); // 10 -> 5: at the threshold, throttling
            }
            Health throttled = indicator.health();
            assertThat(throttled.getStatus().getCode()).isEqualTo("OUT_OF_SERVICE");
            assertThat(throttled.getDetails().get("throttling")).isEqualTo(java.util.List.of("inventory"));
            @SuppressWarnings("unchecked")
            Map<String, Object> inventory = (Map<String, Object>) ((Map<String, Object>) throttled.getDetails()
                    .get("channels")).get("inventory");
            assertThat(inventory).containsEntry("engine", "interceptor").containsEntry("tokens", 5.0)
                    .containsEntry("maxTokens", 10.0).containsEntry("threshold", 5.0)
                    .containsEntry("throttling", true);

            throttle.onSuccess(); // 5.1 > 5: retries allowed again
            assertThat(indicator.health().getStatus().getCode()).isEqualTo("UP");
        });
    }

    @Test
    void throttlingLeavesHealthUpByDefault() {
        runner.run(context -> {
            RetryThrottle throttle = context.getBean(RetryLimiterRegistry.class)
                    .throttle("inventory", ObservabilityTestConfigs.THROTTLING).orElseThrow();
            for (int i = 0; i < 10; i++) {
                throttle.onQualifiedFailureThenCheckAllowed();
            }
            Health health = context.getBean(GrpcRetryHealthIndicator.class).health();
            assertThat(throttle.isThrottling()).isTrue();
            assertThat(health.getStatus().getCode()).isEqualTo("UP");
            assertThat(health.getDetails()).containsEntry("throttling", java.util.List.of("inventory"));
        });
    }

    @Test
    void gaugesAppearForLaterLimitersAndForConfiguredChannels() {
        runner.run(context -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find("grpc.client.retry.tokens").gauges()).isEmpty();
            assertThat(registry.find("grpc.client.channel.state").tag("client", "inventory").gauges()).hasSize(5);

            RetryLimiterRegistry limiters = context.getBean(RetryLimiterRegistry.class);
            limiters.throttle("inventory", ObservabilityTestConfigs.THROTTLING).orElseThrow()
                    .onQualifiedFailureThenCheckAllowed();
            assertThat(registry.get("grpc.client.retry.tokens").tag("client", "inventory").gauge().value())
                    .isEqualTo(9.0);
            assertThat(registry.get("grpc.client.retry.tokens.max").tag("client", "inventory").gauge().value())
                    .isEqualTo(10.0);
        });
    }
}
