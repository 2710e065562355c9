package io.github.grpcretry.spring.channel;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.attempt.AttemptObserver;
import io.github.grpcretry.attempt.RetryDecider;
import io.github.grpcretry.attempt.RetryDeciderSource;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ServiceConfig;
import io.grpc.ClientInterceptor;
import io.grpc.InternalManagedChannelBuilder;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * How a channel is set up for one engine, for the auto-configuration modules of both Spring Boot
 * lines: what goes into grpc-java's {@code defaultServiceConfig}, the builder settings of the native
 * engine, the connect timeout, and the engine's own client interceptor. Where the interceptors go in a
 * channel's stack, and why, is described in docs/design.md.
 */
public final class ChannelSetup {

    private static final System.Logger LOG = System.getLogger(ChannelSetup.class.getName());

    /**
     * The two engines: the type of {@code grpc.retry.engine} on both Spring Boot lines, and what every
     * piece of glue that depends on the engine is given.
     */
    public enum Engine {
        /** The retry engine of this project, a client interceptor; grpc-java's own retry sees no policy. */
        INTERCEPTOR,
        /** grpc-java's own retry, configured from the same service config; an attempt tracer reports its attempts. */
        NATIVE;

        /** The value of {@code grpc.retry.engine} that selects it: {@code interceptor} or {@code native}. */
        public String propertyValue() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private ChannelSetup() {
    }

    /**
     * The {@code defaultServiceConfig} map for the channel, or an empty map when there is nothing to
     * set. With {@link Engine#INTERCEPTOR} the retry parts (retryPolicy, hedgingPolicy,
     * retryThrottling) are left out, so grpc-java never retries on top of the engine (its transparent
     * retry stays on). With {@link Engine#NATIVE} they are included unless the channel's cap is 1
     * (grpc-java rejects a policy of one attempt).
     */
    public static Map<String, Object> serviceConfigMap(ChannelRetryConfig config, Engine engine) {
        ServiceConfig sc = config.serviceConfig();
        if (engine == Engine.NATIVE) {
            return sc.toServiceConfigMap(config.maxAttemptsCap() >= 2);
        }
        return sc.withoutRetry().toServiceConfigMap(false);
    }

    /**
     * Configures a channel builder for {@code engine}: the service config map, the connect timeout and,
     * with {@link Engine#NATIVE}, {@code enableRetry()}, {@code maxRetryAttempts}/{@code maxHedgedAttempts}
     * (the cap), {@code retryBufferSize} and {@code perRpcBufferLimit}. A native channel whose settings are
     * all defaults is left alone. The engine's interceptor is not added here ({@link #engineInterceptor}).
     *
     * @return whether the channel has settings of its own (with {@link Engine#NATIVE}: whether anything
     *     was set; with {@link Engine#INTERCEPTOR} always true)
     */
    public static boolean configure(ManagedChannelBuilder<?> builder, ChannelRetryConfig config, Engine engine) {
        if (engine == Engine.NATIVE) {
            if (isAllDefaults(config)) {
                return false;
            }
            Map<String, Object> rendered = serviceConfigMap(config, engine);
            if (!rendered.isEmpty()) {
                builder.defaultServiceConfig(rendered);
            }
            builder.enableRetry();
            builder.maxRetryAttempts(config.maxAttemptsCap());
            builder.maxHedgedAttempts(config.maxAttemptsCap());
            builder.retryBufferSize(config.retryBufferSize());
            builder.perRpcBufferLimit(config.perRpcBufferLimit());
            applyConnectTimeout(builder, config.connectTimeout());
            return true;
        }
        Map<String, Object> rendered = withTriedBackends(serviceConfigMap(config, engine), engine, defaultPolicy(builder));
        if (!rendered.isEmpty()) {
            builder.defaultServiceConfig(rendered);
        }
        capUnderlyingRetries(builder);
        applyConnectTimeout(builder, config.connectTimeout());
        return true;
    }

    /**
     * {@code serviceConfig} (a {@code defaultServiceConfig} map, or what a name resolver supplied) as grpc-java is to
     * run it for {@code engine}: with {@link Engine#INTERCEPTOR} its load balancing goes under the starter's policy
     * that sends a retry or a hedge to a backend the call has not tried, with the channel's own choice as the
     * child (its {@code loadBalancingConfig} list, else its {@code loadBalancingPolicy}, else {@code defaultPolicy},
     * the builder's default policy name; null = not known: then a config that names no policy stays as it is, and
     * the channel's calls are picked as before); the engine turns the avoidance on
     * and off per call ({@code avoid-tried-backends}, so a reload needs no new channel). Unchanged for
     * {@link Engine#NATIVE}.
     */
    public static Map<String, Object> withTriedBackends(Map<String, ?> serviceConfig, Engine engine,
            @Nullable String defaultPolicy) {
        if (engine == Engine.NATIVE || defaultPolicy == null && !serviceConfig.containsKey("loadBalancingConfig")
                && !serviceConfig.containsKey("loadBalancingPolicy")) {
            return new LinkedHashMap<>(serviceConfig); // the channel's policy is not known: it stays as it is
        }
        return RetryingClientInterceptor.avoidingTriedBackends(serviceConfig, defaultPolicy);
    }

    /**
     * The default load-balancing policy name {@code builder} holds so far ({@code defaultLoadBalancingPolicy}, set by
     * net.devh's {@code default-load-balancing-policy}, Spring gRPC's {@code default.load-balancing-policy} or the
     * application), read from grpc-java's builder; null when it cannot be read (a builder of another kind).
     */
    public static @Nullable String defaultPolicy(ManagedChannelBuilder<?> builder) {
        Object b = builder;
        try {
            for (int depth = 0; depth < 4 && b != null; depth++) {
                Class<?> type = b.getClass();
                if (type.getName().equals("io.grpc.internal.ManagedChannelImplBuilder")) {
                    java.lang.reflect.Field f = type.getDeclaredField("defaultLbPolicy");
                    f.setAccessible(true);
                    return (String) f.get(b);
                }
                Method delegate = findDelegate(type);
                if (delegate == null) {
                    return null;
                }
                delegate.setAccessible(true);
                b = delegate.invoke(b);
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.log(System.Logger.Level.DEBUG, "default load-balancing policy of {0} not readable: {1}",
                    builder.getClass().getName(), e.toString());
        }
        return null;
    }

    private static @Nullable Method findDelegate(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
                return c.getDeclaredMethod("delegate");
            } catch (NoSuchMethodException e) {
                // not declared here: its superclass may
            }
        }
        return null;
    }

    /**
     * For the interceptor engine: caps grpc-java's own retry and hedging at one attempt
     * ({@code maxRetryAttempts(1)}, {@code maxHedgedAttempts(1)}), so whatever policy reaches grpc-java
     * (a name resolver's service config, an xDS route) never adds attempts underneath the engine's. Unlike
     * {@code disableRetry()} this leaves grpc-java's transparent retry on (a stream the server never
     * processed is still sent again).
     */
    public static void capUnderlyingRetries(ManagedChannelBuilder<?> builder) {
        try {
            builder.maxRetryAttempts(1);
            builder.maxHedgedAttempts(1);
        } catch (UnsupportedOperationException e) {
            LOG.log(System.Logger.Level.DEBUG, "{0} has no retry caps: {1}", builder.getClass().getName(), e.toString());
        }
    }

    /**
     * The engine's client interceptor for the channel: with {@link Engine#INTERCEPTOR} the retrying
     * interceptor (its limiters from {@code limiters}, methods without a policy of their own given to the
     * first of {@code deciderSources} that has a decider for the channel); with {@link Engine#NATIVE} the
     * attempt tracer that reports grpc-java's attempts as the same events.
     *
     * @param scheduler the engine's timers; null = the shared scheduler
     */
    public static ClientInterceptor engineInterceptor(ChannelRetryConfig config, Engine engine,
            RetryLimiterRegistry limiters, RetryEventListener events, @Nullable RetryScheduler scheduler,
            List<? extends RetryDeciderSource> deciderSources) {
        return engineInterceptor(config, engine, limiters, events, scheduler, deciderSources, null);
    }

    /**
     * As above, the interceptor engine following every call attempt by attempt with {@code observer}
     * (per-attempt observations, docs/observability.md); absent = none. The native engine has no
     * attempts of its own to follow: {@code observer} is not used there.
     */
    public static ClientInterceptor engineInterceptor(ChannelRetryConfig config, Engine engine,
            RetryLimiterRegistry limiters, RetryEventListener events, @Nullable RetryScheduler scheduler,
            List<? extends RetryDeciderSource> deciderSources, @Nullable AttemptObserver observer) {
        return engineInterceptor(config, engine, limiters, events, scheduler, deciderSources, observer, null, null, null,
                StreamResumptions.NONE);
    }

    /**
     * As above, a channel with {@code adaptive-hedging} keeping its state in {@code adaptiveHedging} (absent: a
     * registry of the engine's own). Building the engine again for a channel whose adaptive settings are
     * equal takes over the state the registry holds for it (each hedged method's latency window and delay).
     * For a channel whose configuration changed at run time the new engine also takes over
     * {@code previous}'s timers and buffer pool ({@link RetryingClientInterceptor.Builder#reusing}).
     * The engine reports {@code target}, the channel's target as grpc-java canonicalized it (the
     * {@code grpc.target} of the A96 meters; {@link #interceptWithTarget} learns it); absent = the channel's name
     * stands for it. The interceptor engine resumes the server streams {@code resumptions} describe (the native
     * engine cannot: {@link StreamResumptions#of} said so at start-up).
     *
     * @param previous the engine the channel ran before; absent = none
     */
    public static ClientInterceptor engineInterceptor(ChannelRetryConfig config, Engine engine,
            RetryLimiterRegistry limiters, RetryEventListener events, @Nullable RetryScheduler scheduler,
            List<? extends RetryDeciderSource> deciderSources, @Nullable AttemptObserver observer,
            @Nullable AdaptiveHedgingRegistry adaptiveHedging,
            @Nullable RetryingClientInterceptor previous, @Nullable String target, StreamResumptions resumptions) {
        if (engine == Engine.NATIVE) {
            return RetryingClientInterceptor.nativeAttempts(config.channel(), target != null ? target : config.channel(), events);
        }
        Function<MethodDescriptor<?, ?>, RetryDecider> fallback = null;
        for (RetryDeciderSource source : deciderSources) {
            fallback = source.fallbackFor(config);
            if (fallback != null) {
                break;
            }
        }
        return RetryingClientInterceptor.builder(config)
                .limiters(limiters)
                .fallbackRetryDecider(fallback)
                .eventListener(events)
                .scheduler(scheduler)
                .attemptObserver(observer)
                .adaptiveHedging(adaptiveHedging)
                .reusing(previous)
                .target(target)
                .streamResumptions(resumptions.all())
                .build();
    }

    /**
     * Adds the interceptor {@code byTarget} makes to {@code builder}, in the place {@code intercept} would put
     * it, made when the channel is built with the target grpc-java canonicalized (a URI with its scheme, such
     * as {@code dns:///inventory:9090}; the {@code grpc.target} attribute of gRPC's OpenTelemetry meters). A
     * builder that cannot say its target gets the interceptor made at once with {@code fallbackTarget}.
     */
    public static void interceptWithTarget(ManagedChannelBuilder<?> builder, String fallbackTarget,
            Function<String, ClientInterceptor> byTarget) {
        try {
            InternalManagedChannelBuilder.interceptWithTarget(builder, byTarget::apply);
        } catch (UnsupportedOperationException e) {
            LOG.log(System.Logger.Level.DEBUG, "{0} does not say its target: grpc.target is {1}",
                    builder.getClass().getName(), fallbackTarget);
            builder.intercept(byTarget.apply(fallbackTarget));
        }
    }

    /**
     * {@code serviceConfig} (a {@code defaultServiceConfig} map) without its retry parts: every
     * {@code methodConfig} entry's {@code retryPolicy} and {@code hedgingPolicy}, and
     * {@code retryThrottling}; everything else (timeouts, wait-for-ready, message limits, load balancing)
     * is kept. For a channel whose base service config comes from elsewhere (Spring Boot 4's
     * {@code spring.grpc.client.channel.<name>.service-config}) when the interceptor engine retries:
     * nothing is retried twice, and grpc-java's transparent retry stays on.
     */
    public static Map<String, Object> withoutRetry(Map<String, ?> serviceConfig) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, ?> e : serviceConfig.entrySet()) {
            if (e.getKey().equals("retryThrottling")) {
                continue;
            }
            if (e.getKey().equals("methodConfig") && e.getValue() instanceof List<?> entries) {
                List<Object> kept = new ArrayList<>(entries.size());
                for (Object entry : entries) {
                    if (entry instanceof Map<?, ?> m) {
                        Map<Object, Object> copy = new LinkedHashMap<>(m);
                        copy.remove("retryPolicy");
                        copy.remove("hedgingPolicy");
                        kept.add(copy);
                    } else {
                        kept.add(entry);
                    }
                }
                out.put(e.getKey(), kept);
            } else {
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    private static boolean isAllDefaults(ChannelRetryConfig c) {
        return c.serviceConfig().methodConfigs().isEmpty() && c.serviceConfig().retryThrottling() == null
                && c.maxAttemptsCap() == ChannelRetryConfig.DEFAULT_MAX_ATTEMPTS_CAP
                && c.perRpcBufferLimit() == ChannelRetryConfig.DEFAULT_PER_RPC_BUFFER_LIMIT
                && c.retryBufferSize() == ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE
                && c.connectTimeout() == null;
    }

    /**
     * Sets Netty's {@code CONNECT_TIMEOUT_MILLIS} on a (shaded or plain) {@code NettyChannelBuilder};
     * other builders (in-process, ...) are left alone.
     *
     * @param timeout null = nothing to set
     * @return whether the option was set
     */
    public static boolean applyConnectTimeout(ManagedChannelBuilder<?> builder, @Nullable Duration timeout) {
        if (timeout == null) {
            return false;
        }
        String builderClass = builder.getClass().getName();
        String optionClass;
        if (builderClass.equals("io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder")) {
            optionClass = "io.grpc.netty.shaded.io.netty.channel.ChannelOption";
        } else if (builderClass.equals("io.grpc.netty.NettyChannelBuilder")) {
            optionClass = "io.netty.channel.ChannelOption";
        } else {
            LOG.log(System.Logger.Level.DEBUG, "connect-timeout not applied: {0} is not a Netty channel builder", builderClass);
            return false;
        }
        try {
            Class<?> option = Class.forName(optionClass, false, builder.getClass().getClassLoader());
            Object connectTimeoutMillis = option.getField("CONNECT_TIMEOUT_MILLIS").get(null);
            Method withOption = builder.getClass().getMethod("withOption", option, Object.class);
            withOption.invoke(builder, connectTimeoutMillis, (int) Math.min(timeout.toMillis(), Integer.MAX_VALUE));
            return true;
        } catch (ReflectiveOperationException | LinkageError e) {
            LOG.log(System.Logger.Level.WARNING, "connect-timeout could not be applied to {0}: {1}", builderClass, e);
            return false;
        }
    }
}
