package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.spring.PropertyKeys;
import io.github.grpcretry.autoconfigure.deadline.GrpcRetryDeadlineProperties;
import io.github.grpcretry.integration.UnknownProperties;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * The keys this starter checks at start-up ({@link UnknownProperties}): everything under
 * {@code grpc.retry} (the properties of every {@code @ConfigurationProperties} bean bound under it:
 * {@code GrpcRetryProperties}, {@code GrpcRetryDeadlineProperties}, ...).
 */
final class UnknownPropertyKeys {

    private UnknownPropertyKeys() {
    }

    /** The check: {@code grpc.retry} as the context's property beans bind it. */
    static UnknownProperties check(ListableBeanFactory beans) {
        UnknownProperties.Builder check = UnknownProperties.builder();
        Map<String, Class<?>> scopes = PropertyKeys.boundUnder("grpc.retry", beans, GrpcRetryProperties.class);
        // Known even when the deadline auto-configuration is not part of the application.
        scopes.putIfAbsent(GrpcRetryDeadlineProperties.PREFIX, GrpcRetryDeadlineProperties.class);
        scopes.forEach(check::scope);
        return check.build();
    }
}
