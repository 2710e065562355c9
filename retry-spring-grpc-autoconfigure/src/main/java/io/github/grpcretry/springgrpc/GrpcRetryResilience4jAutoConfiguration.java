package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.GrpcRetryProperties;
import org.springframework.context.annotation.Import;
import io.github.grpcretry.spring.Resilience4jSettings;
import io.github.grpcretry.spring.GrpcRetryResilience4jConfiguration;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The resilience4j bridge: a channel's {@code grpc.retry.clients.<name>.resilience4j-retry} names the
 * instance of the application's resilience4j {@code RetryRegistry} that decides for the channel's
 * methods without a policy of their own. Every name is checked at start-up, as on the Spring Boot 3.5
 * line: a name the registry does not hold, a name without a RetryRegistry bean, or a name without
 * resilience4j on the classpath stops start-up, named by its property; with the native engine each
 * name is ignored with a WARN. resilience4j has no Spring Boot 4 starter at 2.4.0, so the application
 * declares the RetryRegistry bean itself.
 */
@AutoConfiguration(before = GrpcRetryAutoConfiguration.class)
@ConditionalOnGrpcRetryEnabled
@Import(GrpcRetryResilience4jConfiguration.class)
public class GrpcRetryResilience4jAutoConfiguration {

    /** The channels' instance names for the shared bridge ({@link GrpcRetryResilience4jConfiguration}). */
    @Bean
    Resilience4jSettings grpcRetryResilience4jSettings(GrpcRetryProperties properties) {
        return Resilience4jSettings.of(properties, "add io.github.resilience4j:resilience4j-retry and declare a"
                + " RetryRegistry @Bean (resilience4j has no Spring Boot 4 starter at 2.4.0)");
    }
}
