package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.PropertyKeys;
import io.github.grpcretry.integration.UnknownProperties;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * The keys this starter checks at start-up ({@link UnknownProperties}): everything under
 * {@code grpc.retry} (the properties of every {@code @ConfigurationProperties} bean bound under it).
 */
final class UnknownPropertyKeys {

    private UnknownPropertyKeys() {
    }

    /** The check: {@code grpc.retry} as the context's property beans bind it. */
    static UnknownProperties check(ListableBeanFactory beans) {
        UnknownProperties.Builder check = UnknownProperties.builder();
        PropertyKeys.boundUnder("grpc.retry", beans, GrpcRetryProperties.class).forEach(check::scope);
        return check.build();
    }
}
