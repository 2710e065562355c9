package io.github.grpcretry.autoconfigure.resilience4j;

import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import io.github.grpcretry.autoconfigure.GrpcRetryProperties;
import io.github.grpcretry.integration.Resilience4jRetryReferences;
import io.github.grpcretry.resilience4j.Resilience4jRetryDeciderSource;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryRegistry;
import java.util.HashMap;
import java.util.Map;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
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
 * The resilience4j bridge: {@code grpc.retry.clients.<channel>.resilience4j-retry: <instance>} makes the
 * named instance of the application's resilience4j {@code RetryRegistry} the retry policy of every
 * method of the channel that has no retry or hedging policy of its own (see
 * {@link io.github.grpcretry.resilience4j.Resilience4jRetryDecider}).
 *
 * <ul>
 *   <li>With resilience4j-retry on the classpath ({@code @ConditionalOnClass(Retry.class)}): the bean
 *       {@code grpcRetryResilience4jDeciderSource} ({@link RetryDeciderSource}), which the interceptor
 *       engine asks for each channel. It checks at start-up that every named instance is in the
 *       RetryRegistry bean (instances are never created on demand: a typo would otherwise silently get
 *       resilience4j's defaults) and fails with the property path and the fix otherwise.</li>
 *   <li>Without it: the bean {@code grpcRetryResilience4jCheck} fails start-up when a channel names an
 *       instance, and is inert otherwise; the starter works as before.</li>
 * </ul>
 * Runs after resilience4j's own auto-configuration, so its {@code RetryRegistry} (made from
 * {@code resilience4j.retry.*}) is there to be checked.
 */
@AutoConfiguration(after = GrpcRetryAutoConfiguration.class,
        afterName = "io.github.resilience4j.springboot3.retry.autoconfigure.RetryAutoConfiguration")
@ConditionalOnClass(GrpcChannelConfigurer.class)
@ConditionalOnProperty(prefix = "grpc.retry", name = "enabled", matchIfMissing = true)
public class GrpcRetryResilience4jAutoConfiguration {

    private static final Log log = LogFactory.getLog(GrpcRetryResilience4jAutoConfiguration.class);

    /** resilience4j-retry is on the classpath. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Retry.class)
    static class Resilience4jPresent {

        /**
         * The channels' resilience4j deciders, checked against the RetryRegistry bean; without a
         * RetryRegistry bean (and no channel naming an instance) a source that has none.
         */
        @Bean
        RetryDeciderSource grpcRetryResilience4jDeciderSource(GrpcRetryProperties properties,
                ObjectProvider<RetryRegistry> registries) {
            RetryRegistry registry = registries.getIfUnique();
            references(properties).check(registry == null ? null : Resilience4jRetryDeciderSource.instanceNames(registry),
                    properties.getEngine() == GrpcRetryProperties.Engine.NATIVE, log::warn);
            if (registry == null) {
                return config -> null;
            }
            return new Resilience4jRetryDeciderSource(registry);
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
        properties.getClients().forEach((channel, client) -> names.put(channel,
                client == null ? null : client.getResilience4jRetry()));
        return Resilience4jRetryReferences.of(names, "add io.github.resilience4j:resilience4j-spring-boot3 (it makes a"
                + " RetryRegistry from resilience4j.retry.*)");
    }
}
