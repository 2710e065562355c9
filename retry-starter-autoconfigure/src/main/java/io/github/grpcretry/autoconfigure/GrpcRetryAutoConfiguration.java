package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.GrpcRetryEngineConfiguration;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.GrpcRetryReloadConfiguration;
import io.github.grpcretry.spring.PropertyKeys;
import io.github.grpcretry.spring.RetryConfigRebinding;
import io.github.grpcretry.spring.StatusCodeBinding;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.channel.StreamResumptions;
import io.github.grpcretry.spring.config.UnknownProperties;
import io.github.grpcretry.spring.reload.PolicySources;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.grpc.ClientInterceptor;
import java.util.List;
import java.util.Set;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * gRPC retry governance for net.devh clients: the validated per-channel configuration
 * ({@code grpcRetryChannelConfigs}, made eagerly so an invalid configuration stops start-up, reloadable at
 * run time with Spring Cloud Context), the limiter registry and the channel configurer that applies the
 * chosen engine.
 */
@AutoConfiguration(beforeName = "net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration")
@ConditionalOnClass(GrpcChannelConfigurer.class)
@ConditionalOnGrpcRetryEnabled
@EnableConfigurationProperties(GrpcRetryProperties.class)
@Import({StatusCodeBinding.class, GrpcRetryEngineConfiguration.class, GrpcRetryReloadConfiguration.class})
public class GrpcRetryAutoConfiguration {

    private static final Log log = LogFactory.getLog(GrpcRetryAutoConfiguration.class);

    /**
     * The effective configuration of every channel (validated, merged with GLOBAL, customized, capped),
     * reloadable at run time where Spring Cloud Context is present (docs/reload.md).
     */
    @Bean
    public ReloadableChannels grpcRetryChannelConfigs(GrpcRetryProperties properties,
            ObjectProvider<ServiceConfigCustomizer> customizers, Environment environment, ListableBeanFactory beanFactory,
            ObjectProvider<RetryLimiterRegistry> limiters) {
        return new ReloadableChannels(resolve(properties, customizers, environment, beanFactory), properties.engine(),
                limiters.getIfAvailable());
    }

    /** The same binding and validation as at start-up, for a run-time reload: {@code grpc.retry} bound again. */
    @Bean
    RetryConfigRebinding grpcRetryRebinding(ObjectProvider<ServiceConfigCustomizer> customizers, Environment environment,
            ListableBeanFactory beanFactory) {
        return binder -> resolve(binder.bindOrCreate(GrpcRetryProperties.PREFIX, GrpcRetryProperties.class), customizers, environment,
                beanFactory);
    }

    private static ChannelRetryConfigs resolve(GrpcRetryProperties properties, ObjectProvider<ServiceConfigCustomizer> customizers,
            Environment environment, ListableBeanFactory beanFactory) {
        List<ConfigProblem> unknownKeys = PropertyKeys.unknownKeyProblems(environment, beanFactory, scopes -> scopes,
                properties.ignoreUnknownProperties(), log::warn);
        return UnknownProperties.resolveReporting(unknownKeys, () -> {
            properties.deadline().settings();
            return GrpcRetryConfigResolver.resolve(properties, customizers.orderedStream().toList(), log::warn);
        });
    }

    /**
     * Applies the engine to every net.devh channel builder: with {@code engine: interceptor} one
     * {@link io.github.grpcretry.attempt.RetryingClientInterceptor} per channel (its limiters from the registry, its events to
     * the {@code grpcRetryEventListener}, methods without a policy of their own given to the first
     * {@link RetryDeciderSource} bean that has a decider for the channel, e.g. the resilience4j bridge, the
     * application's {@code StreamResumption} beans resuming their methods' server streams);
     * with {@code engine: native} an attempt tracer so grpc-java's own attempts reach the same events.
     */
    @Bean
    public GrpcRetryChannelConfigurer grpcRetryChannelConfigurer(GrpcRetryProperties properties,
            ReloadableChannels grpcRetryChannelConfigs, ObjectProvider<GrpcChannelsProperties> channelsProperties,
            RetryLimiterRegistry limiters, RetryScheduler grpcRetryScheduler,
            ObjectProvider<RetryEventListener> eventListener, ObjectProvider<RetryDeciderSource> deciderSources,
            ObjectProvider<AttemptObserver> attemptObserver, PolicySources grpcRetryPolicySources,
            ObjectProvider<AdaptiveHedgingRegistry> adaptiveHedging, NetDevhChannelShutdown grpcRetryChannelShutdown,
            StreamResumptions grpcRetryStreamResumptions) {
        ChannelSetup.Engine engine = properties.engine();
        GrpcRetryChannelConfigurer.InterceptorEngineInstaller installer = (builder, channel, config) ->
                ChannelSetup.interceptWithTarget(builder, channel, target -> grpcRetryChannelConfigs.interceptor(channel,
                        (current, previousEngine) -> {
                            ClientInterceptor made = ChannelSetup.engineInterceptor(current, engine, limiters,
                                    eventListener.getIfAvailable(() -> RetryEventListener.NOOP), grpcRetryScheduler,
                                    deciderSources.orderedStream().toList(), attemptObserver.getIfAvailable(),
                                    adaptiveHedging.getIfAvailable(), previousEngine, target,
                                    grpcRetryStreamResumptions);
                            if (previousEngine == null && made instanceof RetryingClientInterceptor first) {
                                // the channel's first engine; the ones a reload makes go on watching (reusing)
                                first.watchShutdown(grpcRetryChannelShutdown.channel(channel));
                            }
                            return List.of(made);
                        }));
        return new GrpcRetryChannelConfigurer(grpcRetryChannelConfigs, engine, installer,
                channelsProperties.getIfAvailable(), grpcRetryPolicySources);
    }

    /**
     * The shut-down of net.devh's channels (its channel factory's close), which each channel's interceptor engine
     * follows. Static: it is a bean post-processor of the channel factory.
     */
    @Bean
    static NetDevhChannelShutdown grpcRetryChannelShutdown() {
        return new NetDevhChannelShutdown();
    }

    /**
     * Where each channel's policy comes from (grpc.retry), and what becomes of a service config a
     * channel's name resolver supplies (net.devh's discovery resolver, DNS, a custom resolver).
     */
    @Bean
    @ConditionalOnMissingBean
    public PolicySources grpcRetryPolicySources(GrpcRetryProperties properties, ReloadableChannels grpcRetryChannelConfigs) {
        return new PolicySources(properties.engine(), channel -> hasPolicy(grpcRetryChannelConfigs.ownConfig(channel))
                ? Set.of(PolicySources.YAML) : Set.of(), log::warn, grpcRetryChannelConfigs);
    }

    private static boolean hasPolicy(ChannelRetryConfig config) {
        return config.serviceConfig().retryThrottling() != null || config.serviceConfig().methodConfigs().stream()
                .anyMatch(m -> m.retryPolicy() != null || m.hedgingPolicy() != null);
    }
}
