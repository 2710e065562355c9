package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.internal.backends.TriedBackendsLoadBalancerProvider;
import io.github.grpcretry.internal.commit.RetryBufferPool;
import io.github.grpcretry.internal.pushback.RetryInfoDelay;
import io.github.grpcretry.internal.time.Durations;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The interceptor retry engine of one channel (gRFC A6 retries and hedging, docs/design.md §1–§7). Install it
 * with {@code ManagedChannelBuilder.intercept(...)} on a channel whose service config was rendered
 * without retry policies, hedging policies and throttling
 * ({@code ServiceConfig.toServiceConfigMap(false)}), so grpc-java never retries on top of it.
 *
 * <p>Calls to methods with a {@code retryPolicy} become {@link RetryingCall}s, calls to methods with a
 * {@code hedgingPolicy} {@link HedgingCall}s (a call that brings its own retry policy through
 * {@link GrpcRetryCallOptions#POLICY} is retried with it instead). Calls to methods with neither, and
 * calls carrying {@link GrpcRetryCallOptions#DISABLE}, are not wrapped at all: {@code interceptCall}
 * returns {@code next.newCall(...)} — unless a {@linkplain Builder#fallbackRetryDecider fallback
 * decider} gives such a method a {@link RetryDecider}: its calls are then {@link RetryingCall}s that
 * take attempts, backoff and retryability from the decider.
 *
 * <p>Thread-safe; one instance per channel. Built with {@link #builder(ChannelRetryConfig)}.
 */
public final class RetryingClientInterceptor implements ClientInterceptor {

    private final ChannelRetryConfig config;
    final @Nullable RetryThrottle throttle;
    final @Nullable RetryBudget budget;
    final RetryEventListener events;
    /** Follows calls attempt by attempt (per-attempt tracing); null = off, nothing is asked per call. */
    final @Nullable AttemptObserver observer;
    final RetryScheduler scheduler;
    private volatile @Nullable ChannelShutdown shutdownWatch;
    final RetryBufferPool bufferPool;
    final long perRpcBufferLimit;
    final int maxAttemptsCap;
    /** Picks the balancer is asked for to send a retry or a hedge to an untried backend; 0 = not asked. */
    final int backendPicks;
    /** Whether a server's RetryInfo delay is read (configured, and the proto classes are present). */
    final boolean retryInfo;
    /** The longest RetryInfo delay a call without deadline waits. */
    final long retryInfoMaxDelayNanos;
    /** The channel's adaptive hedging state; null: its hedged methods keep the configured delay. */
    private final AdaptiveHedgingRegistry.@Nullable ChannelDelays adaptive;
    /** The channel's target as grpc-java canonicalized it, for {@link CallTarget#target()}. */
    private final String target;
    private final boolean anyRetryPolicy; // or hedging policy, or a fallback decider
    private final @Nullable Function<MethodDescriptor<?, ?>, @Nullable RetryDecider> fallbackDecider;
    private final ConcurrentHashMap<String, MethodPlan> plans = new ConcurrentHashMap<>();
    /** The server-streaming methods resumed after a break past their commit, by full name ({@code streams.max-resumes} &gt; 0). */
    private final Map<String, StreamResumption<?, ?>> resumptions;
    final int maxResumes;
    /** {@code streams.idle-timeout} in nanoseconds (0: none), and how an attempt it cuts ends. */
    final long idleTimeoutNanos;
    final @Nullable Status idleStatus;

    /**
     * What the engine does for one method: its retry policy or its hedging policy, or else the fallback's decider (all
     * null = pass through), its tag values, and the attempts a call makes at most. The channel's policies (configured
     * or a name resolver's) arrive capped ({@link ChannelRetryConfig} caps them); the engine applies the channel's
     * {@code max-attempts-cap} only to what does not pass the configuration: a call's own policy and a decider's
     * {@code maxAttempts()} ({@link #of}).
     */
    record MethodPlan(@Nullable RetryPolicy policy, @Nullable HedgingPolicy hedging, @Nullable RetryDecider decider,
            int maxAttempts, CallTarget target, @Nullable AdaptiveDelay adaptive) {

        static MethodPlan of(int cap, @Nullable RetryPolicy policy, @Nullable HedgingPolicy hedging,
                @Nullable RetryDecider decider, CallTarget target, @Nullable AdaptiveDelay adaptive) {
            int wanted = policy != null ? policy.maxAttempts() : hedging != null ? hedging.maxAttempts()
                    : decider != null ? decider.maxAttempts() : 1;
            return new MethodPlan(policy, hedging, decider, Math.max(1, Math.min(wanted, cap)), target, adaptive);
        }
    }

    private RetryingClientInterceptor(Builder b) {
        this.config = b.config;
        this.throttle = b.throttle;
        this.budget = b.budget;
        this.events = GuardedEventListener.guard(b.events);
        this.observer = GuardedAttemptObserver.guard(b.observer); // docs/design.md §14
        this.scheduler = b.scheduler != null ? b.scheduler : RetryScheduler.shared();
        this.shutdownWatch = b.shutdownWatch;
        if (budget != null) {
            scheduler.driveBudgetClock(budget); // every call deposits: spare it the clock reading
        }
        this.bufferPool = b.bufferPool != null ? b.bufferPool : new RetryBufferPool(config.retryBufferSize());
        this.perRpcBufferLimit = config.perRpcBufferLimit();
        this.maxAttemptsCap = config.maxAttemptsCap();
        this.backendPicks = config.avoidTriedBackends() ? config.backendPicks() : 0;
        this.retryInfo = config.retryInfo() && RetryInfoDelay.available();
        this.retryInfoMaxDelayNanos = Nanos.saturated(config.retryInfoMaxDelay());
        this.target = b.target != null ? b.target : config.channel();
        this.fallbackDecider = b.fallbackDecider;
        AdaptiveHedgingPolicy adaptivePolicy = config.adaptiveHedging();
        this.adaptive = adaptivePolicy == null ? null : (b.adaptiveHedging != null ? b.adaptiveHedging
                : new AdaptiveHedgingRegistry()).channel(config.channel(), adaptivePolicy);
        boolean any = fallbackDecider != null;
        for (MethodConfig mc : config.serviceConfig().methodConfigs()) {
            if (mc.retryPolicy() != null || mc.hedgingPolicy() != null) {
                any = true;
                break;
            }
        }
        this.anyRetryPolicy = any;
        this.maxResumes = config.streams().maxResumes();
        this.resumptions = maxResumes == 0 ? Map.of() : Map.copyOf(b.resumptions);
        Duration idle = config.streams().idleTimeout();
        this.idleTimeoutNanos = idle == null ? 0 : Math.max(1, Nanos.saturated(idle));
        this.idleStatus = idle == null ? null : Status.UNAVAILABLE.withDescription("idle for " + Durations.toText(idle));
    }

    /** The resumption of {@code method}'s calls, or null (none, or {@code streams.max-resumes} is 0). */
    @SuppressWarnings("unchecked")
    <ReqT, RespT> @Nullable StreamResumption<ReqT, RespT> resumption(MethodDescriptor<ReqT, RespT> method) {
        return resumptions.isEmpty() ? null : (StreamResumption<ReqT, RespT>) resumptions.get(method.getFullMethodName());
    }

    /** A builder for the channel described by {@code config}. */
    public static Builder builder(ChannelRetryConfig config) {
        return new Builder(config);
    }

    /**
     * The engine for one channel on the shared scheduler, with a buffer pool of the channel's
     * {@code retry-buffer-size}.
     *
     * @param throttle the channel's A6 throttle; absent = none
     * @param budget the channel's retry budget; absent = none
     * @param events where every decision is reported ({@link RetryEventListener#NOOP} for none)
     */
    public static RetryingClientInterceptor create(ChannelRetryConfig config, @Nullable RetryThrottle throttle,
            @Nullable RetryBudget budget, RetryEventListener events) {
        return builder(config).throttle(throttle).budget(budget).eventListener(events).build();
    }

    /**
     * {@code serviceConfig} (the map a channel builder's {@code defaultServiceConfig} takes) with the channel's load
     * balancing put under the starter's policy that sends a retry or a hedge to a backend its call has not tried
     * ({@code avoid-tried-backends}): the first {@code loadBalancingConfig} entry, else {@code loadBalancingPolicy},
     * else {@code defaultPolicy} (the builder's default policy name; null = grpc-java's {@code pick_first}) becomes
     * its child and keeps choosing backends. A config already wrapped comes back unchanged. Without it the engine
     * still works; its retries only pick blind, as grpc-java's do.
     */
    public static Map<String, Object> avoidingTriedBackends(Map<String, ?> serviceConfig, @Nullable String defaultPolicy) {
        return TriedBackendsLoadBalancerProvider.wrap(serviceConfig, defaultPolicy);
    }

    /**
     * For a channel that runs grpc-java's own retry (the {@code native} engine) instead of this engine: an
     * interceptor that reports each attempt grpc-java makes to {@code listener} as this engine reports its own
     * ({@code callStarted}, {@code attemptStarted}, {@code attemptEnded}, {@code callEnded}), through a stream
     * tracer. Install it on the channel builder ({@code builder.intercept(...)}) so it sees each call above
     * grpc-java's retries. It reports no {@code retrySuppressed}: grpc-java exposes no reasons for retries it
     * did not make.
     *
     * @param channel the channel's name ({@link CallTarget#channel()})
     * @param target the channel's target as grpc-java canonicalized it when it built the channel
     *     ({@link CallTarget#target()}); the channel's name when it is not known
     */
    public static ClientInterceptor nativeAttempts(String channel, String target, RetryEventListener listener) {
        return new NativeAttemptInterceptor(channel, target, listener);
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
            CallOptions callOptions, Channel next) {
        RetryPolicy own = callOptions.getOption(GrpcRetryCallOptions.POLICY);
        MethodPlan plan;
        if (own == null) {
            if (!anyRetryPolicy) {
                return next.newCall(method, callOptions);
            }
            plan = plan(method);
            if ((plan.policy == null && plan.hedging == null && plan.decider == null)
                    || Boolean.TRUE.equals(callOptions.getOption(GrpcRetryCallOptions.DISABLE))) {
                return next.newCall(method, callOptions);
            }
            if (plan.policy == null && plan.decider == null) {
                return Calls.hedging(this, plan, method, callOptions, next);
            }
        } else {
            if (Boolean.TRUE.equals(callOptions.getOption(GrpcRetryCallOptions.DISABLE))) {
                return next.newCall(method, callOptions);
            }
            plan = MethodPlan.of(maxAttemptsCap, own, null, null, plan(method).target, null);
        }
        return Calls.retrying(this, plan, method, callOptions, next);
    }

    /**
     * Makes the engine's calls. A class of its own: linking this interceptor (which a start-up does for its
     * static helpers, {@link #avoidingTriedBackends}) verifies {@link #interceptCall}, and a {@code new} of
     * the call classes there would load them (and {@code EngineCall}) before any call needs them.
     */
    private static final class Calls {
        private Calls() {
        }

        static <ReqT, RespT> ClientCall<ReqT, RespT> hedging(RetryingClientInterceptor engine, MethodPlan plan,
                MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
            return new HedgingCall<>(engine, plan, method, callOptions, next);
        }

        static <ReqT, RespT> ClientCall<ReqT, RespT> retrying(RetryingClientInterceptor engine, MethodPlan plan,
                MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
            return new RetryingCall<>(engine, plan, method, callOptions, next);
        }
    }

    private MethodPlan plan(MethodDescriptor<?, ?> method) {
        String name = method.getFullMethodName();
        MethodPlan plan = plans.get(name);
        if (plan == null) {
            plan = plans.computeIfAbsent(name, n -> {
                MethodConfig mc = config.serviceConfig().find(method);
                RetryPolicy p = mc == null ? null : mc.retryPolicy();
                HedgingPolicy h = mc == null || p != null ? null : mc.hedgingPolicy();
                RetryDecider d = p == null && h == null && fallbackDecider != null ? fallbackDecider.apply(method) : null;
                if (d != null) {
                    d = GuardedRetryDecider.guard(d); // docs/design.md §14: a throw is logged once, counted
                }
                return MethodPlan.of(maxAttemptsCap, p, h, d, new CallTarget(config.channel(), n, target, method.isSampledToLocalTracing()),
                        h == null || adaptive == null ? null : adaptive.method(n));
            });
        }
        return plan;
    }

    /** The watch of {@code channel}'s shut-down (one at a time: an engine serves one channel). */
    ChannelShutdown shutdownWatch(ManagedChannel channel) {
        ChannelShutdown w = shutdownWatch;
        if (w == null || w.channel() != channel) {
            w = new ChannelShutdown(channel);
            shutdownWatch = w;
        }
        return w;
    }

    /** The watch of the channel this engine was told of ({@link #watchShutdown}), or the last it was handed. */
    @Nullable ChannelShutdown watchedShutdown() {
        return shutdownWatch;
    }

    /**
     * Tells the engine the channel it was built into. {@code builder.intercept(engine)} hands the engine only
     * the channel's inner chain, so a call waiting for a retry's backoff or the next hedge learns of a
     * shut-down only when its timer fires (its retry refused by the channel); told of the channel, the engine
     * ends such a call at once when the channel shuts down, {@code UNAVAILABLE} "Channel shutdown invoked".
     * Not needed over {@code ClientInterceptors.intercept(channel, engine)}, where the engine sees the channel.
     * An engine made with {@link Builder#reusing} goes on watching the same channel.
     *
     * @return {@code channel}, so that {@code engine.watchShutdown(builder.intercept(engine).build())} reads as one
     */
    public <C extends ManagedChannel> C watchShutdown(C channel) {
        shutdownWatch = new ChannelShutdown(Objects.requireNonNull(channel, "channel"));
        return channel;
    }

    public ChannelRetryConfig config() {
        return config;
    }

    /** The channel's throttle; absent = none. */
    public @Nullable RetryThrottle throttle() {
        return throttle;
    }

    /** The channel's budget; absent = none. */
    public @Nullable RetryBudget budget() {
        return budget;
    }

    public RetryScheduler scheduler() {
        return scheduler;
    }

    /** What follows the calls attempt by attempt; absent = none. */
    public @Nullable AttemptObserver attemptObserver() {
        return observer;
    }

    @Override
    public String toString() {
        return "RetryingClientInterceptor[" + config.channel() + "]";
    }

    /** Builds a {@link RetryingClientInterceptor}. */
    public static final class Builder {
        private final ChannelRetryConfig config;
        private @Nullable RetryThrottle throttle;
        private @Nullable RetryBudget budget;
        private RetryEventListener events = RetryEventListener.NOOP;
        private @Nullable AttemptObserver observer;
        private @Nullable RetryScheduler scheduler;
        private @Nullable ChannelShutdown shutdownWatch;
        private @Nullable RetryBufferPool bufferPool;
        private @Nullable Function<MethodDescriptor<?, ?>, @Nullable RetryDecider> fallbackDecider;
        private @Nullable AdaptiveHedgingRegistry adaptiveHedging;
        private @Nullable String target;
        private final Map<String, StreamResumption<?, ?>> resumptions = new LinkedHashMap<>();

        private Builder(ChannelRetryConfig config) {
            this.config = Objects.requireNonNull(config, "config");
        }

        /** The channel's A6 throttle (absent = none, the default). */
        public Builder throttle(@Nullable RetryThrottle throttle) {
            this.throttle = throttle;
            return this;
        }

        /** The channel's retry budget (absent = none, the default). */
        public Builder budget(@Nullable RetryBudget budget) {
            this.budget = budget;
            return this;
        }

        /**
         * Takes the channel's throttle (from its service config's {@code retryThrottling}) and budget
         * (from {@code config.budget()}) from {@code registry}, creating them there on first use.
         */
        public Builder limiters(RetryLimiterRegistry registry) {
            this.throttle = registry.throttle(config.channel(), config.serviceConfig().retryThrottling()).orElse(null);
            this.budget = registry.budget(config.channel(), config.budget()).orElse(null);
            return this;
        }

        /** Where decisions are reported (default {@link RetryEventListener#NOOP}). */
        public Builder eventListener(@Nullable RetryEventListener events) {
            this.events = events == null ? RetryEventListener.NOOP : events;
            return this;
        }

        /**
         * Follows every call attempt by attempt (absent = none, the default: a call then allocates nothing
         * for it), e.g. {@code ObservationAttemptObserver}: an observation per attempt (docs/observability.md).
         */
        public Builder attemptObserver(@Nullable AttemptObserver observer) {
            this.observer = observer;
            return this;
        }

        /**
         * The channel's target as grpc-java canonicalizes it when it builds the channel (such as
         * {@code dns:///inventory:9090}; an {@code InterceptorFactory} given to
         * {@code InternalManagedChannelBuilder.interceptWithTarget} receives it): {@link CallTarget#target()}
         * of the engine's events, the {@code grpc.target} of the A96 meters. Absent (the default): the
         * channel's name stands for it.
         */
        public Builder target(@Nullable String target) {
            this.target = target;
            return this;
        }

        /** The timers (default: a {@link RetryScheduler#shared()} of this engine's own; {@link #scheduler()}'s close ends its calls' waits). */
        public Builder scheduler(@Nullable RetryScheduler scheduler) {
            this.scheduler = scheduler;
            return this;
        }

        /**
         * Gives methods that have neither a retry policy nor a hedging policy in the channel's service
         * config a {@link RetryDecider}: the function is asked once per method (on its first call) and
         * may answer no decider (the method is then passed through, as without a fallback). A call's own
         * policy ({@link GrpcRetryCallOptions#POLICY}) and {@link GrpcRetryCallOptions#DISABLE} still win.
         *
         * @param fallback absent = none (default)
         */
        public Builder fallbackRetryDecider(@Nullable Function<MethodDescriptor<?, ?>, @Nullable RetryDecider> fallback) {
            this.fallbackDecider = fallback;
            return this;
        }

        /**
         * Where the channel's adaptive hedging state lives (used when {@code config.adaptiveHedging()} is set):
         * share one registry across the application's engines so meters and the endpoint see every channel and
         * a configuration refresh keeps the state of channels whose adaptive settings did not change. Absent =
         * a registry of this engine's own.
         */
        public Builder adaptiveHedging(@Nullable AdaptiveHedgingRegistry registry) {
            this.adaptiveHedging = registry;
            return this;
        }

        /**
         * Resumes the server-streaming methods these describe after a break that follows their first response,
         * up to the channel's {@code streams.max-resumes} times per call (see {@link StreamResumption}).
         *
         * @throws IllegalArgumentException when a method is not server-streaming, or two resumptions name the
         *     same method
         */
        public Builder streamResumptions(Iterable<? extends StreamResumption<?, ?>> streamResumptions) {
            for (StreamResumption<?, ?> r : streamResumptions) {
                MethodDescriptor<?, ?> m = r.method();
                if (m.getType() != MethodDescriptor.MethodType.SERVER_STREAMING) {
                    throw new IllegalArgumentException("StreamResumption " + r.getClass().getName() + " names "
                            + m.getFullMethodName() + ", a " + m.getType() + " method: only a server-streaming "
                            + "call (one request that describes the whole stream) can be resumed");
                }
                StreamResumption<?, ?> earlier = resumptions.putIfAbsent(m.getFullMethodName(), r);
                if (earlier != null && earlier != r) {
                    throw new IllegalArgumentException("Two StreamResumptions for " + m.getFullMethodName() + ": "
                            + earlier.getClass().getName() + " and " + r.getClass().getName());
                }
            }
            return this;
        }

        /**
         * For a channel whose configuration changed at run time: the new engine takes over from
         * {@code previous} what belongs to the channel rather than to one configuration, its timers and its
         * channel-wide buffer pool (calls still running on {@code previous} release into the same pool). The
         * throttle and budget come from the limiter registry ({@code RetryLimiterRegistry.replaceThrottle},
         * {@code replaceBudget}), which keeps them when their own parameters did not change; the channel whose
         * shut-down it watches ({@link RetryingClientInterceptor#watchShutdown}) stays watched. Engine state
         * that has parameters of its own is carried over here the same way: kept when they are unchanged.
         *
         * @param previous absent = nothing to take over
         */
        public Builder reusing(@Nullable RetryingClientInterceptor previous) {
            if (previous != null) {
                this.scheduler = previous.scheduler;
                this.bufferPool = previous.bufferPool;
                this.shutdownWatch = previous.shutdownWatch;
            }
            return this;
        }

        public RetryingClientInterceptor build() {
            return new RetryingClientInterceptor(this);
        }
    }
}
