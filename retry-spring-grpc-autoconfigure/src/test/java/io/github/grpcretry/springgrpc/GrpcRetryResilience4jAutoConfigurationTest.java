package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.resilience4j.Resilience4jRetryDeciderSource;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.Resilience4jSettings;
import io.github.grpcretry.spring.channel.Resilience4jRetryReferences;
import io.github.resilience4j.retry.RetryRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** {@link GrpcRetryAutoConfiguration} in an ApplicationContextRunner. */
class GrpcRetryResilience4jAutoConfigurationTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(GrpcRetryProperties.class)
    static class Properties {
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Properties.class)
            .withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class));

    @Test
    void theChannelsInstanceIsCheckedAgainstTheRegistry() {
        runner.withBean(RetryRegistry.class, () -> RetryRegistry.of(java.util.Map.of()))
                .withPropertyValues("grpc.retry.clients.inventory.resilience4j-retry=backend")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("grpc.retry.clients.inventory.resilience4j-retry"));
        RetryRegistry registry = RetryRegistry.ofDefaults();
        registry.retry("backend");
        runner.withBean(RetryRegistry.class, () -> registry)
                .withPropertyValues("grpc.retry.clients.inventory.resilience4j-retry=backend")
                .run(context -> {
                    assertThat(context).getBean(Resilience4jSettings.class).extracting(Resilience4jSettings::instanceByChannel)
                            .isEqualTo(java.util.Map.of("inventory", "backend"));
                    assertThat(context).getBean(RetryDeciderSource.class)
                            .isInstanceOf(Resilience4jRetryDeciderSource.class);
                });
    }

    @Test
    void disabledRegistersNothing() {
        runner.withPropertyValues("grpc.retry.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(Resilience4jSettings.class).doesNotHaveBean(RetryDeciderSource.class));
    }

    @Test
    void withoutResilience4jOnlyTheNameCheckIsRegistered() {
        runner.withClassLoader(new FilteredClassLoader("io.github.resilience4j")).run(context -> assertThat(context)
                .hasSingleBean(Resilience4jRetryReferences.class).doesNotHaveBean(RetryDeciderSource.class));
    }
}
