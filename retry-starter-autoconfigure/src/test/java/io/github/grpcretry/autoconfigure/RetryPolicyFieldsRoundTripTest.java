package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.testing.RetryPolicySamples;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * Every retry-policy field of retry-core's field table, set as a {@code grpc.retry.clients} property of
 * the Spring Boot 3.5 line: bound by Spring, mapped by retry-core's one mapping, validated into the
 * policy, rendered as the service config grpc-java gets and read back as the same policy.
 */
class RetryPolicyFieldsRoundTripTest {

    @Test
    void everyPolicyFieldRoundTripsFromPropertiesToJsonAndBack() {
        String retry = "grpc.retry.clients.inventory.service-config.method[0].retry";
        GrpcRetryProperties properties = new Binder(new MapConfigurationPropertySource(RetryPolicySamples.properties(retry)))
                .bind("grpc.retry", GrpcRetryProperties.class).get();

        ServiceConfig config = GrpcRetryConfigResolver.resolve(properties, List.of(), warning -> { })
                .forChannel("inventory").serviceConfig();
        RetryPolicySamples.assertHasEverySample(config.methodConfigs().get(0).retryPolicy());

        ServiceConfig readBack = RetryConfigResolver.create()
                .baseServiceConfig("inventory", config.toServiceConfigMap(true), "rendered")
                .resolve().forChannel("inventory").serviceConfig();
        assertThat(readBack).isEqualTo(config);
    }
}
