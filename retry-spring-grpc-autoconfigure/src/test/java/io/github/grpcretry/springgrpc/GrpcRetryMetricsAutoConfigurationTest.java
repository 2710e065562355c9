package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.spring.metrics.RetryGauges;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@link GrpcRetryAutoConfiguration} in an ApplicationContextRunner, on the application's registry. */
class GrpcRetryMetricsAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, GrpcClientAutoConfiguration.class,
                    GrpcRetryAutoConfiguration.class));

    @Test
    void aMeterRegistryGetsEveryMeterOfTheStarter() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context).hasSingleBean(MicrometerRetryEventListener.class)
                    .hasSingleBean(RetryGauges.ChannelStates.class);
            assertThat(context).getBean("grpcRetryDeadlineMeters").isInstanceOf(DeadlineEventListener.class);
            assertThat(context).getBean("grpcRetryGuardMeters").isInstanceOf(GuardEventListener.class);
            assertThat(context).getBean("grpcRetryLimiterGauges").isInstanceOf(MeterBinder.class);
        });
    }

    @Test
    void noMetersWithoutARegistryBean() {
        runner.run(context -> assertThat(context).doesNotHaveBean(GrpcRetryAutoConfiguration.Metrics.class)
                .doesNotHaveBean(MicrometerRetryEventListener.class));
    }

    @Test
    void disabledRegistersNoMeters() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).withPropertyValues("grpc.retry.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(MicrometerRetryEventListener.class)
                        .doesNotHaveBean("grpcRetryLimiterGauges"));
    }

    @Test
    void ownGaugesAndListenerBackTheStartersOff() {
        MeterRegistry registry = new SimpleMeterRegistry();
        MicrometerRetryEventListener own = new MicrometerRetryEventListener(registry);
        MeterBinder gauges = RetryGauges.limiters(new RetryLimiterRegistry());
        runner.withBean(MeterRegistry.class, () -> registry)
                .withBean("ownListener", MicrometerRetryEventListener.class, () -> own)
                .withBean("grpcRetryLimiterGauges", MeterBinder.class, () -> gauges)
                .run(context -> {
                    assertThat(context).getBean(MicrometerRetryEventListener.class).isSameAs(own);
                    assertThat(context).getBean("grpcRetryLimiterGauges").isSameAs(gauges);
                });
    }

    @Test
    void withoutMicrometerNoMetersAndTheEngineStays() {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer.core")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(GrpcRetryAutoConfiguration.Metrics.class)
                    .hasSingleBean(GrpcRetryClientInterceptor.class);
        });
    }
}
