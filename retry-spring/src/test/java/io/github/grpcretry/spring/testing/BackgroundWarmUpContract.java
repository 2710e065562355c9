package io.github.grpcretry.spring.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.BackgroundWarmUp;
import io.github.grpcretry.spring.GrpcRetryEngineConfiguration;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.github.grpcretry.spring.report.RetryReport;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The start-up warm-up (docs/design.md §13, "The start-up warm-up"), the cases both Spring Boot lines share: its
 * sample binds and resolves through the line's own resolution without a problem (a warm-up that failed would leave
 * the work to the main thread unnoticed: its failures are dropped), it links the line's configuration classes and
 * their beans' classes but none of the engine's call classes, and an application started with it registered
 * resolves its own channels only. Each line's {@code BackgroundWarmUpTest} supplies the line.
 */
public abstract class BackgroundWarmUpContract {

    /** The line's auto-configuration. */
    protected abstract Class<?> autoConfiguration();

    /** The class of the line's channel hook (the bean that puts the engine on each channel). */
    protected abstract Class<?> channelHook();

    /** The line's resolution, as its auto-configuration runs it. */
    protected abstract BackgroundWarmUp.Resolution resolution(AtomicReference<ChannelRetryConfigs> resolved);

    /** Starts an application of the line with these properties and answers its channels' configuration. */
    protected abstract ChannelRetryConfigs startedWith(String... properties);

    @Test
    void theLinesConfigurationsAndTheirBeansClassesAreLinkedButNotTheEnginesCallClasses() {
        Set<Class<?>> linked = BackgroundWarmUp.link(autoConfiguration());
        assertThat(linked).extracting(Class::getName).doesNotContain("io.github.grpcretry.attempt.EngineCall",
                "io.github.grpcretry.attempt.RetryingCall", "io.github.grpcretry.attempt.HedgingCall");
        assertThat(linked).contains(GrpcRetryEngineConfiguration.class, channelHook(), ReloadableChannels.class,
                RetryReport.class);
    }

    @Test
    void theSampleBindsAndResolvesThroughTheLinesResolution() throws Exception {
        AtomicReference<ChannelRetryConfigs> resolved = new AtomicReference<>();
        BackgroundWarmUp.run(resolution(resolved));
        assertThat(resolved.get().configuredChannels()).containsExactly("sample");
        assertThat(resolved.get().forChannel("sample").serviceConfig().find("sample.Service", "Any").retryPolicy()
                .maxAttempts()).isEqualTo(3);
        assertThat(resolved.get().forChannel("sample").serviceConfig().retryThrottling()).isNotNull();
    }

    @Test
    void anApplicationStartedWithItResolvesItsOwnChannelsOnly() {
        String r = "grpc.retry.clients.inventory.service-config.method[0].";
        ChannelRetryConfigs configs = startedWith(r + "name[0].service=shop.Inventory", r + "retry.max-attempts=4",
                r + "retry.initial-backoff=10ms", r + "retry.max-backoff=100ms", r + "retry.backoff-multiplier=2",
                r + "retry.retryable-status-codes=UNAVAILABLE");
        assertThat(configs.configuredChannels()).containsExactly("inventory"); // the sample stays the warm-up's
        assertThat(configs.forChannel("inventory").serviceConfig().find("shop.Inventory", "Get").retryPolicy()
                .maxAttempts()).isEqualTo(4);
    }

    /** A list of {@code --key=value} arguments of {@code key=value} properties. */
    protected static String[] arguments(String... properties) {
        return List.of(properties).stream().map(p -> "--" + p).toArray(String[]::new);
    }
}
