package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.BackgroundWarmUp;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * The start-up warm-up (docs/design.md, "Start-up"): its sample binds and resolves through this line's own
 * resolution without a problem (a warm-up that failed would leave the work to the main thread unnoticed: its
 * failures are dropped), and an application started with it registered starts and resolves its own channels.
 */
class BackgroundWarmUpTest {

    @Test
    void theLinesConfigurationsTheirImportsAndTheirBeansClassesAreLinkedButNotTheEnginesCallClasses() {
        java.util.Set<Class<?>> linked = BackgroundWarmUp.link(GrpcRetryAutoConfiguration.class);
        assertThat(linked).extracting(Class::getName).doesNotContain("io.github.grpcretry.attempt.EngineCall",
                "io.github.grpcretry.attempt.RetryingCall", "io.github.grpcretry.attempt.HedgingCall");
        assertThat(linked).contains(GrpcRetryAutoConfiguration.Client.class,
                io.github.grpcretry.spring.GrpcRetryEngineConfiguration.class, GrpcRetryChannelConfigurer.class, io.github.grpcretry.spring.reload.ReloadableChannels.class,
                io.github.grpcretry.spring.report.RetryReport.class);
    }

    @Test
    void theSampleBindsAndResolvesThroughTheLinesResolution() throws Exception {
        AtomicReference<ChannelRetryConfigs> resolved = new AtomicReference<>();
        BackgroundWarmUp.run((properties, environment, beans) ->
                resolved.set(GrpcRetryAutoConfiguration.Client.resolve(properties, List.of(), environment, beans)));
        assertThat(resolved.get().configuredChannels()).containsExactly("sample");
        assertThat(resolved.get().forChannel("sample").serviceConfig().find("sample.Service", "Any").retryPolicy()
                .maxAttempts()).isEqualTo(3);
        assertThat(resolved.get().forChannel("sample").serviceConfig().retryThrottling()).isNotNull();
    }

    @Test
    void anApplicationStartsWithTheWarmUpRegisteredAndBindsItsOwnConfiguration() {
        SpringApplication application = new SpringApplication(App.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThat(application.getListeners()).hasAtLeastOneElementOfType(BackgroundWarmUpListener.class);
        try (ConfigurableApplicationContext context = application.run("--spring.main.banner-mode=off",
                "--grpc.retry.clients.inventory.service-config.method[0].name[0].service=shop.Inventory",
                "--grpc.retry.clients.inventory.service-config.method[0].retry.max-attempts=4",
                "--grpc.retry.clients.inventory.service-config.method[0].retry.initial-backoff=10ms",
                "--grpc.retry.clients.inventory.service-config.method[0].retry.max-backoff=100ms",
                "--grpc.retry.clients.inventory.service-config.method[0].retry.backoff-multiplier=2",
                "--grpc.retry.clients.inventory.service-config.method[0].retry.retryable-status-codes=UNAVAILABLE")) {
            ChannelRetryConfigs configs = context.getBean(ChannelRetryConfigs.class);
            assertThat(configs.configuredChannels()).containsExactly("inventory"); // the sample stays the warm-up's
            assertThat(configs.forChannel("inventory").serviceConfig().find("shop.Inventory", "Get").retryPolicy()
                    .maxAttempts()).isEqualTo(4);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class})
    static class App {
    }
}
