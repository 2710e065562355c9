package io.github.grpcretry.springgrpc;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.deadline.DeadlineClientInterceptor;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardClientInterceptor;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.GrpcRetryEngineConfiguration;
import io.github.grpcretry.spring.GrpcRetryEventsConfiguration;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.GrpcRetryReloadConfiguration;
import io.github.grpcretry.spring.PropertyKeys;
import io.github.grpcretry.spring.RetryConfigRebinding;
import io.github.grpcretry.spring.RetryEventListeners;
import io.github.grpcretry.spring.StatusCodeBinding;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.channel.StreamResumptions;
import io.github.grpcretry.spring.config.UnknownProperties;
import io.github.grpcretry.spring.reload.PolicySources;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.github.grpcretry.spring.report.ChannelStateSource;
import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.spring.report.RetryStatistics;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannelBuilder;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientObservationAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.grpc.client.GlobalClientInterceptor;
import org.springframework.grpc.client.GrpcChannelBuilderCustomizer;

/**
 * gRPC retry governance for Spring gRPC channels (Spring Boot 4.1): the validated configuration of every
 * channel ({@code grpcRetryChannelConfigs}, made eagerly so an invalid value stops start-up), the limiter
 * registry, the engine's timers and event listener, and the three pieces that put the engine into every
 * channel a Spring gRPC channel factory builds:
 * <ul>
 *   <li>{@code grpcRetryClientInterceptor}: the last global client interceptor, running the channel's
 *       deadline rules, guard and engine ({@link GrpcRetryClientInterceptor});</li>
 *   <li>{@code grpcRetryChannelCustomizer}: tags each channel's calls with its name, applies the
 *       combined default deadline, the connect timeout and the native engine's builder settings
 *       ({@link GrpcRetryChannelCustomizer});</li>
 *   <li>{@code grpcRetryServiceConfigCustomizer}: takes over Spring Boot's rendered service config
 *       ({@link GrpcRetryServiceConfigCustomizer}).</li>
 * </ul>
 * Registered after Spring Boot's client observation auto-configuration, so the engine's global
 * interceptor comes after (inside) the observation interceptor, which has the same order.
 */
@AutoConfiguration(after = {GrpcClientAutoConfiguration.class, GrpcClientObservationAutoConfiguration.class})
@ConditionalOnClass({GrpcChannelBuilderCustomizer.class, GrpcClientProperties.class})
@ConditionalOnGrpcRetryEnabled
@EnableConfigurationProperties(GrpcRetryProperties.class)
@Import({StatusCodeBinding.class, GrpcRetryEventsConfiguration.class, GrpcRetryEngineConfiguration.class,
        GrpcRetryReloadConfiguration.class})
public class GrpcRetryAutoConfiguration {

    private static final Log log = LogFactory.getLog(GrpcRetryAutoConfiguration.class);

    /** Name of the composite event listener the engine is given. */
    public static final String EVENT_LISTENER_BEAN = GrpcRetryEventsConfiguration.EVENT_LISTENER_BEAN;

    /**
     * The effective configuration of every channel (Boot's service config as the base layer, validated,
     * merged with GLOBAL, customized, capped), reloadable at run time where Spring Cloud Context is present
     * (docs/reload.md).
     */
    @Bean
    public ReloadableChannels grpcRetryChannelConfigs(GrpcRetryProperties properties,
            ObjectProvider<GrpcClientProperties> clientProperties, ObjectProvider<ServiceConfigCustomizer> customizers,
            Environment environment, ListableBeanFactory beanFactory, ObjectProvider<RetryLimiterRegistry> limiters) {
        return new ReloadableChannels(resolve(properties, new BootChannelProperties(clientProperties.getIfAvailable()),
                customizers, environment, beanFactory), properties.engine(), limiters.getIfAvailable());
    }

    /**
     * The same binding and validation as at start-up, for a run-time reload: {@code grpc.retry} and Spring
     * Boot's {@code spring.grpc.client} bound again from the changed environment.
     */
    @Bean
    RetryConfigRebinding grpcRetryRebinding(ObjectProvider<ServiceConfigCustomizer> customizers, Environment environment,
            ListableBeanFactory beanFactory) {
        return binder -> resolve(binder.bindOrCreate(GrpcRetryProperties.PREFIX, GrpcRetryProperties.class),
                new BootChannelProperties(binder.bindOrCreate("spring.grpc.client", GrpcClientProperties.class)),
                customizers, environment, beanFactory);
    }

    private static ChannelRetryConfigs resolve(GrpcRetryProperties properties, BootChannelProperties boot,
            ObjectProvider<ServiceConfigCustomizer> customizers, Environment environment, ListableBeanFactory beanFactory) {
        List<ConfigProblem> unknownKeys = PropertyKeys.unknownKeyProblems(environment, beanFactory,
                UnknownPropertyKeys::bootServiceConfig, properties.ignoreUnknownProperties(), log::warn);
        return UnknownProperties.resolveReporting(unknownKeys, () -> {
            properties.deadline().settings();
            return SpringGrpcRetryConfigs.resolve(properties, boot, customizers.orderedStream().toList(), log::warn);
        });
    }

    /**
     * The connectivity state of every channel Spring gRPC's factories build. Static: it is a bean
     * post-processor of the factories.
     */
    @Bean
    @ConditionalOnMissingBean(ChannelStateSource.class)
    static SpringGrpcChannelStates grpcRetryChannelStates() {
        return new SpringGrpcChannelStates();
    }

    /** What health and the endpoint show of each channel. */
    @Bean
    @ConditionalOnMissingBean
    public RetryReport grpcRetryReport(GrpcRetryProperties properties, ChannelRetryConfigs grpcRetryChannelConfigs,
            ObjectProvider<RetryLimiterRegistry> limiters, ObjectProvider<RetryStatistics> statistics,
            ObjectProvider<ChannelStateSource> states, ObjectProvider<PolicySources> policySources,
            ObjectProvider<AdaptiveHedgingRegistry> adaptiveHedging, ObjectProvider<StreamResumptions> resumptions) {
        return new RetryReport(properties.engine(), () -> grpcRetryChannelConfigs, limiters::getIfAvailable,
                statistics::getIfAvailable, states::getIfAvailable, policySources::getIfAvailable,
                adaptiveHedging::getIfAvailable, resumptions::getIfAvailable);
    }

    /**
     * Where each channel's policy comes from (grpc.retry, Boot's service-config, the name resolver), and
     * what becomes of a service config a channel's name resolver supplies.
     */
    @Bean
    @ConditionalOnMissingBean
    public PolicySources grpcRetryPolicySources(GrpcRetryProperties properties,
            ObjectProvider<GrpcClientProperties> clientProperties, ReloadableChannels grpcRetryChannelConfigs) {
        BootChannelProperties boot = new BootChannelProperties(clientProperties.getIfAvailable());
        return new PolicySources(properties.engine(), channel -> SpringGrpcRetryConfigs.policySources(properties, boot, channel),
                log::warn, grpcRetryChannelConfigs);
    }

    @Bean
    GrpcRetryChannelCustomizer<?> grpcRetryChannelCustomizer(ReloadableChannels grpcRetryChannelConfigs,
            GrpcRetryProperties properties, ObjectProvider<GrpcClientProperties> clientProperties,
            PolicySources grpcRetryPolicySources, ChannelTargets grpcRetryChannelTargets) {
        return newChannelCustomizer(grpcRetryChannelConfigs, properties.engine(),
                new BootChannelProperties(clientProperties.getIfAvailable()), properties.deadline().defaultTimeout(),
                grpcRetryPolicySources, grpcRetryChannelTargets);
    }

    private static <T extends ManagedChannelBuilder<T>> GrpcRetryChannelCustomizer<T> newChannelCustomizer(
            ReloadableChannels configs, ChannelSetup.Engine engine, BootChannelProperties boot,
            java.time.@Nullable Duration defaultTimeout, PolicySources policySources, ChannelTargets targets) {
        return new GrpcRetryChannelCustomizer<>(configs, engine, boot, defaultTimeout, policySources, targets);
    }

    /** Each channel's target as grpc-java canonicalized it (the {@code grpc.target} of the A96 meters). */
    @Bean
    ChannelTargets grpcRetryChannelTargets() {
        return new ChannelTargets();
    }

    @Bean
    GrpcRetryServiceConfigCustomizer grpcRetryServiceConfigCustomizer(ChannelRetryConfigs grpcRetryChannelConfigs,
            GrpcRetryProperties properties, ObjectProvider<GrpcClientProperties> clientProperties) {
        return new GrpcRetryServiceConfigCustomizer(grpcRetryChannelConfigs, properties.engine(),
                new BootChannelProperties(clientProperties.getIfAvailable()));
    }

    /**
     * The engine's global interceptor. Per channel, outermost first: the deadline rules
     * ({@code grpc.retry.deadline.*}, the method timeouts), the guard ({@code grpc.retry.guard.enabled}),
     * the engine: with {@code engine: interceptor} the retrying interceptor (its limiters from the
     * registry, its events to {@code grpcRetryEventListener}, methods without a policy of their own given
     * to the first {@link RetryDeciderSource} bean that has a decider for the channel, the application's
     * {@code StreamResumption} beans resuming their methods' server streams); with
     * {@code engine: native} the tracer that reports grpc-java's attempts as the same events.
     */
    @Bean
    @GlobalClientInterceptor
    public GrpcRetryClientInterceptor grpcRetryClientInterceptor(ReloadableChannels grpcRetryChannelConfigs,
            GrpcRetryProperties properties, RetryLimiterRegistry limiters, RetryScheduler grpcRetryScheduler,
            ObjectProvider<RetryEventListener> eventListener, ObjectProvider<RetryDeciderSource> deciderSources,
            ObjectProvider<DeadlineEventListener> deadlineListeners, ObjectProvider<GuardEventListener> guardListeners,
            ObjectProvider<AttemptObserver> attemptObserver, ObjectProvider<AdaptiveHedgingRegistry> adaptiveHedging,
            ChannelTargets grpcRetryChannelTargets, StreamResumptions grpcRetryStreamResumptions) {
        ChannelSetup.Engine engine = properties.engine();
        DeadlineClientInterceptor.Settings deadlines = properties.deadline().settings();
        boolean guard = properties.guard().enabled();
        ReloadableChannels.StackFactory stacks = (config, previousEngine) -> {
            String channel = config.channel();
            List<ClientInterceptor> stack = new ArrayList<>(3);
            stack.add(new DeadlineClientInterceptor(channel, deadlines,
                    DeadlineClientInterceptor.methodTimeouts(config.serviceConfig()),
                    RetryEventListeners.deadlines(deadlineListeners.orderedStream().toList())));
            if (guard) {
                stack.add(new GuardClientInterceptor(config,
                        RetryEventListeners.guard(guardListeners.orderedStream().toList())));
            }
            stack.add(ChannelSetup.engineInterceptor(config, engine, limiters,
                    eventListener.getIfAvailable(() -> RetryEventListener.NOOP), grpcRetryScheduler,
                    deciderSources.orderedStream().toList(), attemptObserver.getIfAvailable(),
                    adaptiveHedging.getIfAvailable(), previousEngine, grpcRetryChannelTargets.of(channel),
                    grpcRetryStreamResumptions));
            return stack;
        };
        return new GrpcRetryClientInterceptor(channel -> grpcRetryChannelConfigs.interceptor(channel, stacks));
    }
}
