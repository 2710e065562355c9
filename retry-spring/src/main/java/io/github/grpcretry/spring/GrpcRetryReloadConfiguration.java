package io.github.grpcretry.spring;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Run-time reload (docs/reload.md), both lines alike, where Spring Cloud Context is on the class path:
 * the listener of its {@code EnvironmentChangeEvent}, the reload counter, and its {@code ContextRefresher}
 * wrapped so that a refresh failing before the environment changed is recorded. Without Spring Cloud Context
 * nothing changes at run time. Each line's auto-configuration imports it and provides the
 * {@code grpcRetryChannelConfigs} ({@link ReloadableChannels}) and a {@link RetryConfigRebinding}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = GrpcRetryReloadConfiguration.ENVIRONMENT_CHANGE_EVENT)
public class GrpcRetryReloadConfiguration {

    static final String ENVIRONMENT_CHANGE_EVENT = "org.springframework.cloud.context.environment.EnvironmentChangeEvent";

    /** {@code grpc.client.retry.config.reloads}, each configured channel's counters registered at 0. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class Meters {

        @Bean
        ReloadCounter grpcRetryReloadCounter(ChannelRetryConfigs grpcRetryChannelConfigs) {
            return new ReloadCounter(reloadable(grpcRetryChannelConfigs));
        }
    }

    /** Spring Cloud's refreshers, wrapped so that a refresh failing before the environment changed is recorded. */
    @Bean
    static BeanPostProcessor grpcRetryContextRefresherWrapper(ConfigurableApplicationContext context,
            ObjectProvider<GrpcRetryReloader> reloader) {
        return FailureRecordingContextRefresher.wrapping(context, reloader);
    }

    @Bean
    GrpcRetryReloader grpcRetryReloader(ChannelRetryConfigs grpcRetryChannelConfigs, RetryConfigRebinding rebinding,
            ConfigurableApplicationContext context, ObjectProvider<ReloadCounter> counter) {
        return new GrpcRetryReloader(reloadable(grpcRetryChannelConfigs), rebinding, context, counter.getIfAvailable());
    }

    static ReloadableChannels reloadable(ChannelRetryConfigs configs) {
        if (configs instanceof ReloadableChannels r) {
            return r;
        }
        throw new IllegalStateException("grpcRetryChannelConfigs is a " + configs.getClass().getName()
                + ", not the ReloadableChannels run-time reload needs");
    }
}
