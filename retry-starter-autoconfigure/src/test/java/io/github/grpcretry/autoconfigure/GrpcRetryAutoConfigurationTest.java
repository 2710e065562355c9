package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.reload.PolicySources;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@link GrpcRetryAutoConfiguration} in an ApplicationContextRunner, after net.devh's client auto-configuration. */
class GrpcRetryAutoConfigurationTest {

    @Test
    void enabledRegistersTheConfigsAndTheChannelConfigurer() {
        RetryTestContexts.runner().run(context -> assertThat(context).hasSingleBean(ChannelRetryConfigs.class)
                .hasSingleBean(GrpcRetryChannelConfigurer.class).hasSingleBean(PolicySources.class)
                .hasSingleBean(RetryLimiterRegistry.class).hasSingleBean(RetryScheduler.class));
    }

    @Test
    void disabledRegistersNothing() {
        RetryTestContexts.runner().withPropertyValues("grpc.retry.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(ChannelRetryConfigs.class)
                    .doesNotHaveBean(GrpcRetryChannelConfigurer.class).doesNotHaveBean(RetryScheduler.class);
        });
    }

    @Test
    void ownSourcesAndLimitersBackTheStartersOff() {
        PolicySources sources = new PolicySources(ChannelSetup.Engine.INTERCEPTOR, channel -> Set.of(), warning -> { });
        RetryLimiterRegistry limiters = new RetryLimiterRegistry();
        RetryTestContexts.runner()
                .withBean("ownSources", PolicySources.class, () -> sources)
                .withBean("ownLimiters", RetryLimiterRegistry.class, () -> limiters)
                .run(context -> {
                    assertThat(context).getBean(PolicySources.class).isSameAs(sources);
                    assertThat(context).getBean(RetryLimiterRegistry.class).isSameAs(limiters);
                    assertThat(context).hasSingleBean(GrpcRetryChannelConfigurer.class);
                });
    }

    @Test
    void withoutNetDevhsClientNothingIsRegistered() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader("net.devh.boot.grpc.client")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(ChannelRetryConfigs.class);
        });
    }
}
