package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.PropertyKeys;
import io.github.grpcretry.integration.UnknownProperties;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.grpc.client.autoconfigure.ServiceConfig;

/**
 * The keys this starter checks at start-up ({@link UnknownProperties}): everything under
 * {@code grpc.retry} (the properties of every {@code @ConfigurationProperties} bean bound under it), and
 * the retry, hedging and retrythrottling parts of Spring Boot's
 * {@code spring.grpc.client.channel.<name>.service-config} that the starter takes over (checked against
 * Boot's own types; the rest of Boot's tree is Boot's).
 */
final class UnknownPropertyKeys {

    private UnknownPropertyKeys() {
    }

    /** The check: {@code grpc.retry} as the context's property beans bind it, and Boot's service-config parts. */
    static UnknownProperties check(ListableBeanFactory beans) {
        UnknownProperties.Builder check = UnknownProperties.builder();
        PropertyKeys.boundUnder("grpc.retry", beans, GrpcRetryProperties.class).forEach(check::scope);
        return check
                .scope(BootChannelProperties.PREFIX + "*.service-config.method[*].retry", ServiceConfig.MethodConfig.RetryPolicy.class)
                .scope(BootChannelProperties.PREFIX + "*.service-config.method[*].hedging", ServiceConfig.MethodConfig.HedgingPolicy.class)
                .scope(BootChannelProperties.PREFIX + "*.service-config.retrythrottling", ServiceConfig.RetryThrottlingPolicy.class)
                .build();
    }
}
