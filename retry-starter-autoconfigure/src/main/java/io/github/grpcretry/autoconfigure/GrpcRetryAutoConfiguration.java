package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.autoconfigure.actuate.GrpcRetryHealthIndicator;
import io.github.grpcretry.autoconfigure.deadline.DeadlineChannelConfigurer;
import io.github.grpcretry.autoconfigure.deadline.GrpcContextTaskDecorator;
import io.github.grpcretry.autoconfigure.metrics.NetDevhChannelStateGauges;
import io.github.grpcretry.autoconfigure.metrics.NetDevhChannelStateSource;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.deadline.DeadlineServerInterceptor;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.guard.GuardServerInterceptor;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryEnabled;
import io.github.grpcretry.spring.ConditionalOnGrpcRetryMeterRegistry;
import io.github.grpcretry.spring.GrpcContextPropagationConfiguration;
import io.github.grpcretry.spring.GrpcDeadlineHttpRegistration;
import io.github.grpcretry.spring.GrpcRetryEndpoint;
import io.github.grpcretry.spring.GrpcRetryEngineConfiguration;
import io.github.grpcretry.spring.GrpcRetryEventsConfiguration;
import io.github.grpcretry.spring.GrpcRetryMetersConfiguration;
import io.github.grpcretry.spring.GrpcRetryObservationConfiguration;
import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.GrpcRetryReloadConfiguration;
import io.github.grpcretry.spring.GrpcRetryResilience4jConfiguration;
import io.github.grpcretry.spring.PropertyKeys;
import io.github.grpcretry.spring.Resilience4jSettings;
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
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.core.task.TaskDecorator;
import org.springframework.util.function.SingletonSupplier;

/**
 * gRPC retry governance on the Spring Boot 3.5 line (net.devh), in one auto-configuration: what it
 * registers is grouped by the optional dependency it needs, each group a nested class whose class
 * condition keeps the rest of the class loadable without it.
 * <ul>
 *   <li>Always (this class and the shared configurations it imports): the status-code converter, the
 *       engine's one event listener and its counts ({@link GrpcRetryEventsConfiguration}), the report that
 *       health and the endpoint read ({@code grpcRetryReport}), the {@code grpcContextTaskDecorator} and the
 *       gRPC Context's context-propagation accessor, the HTTP deadline filter (when
 *       {@code grpc.retry.deadline.http.header} is set in a servlet application) and the per-attempt
 *       observations ({@link GrpcRetryObservationConfiguration}: with an {@code ObservationRegistry} bean).</li>
 *   <li>With net.devh's client ({@link Client}): the validated per-channel configuration
 *       ({@code grpcRetryChannelConfigs}, made eagerly so an invalid configuration stops start-up, reloadable
 *       at run time with Spring Cloud Context), the limiter registry and timers, the channel configurers of the
 *       engine, the deadline rules and the guard, the channels' states and the resilience4j bridge.</li>
 *   <li>With net.devh's server ({@link Server}): the guard and deadline server interceptors.</li>
 *   <li>With Micrometer and a {@code MeterRegistry} bean ({@link Metrics}): the meters of docs/design.md §15.</li>
 *   <li>With the Actuator ({@link Actuator}): the {@code grpcRetry} health contributor and the {@code grpcretry}
 *       endpoint.</li>
 * </ul>
 * Ordered after Spring Boot's metrics and observation auto-configurations (whose registries its conditions
 * look for) and resilience4j's, and before net.devh's client and Spring Boot's health contributors.
 */
@AutoConfiguration(
        beforeName = {
                "net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration"
        },
        afterName = {
                "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
                "io.github.resilience4j.springboot3.retry.autoconfigure.RetryAutoConfiguration"
        })
@ConditionalOnGrpcRetryEnabled
@EnableConfigurationProperties(GrpcRetryProperties.class)
@Import({StatusCodeBinding.class, GrpcRetryEventsConfiguration.class, GrpcContextPropagationConfiguration.class,
        GrpcDeadlineHttpRegistration.class, GrpcRetryObservationConfiguration.class})
public class GrpcRetryAutoConfiguration {

    /** Name of the composite listener bean the engine is given. */
    public static final String EVENT_LISTENER_BEAN = GrpcRetryEventsConfiguration.EVENT_LISTENER_BEAN;

    /**
     * Order of the guard's server interceptor among net.devh global server interceptors: before (outside)
     * net.devh's global exception handling ({@code @GrpcAdvice}, order 0) and the deadline server interceptor,
     * so it sees the status that goes on the wire.
     */
    public static final int GUARD_SERVER_INTERCEPTOR_ORDER = -1000;

    /** Order of the deadline server interceptor among net.devh global ones: after security, close to the handler. */
    public static final int DEADLINE_SERVER_INTERCEPTOR_ORDER = 6000;

    /** Order of the HTTP deadline filter: early, so the whole request handling runs with the deadline. */
    public static final int HTTP_FILTER_ORDER = GrpcDeadlineHttpRegistration.HTTP_FILTER_ORDER;

    private static final Log log = LogFactory.getLog(GrpcRetryAutoConfiguration.class);

    /** What health and the endpoint show of each channel, from the beans that exist when asked. */
    @Bean
    @ConditionalOnMissingBean
    public RetryReport grpcRetryReport(GrpcRetryProperties properties, ObjectProvider<ChannelRetryConfigs> configs,
            ObjectProvider<RetryLimiterRegistry> limiters, ObjectProvider<RetryStatistics> statistics,
            ObjectProvider<ChannelStateSource> states, ObjectProvider<PolicySources> policySources,
            ObjectProvider<AdaptiveHedgingRegistry> adaptiveHedging, ObjectProvider<StreamResumptions> resumptions) {
        return new RetryReport(properties.engine(), configs::getIfAvailable, limiters::getIfAvailable,
                statistics::getIfAvailable, states::getIfAvailable, policySources::getIfAvailable,
                adaptiveHedging::getIfAvailable, resumptions::getIfAvailable);
    }

    /**
     * Carries the gRPC Context into {@code @Async} methods and Spring Boot's task executors; backs off when the
     * application has a TaskDecorator (Boot applies only a unique one: compose ours into yours, or use Spring's
     * {@code ContextPropagatingTaskDecorator}, which carries the gRPC Context through the accessor registered
     * by {@link GrpcContextPropagationConfiguration}).
     */
    @Bean
    @ConditionalOnMissingBean(TaskDecorator.class)
    public GrpcContextTaskDecorator grpcContextTaskDecorator() {
        return new GrpcContextTaskDecorator();
    }

    /**
     * With net.devh's client: the channels' configuration and the channel configurers of the engine, the deadline
     * rules and the guard. Processed first of the nested classes ({@code @Order}): the meters' conditions look
     * for the registries it imports ({@link GrpcRetryEngineConfiguration}).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GrpcChannelConfigurer.class)
    @Order(Ordered.HIGHEST_PRECEDENCE)
    @Import({GrpcRetryEngineConfiguration.class, GrpcRetryReloadConfiguration.class,
            GrpcRetryResilience4jConfiguration.class})
    static class Client {

        /**
         * The effective configuration of every channel (validated, merged with GLOBAL, customized, capped),
         * reloadable at run time where Spring Cloud Context is present (docs/reload.md).
         */
        @Bean
        public ReloadableChannels grpcRetryChannelConfigs(GrpcRetryProperties properties,
                ObjectProvider<ServiceConfigCustomizer> customizers, Environment environment, ListableBeanFactory beanFactory,
                ObjectProvider<RetryLimiterRegistry> limiters) {
            return new ReloadableChannels(resolve(properties, customizers.orderedStream().toList(), environment, beanFactory),
                    properties.engine(), limiters.getIfAvailable());
        }

        /** The same binding and validation as at start-up, for a run-time reload: {@code grpc.retry} bound again. */
        @Bean
        RetryConfigRebinding grpcRetryRebinding(ObjectProvider<ServiceConfigCustomizer> customizers, Environment environment,
                ListableBeanFactory beanFactory) {
            return binder -> resolve(binder.bindOrCreate(GrpcRetryProperties.PREFIX, GrpcRetryProperties.class),
                    customizers.orderedStream().toList(), environment, beanFactory);
        }

        /** The unknown-key check, validation and resolution of bound properties (also the start-up warm-up's). */
        static ChannelRetryConfigs resolve(GrpcRetryProperties properties, List<ServiceConfigCustomizer> customizers,
                Environment environment, ListableBeanFactory beanFactory) {
            List<ConfigProblem> unknownKeys = PropertyKeys.unknownKeyProblems(environment, beanFactory, scopes -> scopes,
                    properties.ignoreUnknownProperties(), log::warn);
            return UnknownProperties.resolveReporting(unknownKeys, () -> {
                properties.deadline().settings();
                return GrpcRetryConfigResolver.resolve(properties, customizers, log::warn);
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

        /**
         * The deadline rules on every channel: a net.devh {@code GrpcChannelConfigurer} adding the
         * {@code DeadlineClientInterceptor} outside the retry engine.
         */
        @Bean
        DeadlineChannelConfigurer grpcDeadlineChannelConfigurer(GrpcRetryProperties properties,
                ObjectProvider<ChannelRetryConfigs> channelConfigs, ObjectProvider<DeadlineEventListener> listeners) {
            return new DeadlineChannelConfigurer(properties.deadline().settings(), channelConfigs::getIfAvailable,
                    RetryEventListeners.deadlines(listeners.orderedStream().toList()));
        }

        /**
         * The guard on every channel ({@code grpc.retry.guard.enabled}, default true; docs/design.md §8): a net.devh
         * {@code GrpcChannelConfigurer} putting the {@code GuardClientInterceptor} outside the retry engine (both
         * engines). Every {@link GuardEventListener} bean receives the guard's events.
         */
        @Bean
        @ConditionalOnBooleanProperty(name = "grpc.retry.guard.enabled", matchIfMissing = true)
        GuardChannelConfigurer grpcRetryGuardChannelConfigurer(ObjectProvider<ChannelRetryConfigs> configs,
                ObjectProvider<GrpcRetryChannelConfigurer> retryConfigurer,
                ObjectProvider<GuardEventListener> listeners) {
            // asked when each call starts (the guard follows a run-time reload): the beans and each builder's
            // channel name are looked up once
            Map<String, String> channelNames = new ConcurrentHashMap<>();
            Supplier<ChannelRetryConfigs> all = SingletonSupplier.of(() -> configs.getIfAvailable());
            Supplier<GrpcRetryChannelConfigurer> names = SingletonSupplier.of(() -> retryConfigurer.getIfAvailable());
            return new GuardChannelConfigurer(builderName -> {
                ChannelRetryConfigs c = all.get();
                if (c == null) {
                    return null;
                }
                return c.forChannel(channelNames.computeIfAbsent(builderName,
                        b -> names.get() == null ? b : names.get().channelName(b)));
            }, RetryEventListeners.guard(listeners.orderedStream().toList()));
        }

        /** The states net.devh's channel factory reports ({@code getState(false)} of every channel it built). */
        @Bean
        @ConditionalOnMissingBean
        ChannelStateSource grpcRetryChannelStateSource(ObjectProvider<GrpcChannelFactory> factories,
                ObjectProvider<GrpcChannelsProperties> properties) {
            return new NetDevhChannelStateSource(factories, properties);
        }

        /**
         * The resilience4j bridge's settings ({@link GrpcRetryResilience4jConfiguration}):
         * {@code grpc.retry.clients.<channel>.resilience4j-retry: <instance>} makes the named instance of the
         * application's resilience4j {@code RetryRegistry} the retry policy of every method of the channel that has
         * no policy of its own; every name is checked at start-up.
         */
        @Bean
        Resilience4jSettings grpcRetryResilience4jSettings(GrpcRetryProperties properties) {
            return Resilience4jSettings.of(properties, "add io.github.resilience4j:resilience4j-spring-boot3 (it makes a"
                    + " RetryRegistry from resilience4j.retry.*)");
        }
    }

    /**
     * With net.devh's server: the guard's server interceptor ({@code grpc.retry.guard.enabled}) and the deadline
     * server interceptor (rejects already-expired calls and maps deadline-caused failures), as net.devh global
     * server interceptors.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor")
    static class Server {

        @Bean
        @GrpcGlobalServerInterceptor
        @Order(GUARD_SERVER_INTERCEPTOR_ORDER)
        @ConditionalOnBooleanProperty(name = "grpc.retry.guard.enabled", matchIfMissing = true)
        GuardServerInterceptor grpcRetryGuardServerInterceptor(ObjectProvider<GuardEventListener> listeners) {
            return new GuardServerInterceptor(RetryEventListeners.guard(listeners.orderedStream().toList()));
        }

        @Bean
        @GrpcGlobalServerInterceptor
        @Order(DEADLINE_SERVER_INTERCEPTOR_ORDER)
        DeadlineServerInterceptor grpcDeadlineServerInterceptor() {
            return new DeadlineServerInterceptor();
        }
    }

    /**
     * With Micrometer and a {@link MeterRegistry} bean (Boot's metrics auto-configuration or the application's
     * own): the Micrometer event listener (part of {@code grpcRetryEventListener}), the limiter gauges and the
     * deadline and guard meters ({@link GrpcRetryMetersConfiguration}), and the connectivity gauges of net.devh's
     * channels, the gauges bound by Spring Boot as {@code MeterBinder}s.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnGrpcRetryMeterRegistry
    @Import(GrpcRetryMetersConfiguration.class)
    static class Metrics {

        /** The {@code grpc.client.channel.state} gauges of every configured or built channel. */
        @Bean
        @ConditionalOnMissingBean
        NetDevhChannelStateGauges grpcRetryChannelStateGauges(ObjectProvider<ChannelRetryConfigs> configs,
                ObjectProvider<ChannelStateSource> states) {
            return new NetDevhChannelStateGauges(configs, states);
        }
    }

    /**
     * With the Actuator: the {@code grpcRetry} health contributor (bean {@code grpcRetryHealthIndicator}, unless
     * {@code management.health.grpcretry.enabled=false}) and the read-only {@code grpcretry} endpoint (bean
     * {@code grpcRetryEndpoint}, when exposed), both over the {@link RetryReport}. The Actuator's conditions are on
     * the methods, evaluated only once this class's condition found the Actuator.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.actuate.health.HealthIndicator",
            "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator",
            "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"})
    static class Actuator {

        @Bean
        @ConditionalOnEnabledHealthIndicator("grpcretry")
        @ConditionalOnMissingBean(name = "grpcRetryHealthIndicator")
        GrpcRetryHealthIndicator grpcRetryHealthIndicator(RetryReport report, GrpcRetryProperties properties) {
            return new GrpcRetryHealthIndicator(report, properties.health().statusWhenThrottled());
        }

        @Bean
        @ConditionalOnAvailableEndpoint(endpoint = GrpcRetryEndpoint.class)
        @ConditionalOnMissingBean
        GrpcRetryEndpoint grpcRetryEndpoint(RetryReport report) {
            return new GrpcRetryEndpoint(report);
        }
    }
}
