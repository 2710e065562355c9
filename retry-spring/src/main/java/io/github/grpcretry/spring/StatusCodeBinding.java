package io.github.grpcretry.spring;

import io.github.grpcretry.config.RetryConfigResolver;
import io.grpc.Status;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.convert.converter.Converter;

/**
 * Binds the status codes of {@code grpc.retry.*} ({@code retryable-status-codes},
 * {@code non-fatal-status-codes}) as {@link Status.Code} values: names in any case, as Spring Boot binds
 * any enum, and numbers ({@code 14}) too. A value that names no code stops start-up with Spring Boot's
 * binding report (property, value, origin, the valid names). Each line's auto-configuration imports it.
 */
@Configuration(proxyBeanMethods = false)
public class StatusCodeBinding {

    @Bean
    @ConfigurationPropertiesBinding
    static StatusCodeConverter grpcRetryStatusCodeConverter() {
        return new StatusCodeConverter();
    }

    /** A status code name (any case) or number. */
    static final class StatusCodeConverter implements Converter<String, Status.Code> {

        @Override
        public Status.Code convert(String source) {
            return RetryConfigResolver.statusCode(source);
        }
    }
}
