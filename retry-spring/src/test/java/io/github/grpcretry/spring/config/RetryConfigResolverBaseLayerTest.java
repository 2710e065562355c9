package io.github.grpcretry.spring.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.config.RetryConfigResolver.ClientProperties;
import io.github.grpcretry.config.RetryConfigResolver.MethodProperties;
import io.github.grpcretry.config.RetryConfigResolver.RetryProperties;
import io.github.grpcretry.config.RetryConfigResolver.RetryThrottlingProperties;
import io.github.grpcretry.config.RetryConfigResolver.ServiceConfigProperties;
import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A typed base layer (Spring Boot 4's bound service config): laid under the channel's own properties, problems named by its property path. */
class RetryConfigResolverBaseLayerTest {

    static final String BOOT = "spring.grpc.client.channel.inventory.service-config";

    static ServiceConfigProperties base(int maxAttempts) {
        RetryProperties retry = new RetryProperties(maxAttempts, Duration.ofMillis(10), Duration.ofMillis(100), 2.0,
                List.of("UNAVAILABLE"), null);
        return new ServiceConfigProperties(List.of(new MethodProperties(null, null, null, null, null, retry, null)),
                new RetryThrottlingProperties(10.0, 0.1));
    }

    @Test
    void ownPropertiesAreLaidOverTheBaseLayer() {
        ChannelRetryConfig config = RetryConfigResolver.create()
                .baseServiceConfig("inventory", base(4), BOOT)
                .resolve().forChannel("inventory");
        assertThat(config.serviceConfig().methodConfigs()).hasSize(1);
        assertThat(config.serviceConfig().methodConfigs().get(0).retryPolicy().maxAttempts()).isEqualTo(4);
        assertThat(config.serviceConfig().retryThrottling()).isNotNull();

        RetryProperties own = new RetryProperties(2, null, null, null, null, null);
        ClientProperties client = new ClientProperties(new ServiceConfigProperties(
                List.of(new MethodProperties(null, null, null, null, null, own, null)), null), null, null, null, null, null,
                null, null, null, null, null, null, null, null);
        ChannelRetryConfig overlaid = RetryConfigResolver.create()
                .client("inventory", client)
                .baseServiceConfig("inventory", base(4), BOOT)
                .resolve().forChannel("inventory");
        assertThat(overlaid.serviceConfig().methodConfigs().get(0).retryPolicy().maxAttempts()).isEqualTo(2);
        assertThat(overlaid.serviceConfig().methodConfigs().get(0).retryPolicy().initialBackoff())
                .isEqualTo(Duration.ofMillis(10));
    }

    @Test
    void aProblemOfTheBaseLayerIsNamedByItsPropertyPath() {
        InvalidRetryConfigurationException e = catchThrowableOfType(InvalidRetryConfigurationException.class,
                () -> RetryConfigResolver.create().baseServiceConfig("inventory", base(1), BOOT).resolve());
        assertThat(e.getProblems()).extracting(ConfigProblem::path).contains(BOOT + ".method[0].retry.max-attempts");
    }
}
