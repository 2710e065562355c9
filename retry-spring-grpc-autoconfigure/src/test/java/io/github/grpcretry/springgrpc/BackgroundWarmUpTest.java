package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.BackgroundWarmUp;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.preinitialize.BackgroundPreinitializer;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * The start-up warm-up (docs/design.md, "Start-up"): its sample binds and resolves through this line's own
 * resolution without a problem (a warm-up that failed would leave the work to the main thread unnoticed: Spring
 * Boot drops a pre-initialiser's failure), it is registered as one of Spring Boot's background pre-initialisers,
 * and an application started with it resolves its own channels only.
 */
class BackgroundWarmUpTest {

    @Test
    void theLinesConfigurationsTheirImportsAndTheirBeansClassesAreLinkedButNotTheEnginesCallClasses() {
        java.util.Set<Class<?>> linked = BackgroundWarmUp.link(GrpcRetryAutoConfiguration.class);
        assertThat(linked).extracting(Class::getName).doesNotContain("io.github.grpcretry.attempt.EngineCall",
                "io.github.grpcretry.attempt.RetryingCall", "io.github.grpcretry.attempt.HedgingCall");
        assertThat(linked).contains(GrpcRetryAutoConfiguration.Client.class,
                io.github.grpcretry.spring.GrpcRetryEngineConfiguration.class, GrpcRetryChannelCustomizer.class, io.github.grpcretry.spring.reload.ReloadableChannels.class,
                io.github.grpcretry.spring.report.RetryReport.class);
    }

    @Test
    void theSampleBindsAndResolvesThroughTheLinesResolution() throws Exception {
        AtomicReference<ChannelRetryConfigs> resolved = new AtomicReference<>();
        BackgroundWarmUp.run((properties, environment, beans) -> resolved.set(GrpcRetryAutoConfiguration.Client.resolve(
                properties, new BootChannelProperties(null), List.of(), environment, beans)));
        assertThat(resolved.get().configuredChannels()).containsExactly("sample");
        assertThat(resolved.get().forChannel("sample").serviceConfig().find("sample.Service", "Any").retryPolicy()
                .maxAttempts()).isEqualTo(3);
        assertThat(resolved.get().forChannel("sample").serviceConfig().retryThrottling()).isNotNull();
    }

    @Test
    void itIsOneOfSpringBootsBackgroundPreinitializers() {
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(BackgroundPreinitializer.class))
                .hasAtLeastOneElementOfType(GrpcRetryBackgroundPreinitializer.class);
    }

    @Test
    void anApplicationStartedWithItResolvesItsOwnChannelsOnly() {
        try (GrpcClientContext client = GrpcClientContext.start(
                "grpc.retry.clients.inventory.service-config.method[0].name[0].service=shop.Inventory",
                "grpc.retry.clients.inventory.service-config.method[0].retry.max-attempts=4",
                "grpc.retry.clients.inventory.service-config.method[0].retry.initial-backoff=10ms",
                "grpc.retry.clients.inventory.service-config.method[0].retry.max-backoff=100ms",
                "grpc.retry.clients.inventory.service-config.method[0].retry.backoff-multiplier=2",
                "grpc.retry.clients.inventory.service-config.method[0].retry.retryable-status-codes=UNAVAILABLE")) {
            ChannelRetryConfigs configs = client.bean(ChannelRetryConfigs.class);
            assertThat(configs.configuredChannels()).containsExactly("inventory");
            assertThat(configs.forChannel("inventory").serviceConfig().find("shop.Inventory", "Get").retryPolicy()
                    .maxAttempts()).isEqualTo(4);
        }
    }
}
