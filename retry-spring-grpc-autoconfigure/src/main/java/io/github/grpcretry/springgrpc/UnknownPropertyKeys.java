package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.PropertyKeys;
import io.github.grpcretry.spring.config.UnknownProperties;
import org.springframework.boot.grpc.client.autoconfigure.ServiceConfig;

/**
 * The keys this line checks at start-up besides {@code grpc.retry} ({@link PropertyKeys#unknownKeyProblems}):
 * the retry, hedging and retrythrottling parts of Spring Boot's
 * {@code spring.grpc.client.channel.<name>.service-config} that the starter takes over (checked against
 * Boot's own types; the rest of Boot's tree is Boot's).
 */
final class UnknownPropertyKeys {

    private UnknownPropertyKeys() {
    }

    /** Adds Boot's service-config parts to {@code check}. */
    static UnknownProperties.Builder bootServiceConfig(UnknownProperties.Builder check) {
        return check
                .scope(BootChannelProperties.PREFIX + "*.service-config.method[*].retry", ServiceConfig.MethodConfig.RetryPolicy.class)
                .scope(BootChannelProperties.PREFIX + "*.service-config.method[*].hedging", ServiceConfig.MethodConfig.HedgingPolicy.class)
                .scope(BootChannelProperties.PREFIX + "*.service-config.retrythrottling", ServiceConfig.RetryThrottlingPolicy.class);
    }
}
