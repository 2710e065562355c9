package io.github.grpcretry.autoconfigure.resilience4j;

import org.springframework.context.annotation.Import;
import io.github.grpcretry.spring.Resilience4jSettings;
import io.github.grpcretry.spring.GrpcRetryResilience4jConfiguration;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import io.github.grpcretry.spring.GrpcRetryProperties;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * The resilience4j bridge: {@code grpc.retry.clients.<channel>.resilience4j-retry: <instance>} makes the
 * named instance of the application's resilience4j {@code RetryRegistry} the retry policy of every
 * method of the channel that has no retry or hedging policy of its own (see
 * {@link io.github.grpcretry.resilience4j.Resilience4jRetryDecider}).
 *
 * <ul>
 *   <li>With resilience4j-retry on the classpath ({@code @ConditionalOnClass(Retry.class)}): the bean
 *       {@code grpcRetryResilience4jDeciderSource} ({@code RetryDeciderSource}), which the interceptor
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
@ConditionalOnGrpcRetryEnabled
@Import(GrpcRetryResilience4jConfiguration.class)
public class GrpcRetryResilience4jAutoConfiguration {

    /** The channels' instance names for the shared bridge ({@link GrpcRetryResilience4jConfiguration}). */
    @Bean
    Resilience4jSettings grpcRetryResilience4jSettings(GrpcRetryProperties properties) {
        return Resilience4jSettings.of(properties, "add io.github.resilience4j:resilience4j-spring-boot3 (it makes a"
                + " RetryRegistry from resilience4j.retry.*)");
    }
}
