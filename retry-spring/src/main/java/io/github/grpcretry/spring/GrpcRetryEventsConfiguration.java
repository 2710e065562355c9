package io.github.grpcretry.spring;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.spring.report.RetryStatistics;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

/**
 * The engine's one event listener, the same on both lines (each line's auto-configuration imports it):
 * the counts since start ({@link RetryStatistics}) and the composite {@code grpcRetryEventListener} the
 * engine is given, behind which one listener's exception never reaches the others. Needs neither
 * Micrometer nor the Actuator.
 */
@Configuration(proxyBeanMethods = false)
public class GrpcRetryEventsConfiguration {

    /** Name of the composite listener bean the engine is given. */
    public static final String EVENT_LISTENER_BEAN = "grpcRetryEventListener";

    /** Counts since start, per channel (calls, attempts, retries, hedges, suppressed by reason), for the endpoint. */
    @Bean
    @ConditionalOnMissingBean
    public RetryStatistics grpcRetryStatistics() {
        return new RetryStatistics();
    }

    /**
     * Every other {@link RetryEventListener} bean (the statistics, the Micrometer listener, the
     * application's own), in {@code @Order}, behind one listener ({@link RetryEventListener#composite}:
     * always a listener of its own, never one of the beans it holds). Spring leaves the bean being made out
     * of the listeners it is given, and an application's bean made by {@code composite} is taken apart, so
     * each listener is called once. Primary, so injecting a {@code RetryEventListener} by type gets this one.
     */
    @Bean(name = EVENT_LISTENER_BEAN)
    @Primary
    @ConditionalOnMissingBean(name = EVENT_LISTENER_BEAN)
    public RetryEventListener grpcRetryEventListener(ObjectProvider<RetryEventListener> listeners) {
        return RetryEventListener.composite(listeners.orderedStream().toList());
    }
}
