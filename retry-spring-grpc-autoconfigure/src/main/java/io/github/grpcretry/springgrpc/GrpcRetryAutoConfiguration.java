package io.github.grpcretry.springgrpc;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.deadline.DeadlineClientInterceptor;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.deadline.DeadlineServerInterceptor;
import io.github.grpcretry.guard.GuardClientInterceptor;
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
import io.github.grpcretry.spring.metrics.RetryGauges;
import io.github.grpcretry.spring.reload.PolicySources;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.github.grpcretry.spring.report.ChannelStateSource;
import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.spring.report.RetryStatistics;
import io.github.grpcretry.springgrpc.actuate.GrpcRetryHealthIndicator;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientObservationAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.grpc.client.GlobalClientInterceptor;
import org.springframework.grpc.client.GrpcChannelBuilderCustomizer;
import org.springframework.grpc.server.GlobalServerInterceptor;

/**
 * gRPC retry governance on the Spring Boot 4.1 line (Spring gRPC), in one auto-configuration: what it
 * registers is grouped by the optional dependency it needs, each group a nested class whose class condition
 * keeps the rest of the class loadable without it.
 * <ul>
 *   <li>Always: the status-code converter, the gRPC Context's context-propagation accessor and the HTTP
 *       deadline filter on Spring Boot 4's servlet stack ({@code grpc.retry.deadline.http.header}).</li>
 *   <li>With Spring gRPC's client ({@link Client}): the validated configuration of every channel
 *       ({@code grpcRetryChannelConfigs}, made eagerly so an invalid value stops start-up), the limiter registry,
 *       the engine's timers and event listener, the report that health and the endpoint read, the resilience4j
 *       bridge, and the three pieces that put the engine into every channel a Spring gRPC channel factory builds:
 *       <ul>
 *         <li>{@code grpcRetryClientInterceptor}: the last global client interceptor, running the channel's
 *             deadline rules, guard and engine ({@link GrpcRetryClientInterceptor});</li>
 *         <li>{@code grpcRetryChannelCustomizer}: tags each channel's calls with its name, applies the
 *             combined default deadline, the connect timeout and the native engine's builder settings
 *             ({@link GrpcRetryChannelCustomizer});</li>
 *         <li>{@code grpcRetryServiceConfigCustomizer}: takes over Spring Boot's rendered service config
 *             ({@link GrpcRetryServiceConfigCustomizer}).</li>
 *       </ul></li>
 *   <li>With Spring gRPC's server ({@link Server}): the guard and the deadline server interceptors.</li>
 *   <li>With Micrometer and a {@code MeterRegistry} bean ({@link Metrics}): the meters (names and tags as on the
 *       Spring Boot 3.5 line).</li>
 *   <li>With the Actuator ({@link Actuator}): the {@code grpcRetry} health contributor and the {@code grpcretry}
 *       endpoint.</li>
 *   <li>With an {@code ObservationRegistry} bean ({@link Observation}): the per-attempt observations.</li>
 * </ul>
 * Registered after Spring Boot's client observation auto-configuration, so the engine's global
 * interceptor comes after (inside) the observation interceptor, which has the same order, and after Spring
 * Boot's metrics and observation auto-configurations, whose registries its conditions look for.
 */
@AutoConfiguration(after = {GrpcClientAutoConfiguration.class, GrpcClientObservationAutoConfiguration.class},
        afterName = {
                "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration",
                "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@ConditionalOnGrpcRetryEnabled
@EnableConfigurationProperties(GrpcRetryProperties.class)
@Import({StatusCodeBinding.class, GrpcContextPropagationConfiguration.class, GrpcDeadlineHttpRegistration.class})
public class GrpcRetryAutoConfiguration {

    private static final Log log = LogFactory.getLog(GrpcRetryAutoConfiguration.class);

    /** Name of the composite event listener the engine is given. */
    public static final String EVENT_LISTENER_BEAN = GrpcRetryEventsConfiguration.EVENT_LISTENER_BEAN;

    /** Order of the HTTP deadline filter: early, so the whole request handling runs with the deadline. */
    public static final int HTTP_FILTER_ORDER = GrpcDeadlineHttpRegistration.HTTP_FILTER_ORDER;

    /** Order of the guard among global server interceptors: outermost of the starter's. */
    public static final int GUARD_ORDER = -2000;

    /** Order of the deadline server interceptor: inside the guard, outside observation (0) and exception handling (1). */
    public static final int DEADLINE_ORDER = -1000;

    /**
     * With Spring gRPC's client and Spring Boot's client auto-configuration. Processed first of the nested classes
     * ({@code @Order}): the conditions of {@link Metrics} and {@link Actuator} look for the beans it registers and
     * imports.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({GrpcChannelBuilderCustomizer.class, GrpcClientProperties.class})
    @Order(Ordered.HIGHEST_PRECEDENCE)
    @Import({GrpcRetryEventsConfiguration.class, GrpcRetryEngineConfiguration.class, GrpcRetryReloadConfiguration.class,
            GrpcRetryResilience4jConfiguration.class})
    static class Client {

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
                    customizers.orderedStream().toList(), environment, beanFactory), properties.engine(),
                    limiters.getIfAvailable());
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
                    customizers.orderedStream().toList(), environment, beanFactory);
        }

        /** The unknown-key check, validation and resolution of bound properties (also the start-up warm-up's). */
        static ChannelRetryConfigs resolve(GrpcRetryProperties properties, BootChannelProperties boot,
                List<ServiceConfigCustomizer> customizers, Environment environment, ListableBeanFactory beanFactory) {
            List<ConfigProblem> unknownKeys = PropertyKeys.unknownKeyProblems(environment, beanFactory,
                    UnknownPropertyKeys::bootServiceConfig, properties.ignoreUnknownProperties(), log::warn);
            return UnknownProperties.resolveReporting(unknownKeys, () -> {
                properties.deadline().settings();
                return SpringGrpcRetryConfigs.resolve(properties, boot, customizers, log::warn);
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

        /**
         * The resilience4j bridge's settings ({@link GrpcRetryResilience4jConfiguration}): a channel's
         * {@code grpc.retry.clients.<name>.resilience4j-retry} names the instance of the application's resilience4j
         * {@code RetryRegistry} that decides for the channel's methods without a policy of their own. Every name is
         * checked at start-up, as on the Spring Boot 3.5 line: a name the registry does not hold, a name without a
         * RetryRegistry bean, or a name without resilience4j on the classpath stops start-up, named by its
         * property; with the native engine each name is ignored with a WARN. resilience4j has no Spring Boot 4
         * starter at 2.4.0, so the application declares the RetryRegistry bean itself.
         */
        @Bean
        Resilience4jSettings grpcRetryResilience4jSettings(GrpcRetryProperties properties) {
            return Resilience4jSettings.of(properties, "add io.github.resilience4j:resilience4j-retry and declare a"
                    + " RetryRegistry @Bean (resilience4j has no Spring Boot 4 starter at 2.4.0)");
        }
    }

    /**
     * The server side on Spring gRPC's server: the guard and the deadline server interceptors as
     * {@code @GlobalServerInterceptor} beans. Spring gRPC applies global server interceptors in bean order,
     * the first outermost; both run outside Spring Boot's observation interceptor (order 0) and Spring
     * gRPC's exception-handling interceptor (order 1), so they see the status that exception handling
     * turned an application exception into, and the guard (outermost) sees the status that goes on the wire.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.grpc.server.GlobalServerInterceptor",
            "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration"})
    static class Server {

        @Bean
        @GlobalServerInterceptor
        @Order(GUARD_ORDER)
        @ConditionalOnBooleanProperty(name = "grpc.retry.guard.enabled", matchIfMissing = true)
        GuardServerInterceptor grpcRetryGuardServerInterceptor(ObjectProvider<GuardEventListener> listeners) {
            return new GuardServerInterceptor(RetryEventListeners.guard(listeners.orderedStream().toList()));
        }

        @Bean
        @GlobalServerInterceptor
        @Order(DEADLINE_ORDER)
        DeadlineServerInterceptor grpcDeadlineServerInterceptor() {
            return new DeadlineServerInterceptor();
        }
    }

    /**
     * The meters of the engine, the limiters, the deadline rules and the guard (names and tags as on the
     * Spring Boot 3.5 line), on the application's {@link MeterRegistry}: Spring Boot binds the
     * {@code MeterBinder} and the listeners reach the engine through {@code grpcRetryEventListener}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnGrpcRetryMeterRegistry
    @Import(GrpcRetryMetersConfiguration.class)
    static class Metrics {

        /**
         * The {@code grpc.client.channel.state} gauges of every channel Spring gRPC builds; a later channel of a
         * name (every {@code createChannel} builds one) takes the name's gauges over. Closed with the context.
         */
        @Bean
        @ConditionalOnBean(SpringGrpcChannelStates.class)
        RetryGauges.ChannelStates grpcRetryChannelStateMeters(MeterRegistry registry, SpringGrpcChannelStates states) {
            RetryGauges.ChannelStates meters = RetryGauges.channelStates(registry);
            states.onChannel(meters::watch);
            return meters;
        }
    }

    /**
     * Actuator on Spring Boot 4: the read-only {@code grpcretry} endpoint and, with Spring Boot's
     * {@code org.springframework.boot.health.contributor} API, the {@code grpcRetry} health contributor
     * ({@code management.health.grpcretry.enabled}), both from the {@link RetryReport}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint",
            "org.springframework.boot.actuate.endpoint.annotation.Endpoint"})
    @ConditionalOnBean(RetryReport.class)
    static class Actuator {

        @Bean
        @ConditionalOnAvailableEndpoint(GrpcRetryEndpoint.class)
        @ConditionalOnMissingBean
        GrpcRetryEndpoint grpcRetryEndpoint(RetryReport report) {
            return new GrpcRetryEndpoint(report);
        }

        /** Nested: its condition's class is in Spring Boot 4's health module, which may be absent. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
        @ConditionalOnEnabledHealthIndicator("grpcretry")
        static class Health {

            @Bean
            @ConditionalOnMissingBean(name = "grpcRetryHealthIndicator")
            GrpcRetryHealthIndicator grpcRetryHealthIndicator(RetryReport report, GrpcRetryProperties properties) {
                return new GrpcRetryHealthIndicator(report, properties.health().statusWhenThrottled());
            }
        }
    }

    /**
     * Per-attempt observations (docs/observability.md): when an {@code ObservationRegistry} bean exists
     * (Spring Boot's observation auto-configuration) and {@code grpc.retry.observation.enabled} is not false,
     * the engine of every channel observes each attempt as a child of the call's observation (Spring Boot's
     * {@code ObservationGrpcClientInterceptor} runs outside the engine's global interceptor). An
     * {@code AttemptObservationConvention} bean renames it or changes its key values. With
     * {@code spring.grpc.client.observation.enabled=false} (Spring Boot's switch for the calls' observations)
     * there are no attempt observations either: they would have no call to be children of.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "spring.grpc.client.observation.enabled", matchIfMissing = true)
    @Import(GrpcRetryObservationConfiguration.class)
    static class Observation {
    }
}
