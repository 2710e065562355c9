package io.github.grpcretry.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.github.grpcretry.observation.ObservationAttemptObserver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.resilience4j.Resilience4jRetryDeciderSource;
import io.github.grpcretry.spring.channel.Resilience4jRetryReferences;
import io.github.grpcretry.spring.report.RetryStatistics;
import io.github.resilience4j.retry.RetryRegistry;
import io.grpc.Context;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ThreadLocalAccessor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The configurations both lines import, each alone in an ApplicationContextRunner: what it registers, the
 * application's own bean backing each of them off, and a missing optional library. These tests run on
 * Spring Boot 3.5.7 here and on 4.1.2 in retry-spring-boot4-test.
 */
class SharedConfigurationsTest {

    private static final AttemptObserver NO_OBSERVER = target -> null;

    private static Resilience4jSettings settings(Map<String, String> instances) {
        return new Resilience4jSettings(instances, false, "declare a RetryRegistry bean");
    }

    @Test
    void engineConfigurationMakesTheRegistryAndTheScheduler() {
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryEngineConfiguration.class)
                .run(context -> {
                    assertThat(context).hasSingleBean(RetryLimiterRegistry.class).hasSingleBean(RetryScheduler.class);
                    assertThat(context).getBean("grpcRetryScheduler").isInstanceOf(RetryScheduler.class);
                });
    }

    @Test
    void ownRegistryAndSchedulerBackTheEnginesOff() {
        RetryLimiterRegistry limiters = new RetryLimiterRegistry();
        try (RetryScheduler scheduler = RetryScheduler.create(1, "own")) {
            new ApplicationContextRunner().withUserConfiguration(GrpcRetryEngineConfiguration.class)
                    .withBean("ownLimiters", RetryLimiterRegistry.class, () -> limiters)
                    .withBean("ownScheduler", RetryScheduler.class, () -> scheduler)
                    .run(context -> {
                        assertThat(context).getBean(RetryLimiterRegistry.class).isSameAs(limiters);
                        assertThat(context).getBean(RetryScheduler.class).isSameAs(scheduler);
                        assertThat(context).doesNotHaveBean("grpcRetryLimiterRegistry")
                                .doesNotHaveBean("grpcRetryScheduler");
                    });
        }
    }

    @Test
    void ownStatisticsBeanBacksTheStartersOff() {
        RetryStatistics own = new RetryStatistics();
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryEventsConfiguration.class)
                .withBean("ownStatistics", RetryStatistics.class, () -> own)
                .run(context -> {
                    assertThat(context).getBean(RetryStatistics.class).isSameAs(own);
                    assertThat(context).doesNotHaveBean("grpcRetryStatistics");
                });
    }

    @Test
    void metersConfigurationRegistersTheThreeListeners() {
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryMetersConfiguration.class)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> {
                    assertThat(context).hasSingleBean(MicrometerRetryEventListener.class);
                    assertThat(context).getBean("grpcRetryDeadlineMeters").isInstanceOf(DeadlineEventListener.class);
                    assertThat(context).getBean("grpcRetryGuardMeters").isInstanceOf(GuardEventListener.class);
                });
    }

    @Test
    void ownMeterListenersBackTheStartersOff() {
        MeterRegistry registry = new SimpleMeterRegistry();
        MicrometerRetryEventListener own = new MicrometerRetryEventListener(registry);
        DeadlineEventListener deadlines = MicrometerRetryEventListener.deadlineMeters(registry);
        GuardEventListener guard = MicrometerRetryEventListener.guardMeters(registry);
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryMetersConfiguration.class)
                .withBean(MeterRegistry.class, () -> registry)
                .withBean("ownMicrometerListener", MicrometerRetryEventListener.class, () -> own)
                .withBean("grpcRetryDeadlineMeters", DeadlineEventListener.class, () -> deadlines)
                .withBean("grpcRetryGuardMeters", GuardEventListener.class, () -> guard)
                .run(context -> {
                    assertThat(context).getBean(MicrometerRetryEventListener.class).isSameAs(own);
                    assertThat(context).doesNotHaveBean("grpcRetryMicrometerListener");
                    assertThat(context).getBean("grpcRetryDeadlineMeters").isSameAs(deadlines);
                    assertThat(context).getBean("grpcRetryGuardMeters").isSameAs(guard);
                });
    }

    @Test
    void observationRegistryGetsTheAttemptObserver() {
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryObservationConfiguration.class)
                .withBean(ObservationRegistry.class, ObservationRegistry::create)
                .run(context -> assertThat(context).hasSingleBean(ObservationAttemptObserver.class));
    }

    @Test
    void noAttemptObserverWithoutRegistryOrWhenSwitchedOff() {
        ApplicationContextRunner runner = new ApplicationContextRunner()
                .withUserConfiguration(GrpcRetryObservationConfiguration.class);
        runner.run(context -> assertThat(context).doesNotHaveBean(AttemptObserver.class));
        ApplicationContextRunner withRegistry = runner.withBean(ObservationRegistry.class, ObservationRegistry::create);
        withRegistry.withPropertyValues("grpc.retry.observation.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(AttemptObserver.class));
        withRegistry.withPropertyValues("grpc.retry.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(AttemptObserver.class));
    }

    @Test
    void ownAttemptObserverBacksTheStartersOff() {
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryObservationConfiguration.class)
                .withBean(ObservationRegistry.class, ObservationRegistry::create)
                .withBean("ownObserver", AttemptObserver.class, () -> NO_OBSERVER)
                .run(context -> {
                    assertThat(context).getBean(AttemptObserver.class).isSameAs(NO_OBSERVER);
                    assertThat(context).doesNotHaveBean(ObservationAttemptObserver.class);
                });
    }

    @Test
    void withoutMicrometerObservationNoAttemptObserver() {
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryObservationConfiguration.class)
                .withClassLoader(new FilteredClassLoader("io.micrometer.observation"))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(AttemptObserver.class);
                });
    }

    @Test
    void aRetryRegistryBeanBecomesTheDeciderSource() {
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryResilience4jConfiguration.class)
                .withBean(Resilience4jSettings.class, () -> settings(Map.of()))
                .withBean(RetryRegistry.class, RetryRegistry::ofDefaults)
                .run(context -> {
                    assertThat(context).getBean(RetryDeciderSource.class)
                            .isInstanceOf(Resilience4jRetryDeciderSource.class);
                    assertThat(context).doesNotHaveBean(Resilience4jRetryReferences.class);
                });
    }

    @Test
    void withoutARetryRegistryTheSourceDecidesNothing() {
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryResilience4jConfiguration.class)
                .withBean(Resilience4jSettings.class, () -> settings(Map.of()))
                .run(context -> {
                    RetryDeciderSource source = context.getBean(RetryDeciderSource.class);
                    assertThat(source).isNotInstanceOf(Resilience4jRetryDeciderSource.class);
                    assertThat(source.fallbackFor(ChannelRetryConfig.of("inventory", ServiceConfig.EMPTY))).isNull();
                });
    }

    @Test
    void withoutResilience4jOnlyTheNameCheckIsRegistered() {
        ApplicationContextRunner runner = new ApplicationContextRunner()
                .withUserConfiguration(GrpcRetryResilience4jConfiguration.class)
                .withClassLoader(new FilteredClassLoader("io.github.resilience4j"));
        runner.withBean(Resilience4jSettings.class, () -> settings(Map.of())).run(context -> {
            assertThat(context).hasSingleBean(Resilience4jRetryReferences.class);
            assertThat(context).doesNotHaveBean(RetryDeciderSource.class);
        });
        runner.withBean(Resilience4jSettings.class, () -> settings(Map.of("inventory", "backend")))
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("resilience4j-retry is not on the classpath"));
    }

    @Test
    void contextPropagationRegistersTheGrpcContextAccessor() {
        new ApplicationContextRunner().withUserConfiguration(GrpcContextPropagationConfiguration.class)
                .run(context -> {
                    ThreadLocalAccessor<?> accessor = context.getBean(ThreadLocalAccessor.class);
                    assertThat(ContextRegistry.getInstance().getThreadLocalAccessors())
                            .anyMatch(registered -> registered.key().equals(accessor.key()));
                    Context withDeadline = Context.current().withValue(Context.key("test"), "value");
                    Context previous = withDeadline.attach();
                    try {
                        assertThat(accessor.getValue()).isSameAs(withDeadline);
                    } finally {
                        withDeadline.detach(previous);
                    }
                });
    }

    @Test
    void withoutContextPropagationNoAccessorIsRegistered() {
        new ApplicationContextRunner().withUserConfiguration(GrpcContextPropagationConfiguration.class)
                .withClassLoader(new FilteredClassLoader("io.micrometer.context"))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean("grpcContextThreadLocalAccessor");
                });
    }
}
