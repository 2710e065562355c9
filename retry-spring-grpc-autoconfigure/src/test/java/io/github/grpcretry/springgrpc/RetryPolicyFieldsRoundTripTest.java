package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.testing.RetryPolicySamples;
import java.lang.reflect.RecordComponent;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientProperties;

/**
 * Every retry-policy field of retry-core's field table, set as a {@code grpc.retry.clients} property of
 * the Spring Boot 4.1 line (records) and as Spring Boot's own
 * {@code spring.grpc.client.channel.<name>.service-config} (the base layer): bound by Spring, mapped by
 * retry-core's one mapping, validated into the policy, rendered as the service config grpc-java gets
 * and read back as the same policy.
 */
class RetryPolicyFieldsRoundTripTest {

    @Test
    void everyPolicyFieldRoundTripsFromPropertiesToJsonAndBack() {
        Binder binder = new Binder(new MapConfigurationPropertySource(
                RetryPolicySamples.properties("grpc.retry.clients.inventory.service-config.method[0].retry")));
        GrpcRetryProperties properties = binder.bind("grpc.retry", GrpcRetryProperties.class).get();

        ServiceConfig config = SpringGrpcRetryConfigs.resolve(properties, new BootChannelProperties(null), List.of(),
                warning -> { }).forChannel("inventory").serviceConfig();
        RetryPolicySamples.assertHasEverySample(config.methodConfigs().get(0).retryPolicy());
        assertThat(readBack(config)).isEqualTo(config);
    }

    @Test
    void everyPolicyFieldOfBootsOwnServiceConfigIsTakenOver() {
        Set<String> bootHas = new HashSet<>();
        for (RecordComponent c : org.springframework.boot.grpc.client.autoconfigure.ServiceConfig.MethodConfig.RetryPolicy.class
                .getRecordComponents()) {
            bootHas.add(c.getName());
        }
        Map<String, String> boot = new LinkedHashMap<>();
        RetryPolicySamples.properties("spring.grpc.client.channel.inventory.service-config.method[0].retry")
                .forEach((key, value) -> {
                    if (bootHas.contains(RetryPolicySamples.javaName(key.substring(key.lastIndexOf('.') + 1)))) {
                        boot.put(key, value);
                    }
                });
        GrpcClientProperties client = new Binder(new MapConfigurationPropertySource(boot))
                .bind("spring.grpc.client", GrpcClientProperties.class).get();
        GrpcRetryProperties none = new Binder(new MapConfigurationPropertySource(Map.of("grpc.retry.enabled", "true")))
                .bind("grpc.retry", GrpcRetryProperties.class).get();

        ServiceConfig config = SpringGrpcRetryConfigs.resolve(none, new BootChannelProperties(client), List.of(),
                warning -> { }).forChannel("inventory").serviceConfig();
        RetryPolicySamples.assertHasSamplesOf(config.methodConfigs().get(0).retryPolicy(), bootHas);
        assertThat(readBack(config)).isEqualTo(config);
    }

    private static ServiceConfig readBack(ServiceConfig config) {
        return RetryConfigResolver.create()
                .baseServiceConfig("inventory", config.toServiceConfigMap(true), "rendered")
                .resolve().forChannel("inventory").serviceConfig();
    }
}
