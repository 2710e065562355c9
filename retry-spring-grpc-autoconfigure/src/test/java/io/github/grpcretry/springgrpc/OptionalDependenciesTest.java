package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The starter with only Spring Boot's gRPC client: no Micrometer, no Actuator, no resilience4j, no servlet stack. */
class OptionalDependenciesTest {

    @Test
    void startsWithoutTheOptionalLibraries() {
        new ApplicationContextRunner()
                .withClassLoader(new FilteredClassLoader("io.micrometer.core", "io.micrometer.observation", "io.micrometer.context",
                        "org.springframework.boot.health", "org.springframework.boot.actuate", "io.github.resilience4j",
                        "jakarta.servlet"))
                .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, GrpcClientAutoConfiguration.class,
                        SpringBootLineAutoConfiguration.class, GrpcRetryAutoConfiguration.class))
                .withPropertyValues("grpc.retry.clients.inventory.service-config.method[0].retry.max-attempts=3",
                        "grpc.retry.clients.inventory.service-config.method[0].retry.initial-backoff=10ms",
                        "grpc.retry.clients.inventory.service-config.method[0].retry.max-backoff=100ms",
                        "grpc.retry.clients.inventory.service-config.method[0].retry.backoff-multiplier=2",
                        "grpc.retry.clients.inventory.service-config.method[0].retry.retryable-status-codes=UNAVAILABLE")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(GrpcRetryClientInterceptor.class);
                    assertThat(context).hasSingleBean(GrpcRetryChannelCustomizer.class);
                    assertThat(context).doesNotHaveBean(GrpcRetryAutoConfiguration.Metrics.class);
                    assertThat(context).doesNotHaveBean(GrpcRetryAutoConfiguration.Actuator.class);
                });
    }

    @Test
    void aResilience4jRetryNameWithoutResilience4jStopsStartUp() {
        new ApplicationContextRunner()
                .withClassLoader(new FilteredClassLoader("io.github.resilience4j"))
                .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, GrpcClientAutoConfiguration.class,
                        GrpcRetryAutoConfiguration.class))
                .withPropertyValues("grpc.retry.clients.inventory.resilience4j-retry=backend")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("grpc.retry.clients.inventory.resilience4j-retry")
                        .hasMessageContaining("resilience4j-retry is not on the classpath"));
    }
}
