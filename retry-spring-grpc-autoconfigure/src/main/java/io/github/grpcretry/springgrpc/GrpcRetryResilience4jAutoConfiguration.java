package io.github.grpcretry.springgrpc;

import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.integration.Resilience4jRetryReferences;
import io.github.grpcretry.resilience4j.Resilience4jRetryDeciderSource;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryRegistry;
import java.util.HashMap;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The resilience4j bridge: a channel's {@code grpc.retry.clients.<name>.resilience4j-retry} names the
 * instance of the application's resilience4j {@link RetryRegistry} that decides for the channel's
 * methods without a policy of their own. Every name is checked at start-up, as on the Spring Boot 3.5
 * line: a name the registry does not hold, a name without a RetryRegistry bean, or a name without
 * resilience4j on the classpath stops start-up, named by its property; with the native engine each
 * name is ignored with a WARN. resilience4j has no Spring Boot 4 starter at 2.4.0, so the application
 * declares the RetryRegistry bean itself.
 */
@AutoConfiguration(before = GrpcRetryAutoConfiguration.class)
@ConditionalOnProperty(prefix = "grpc.retry", name = "enabled", matchIfMissing = true)
public class GrpcRetryResilience4jAutoConfiguration {

    private static final Log log = LogFactory.getLog(GrpcRetryResilience4jAutoConfiguration.class);

    /** resilience4j-retry is on the classpath. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Retry.class)
    static class Resilience4jPresent {

        /** The channels' resilience4j deciders, checked against the RetryRegistry bean (none without one). */
        @Bean
        RetryDeciderSource grpcRetryResilience4jDeciderSource(GrpcRetryProperties properties,
                ObjectProvider<RetryRegistry> registries) {
            RetryRegistry registry = registries.getIfUnique();
            references(properties).check(registry == null ? null : Resilience4jRetryDeciderSource.instanceNames(registry),
                    properties.engine() == GrpcRetryProperties.Engine.NATIVE, log::warn);
            return registry == null ? config -> null : new Resilience4jRetryDeciderSource(registry);
        }
    }

    /** resilience4j-retry is not on the classpath. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("io.github.resilience4j.retry.Retry")
    static class Resilience4jAbsent {

        /** Fails start-up when a channel names a resilience4j instance. */
        @Bean
        Resilience4jRetryReferences grpcRetryResilience4jCheck(GrpcRetryProperties properties) {
            Resilience4jRetryReferences refs = references(properties);
            refs.checkWithoutResilience4j();
            return refs;
        }
    }

    static Resilience4jRetryReferences references(GrpcRetryProperties properties) {
        Map<String, String> names = new HashMap<>();
        properties.clients().forEach((channel, client) -> names.put(channel,
                client == null ? null : client.resilience4jRetry()));
        return Resilience4jRetryReferences.of(names, "add io.github.resilience4j:resilience4j-retry and declare a"
                + " RetryRegistry @Bean (resilience4j has no Spring Boot 4 starter at 2.4.0)");
    }
}
