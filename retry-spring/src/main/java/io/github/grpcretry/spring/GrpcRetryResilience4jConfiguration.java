package io.github.grpcretry.spring;

import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.resilience4j.Resilience4jRetryDeciderSource;
import io.github.grpcretry.spring.channel.Resilience4jRetryReferences;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The resilience4j bridge of both lines (each line's auto-configuration imports it with the channels' beans and
 * declares the {@link Resilience4jSettings} bean): with resilience4j-retry on the class path, the
 * channels' resilience4j deciders, checked against the {@code RetryRegistry} bean; without it, a start-up
 * failure when a channel names an instance.
 */
@Configuration(proxyBeanMethods = false)
public class GrpcRetryResilience4jConfiguration {

    private static final Log log = LogFactory.getLog(GrpcRetryResilience4jConfiguration.class);

    /**
     * Without resilience4j-retry on the class path: fails start-up when a channel names a resilience4j instance. A
     * method of this class, not a nested one (its signature names none of resilience4j's types): one configuration
     * class fewer in an application without resilience4j.
     */
    @Bean
    @ConditionalOnMissingClass("io.github.resilience4j.retry.Retry")
    Resilience4jRetryReferences grpcRetryResilience4jCheck(Resilience4jSettings settings) {
        Resilience4jRetryReferences refs = settings.references();
        refs.checkWithoutResilience4j();
        return refs;
    }

    /** resilience4j-retry is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Retry.class)
    static class Resilience4jPresent {

        /**
         * The channels' resilience4j deciders, checked against the RetryRegistry bean; without a
         * RetryRegistry bean (and no channel naming an instance) a source that has none.
         */
        @Bean
        RetryDeciderSource grpcRetryResilience4jDeciderSource(Resilience4jSettings settings,
                ObjectProvider<RetryRegistry> registries) {
            RetryRegistry registry = registries.getIfUnique();
            settings.references().check(registry == null ? null : Resilience4jRetryDeciderSource.instanceNames(registry),
                    settings.nativeEngine(), log::warn);
            return registry == null ? config -> null : new Resilience4jRetryDeciderSource(registry);
        }
    }
}
