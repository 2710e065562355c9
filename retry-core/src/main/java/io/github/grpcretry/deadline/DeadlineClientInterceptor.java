package io.github.grpcretry.deadline;

import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.ServiceConfig;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Applies the deadline rules of one channel to every call, in this order:
 * <ol>
 *   <li>An explicit deadline on the stub ({@code CallOptions}) and a deadline inherited from the gRPC
 *       {@code Context} (an inbound call being served) are kept; the earlier one is the call's
 *       deadline (as in grpc-java). Nothing below ever makes it later.</li>
 *   <li>When the call's deadline is the inherited one (no explicit deadline, or an explicit one that
 *       is not earlier), {@code reserve} is taken off it, so the downstream gives up before the
 *       upstream does.</li>
 *   <li>The method's service-config {@code timeout} caps the deadline (gRPC's own rule: the minimum
 *       of the application's deadline and the configured timeout); a call that still has no deadline
 *       gets {@code default-timeout}.</li>
 *   <li>A call with less than {@code min-remaining} left is failed at once with DEADLINE_EXCEEDED and
 *       never sent: the returned call closes its listener on the call's executor (the stub's
 *       executor when the call options carry one, as blocking stubs do; else the fast-fail
 *       executor).</li>
 * </ol>
 * The resulting deadline is written to the {@code CallOptions} handed on, so interceptors inside this
 * one (the retry engine) see the deadline that bounds the call. Install it outside (before) the retry
 * engine: with {@code ManagedChannelBuilder.intercept}, add it after the engine.
 */
public final class DeadlineClientInterceptor implements ClientInterceptor {

    private static final Function<MethodDescriptor<?, ?>, Duration> NO_METHOD_TIMEOUTS = m -> null;

    /**
     * The deadline rules a {@link DeadlineClientInterceptor} applies (docs/configuration.md, {@code grpc.retry.deadline}).
     *
     * @param defaultTimeout deadline given to a call that has none at all (neither on its
     *     {@code CallOptions} nor inherited from the gRPC {@code Context}); absent = none
     * @param reserve taken off a deadline inherited from the gRPC {@code Context} (an inbound call being
     *     served), so the downstream call gives up before the upstream one does; zero = off
     * @param minRemaining a call with less time than this left fails at once with DEADLINE_EXCEEDED and
     *     is never sent; zero = off
     */
    public record Settings(@Nullable Duration defaultTimeout, Duration reserve, Duration minRemaining) {

        /** No default, no reserve, no floor: the interceptor changes nothing. */
        public static final Settings NONE = new Settings(null, Duration.ZERO, Duration.ZERO);

        public Settings {
            reserve = reserve == null ? Duration.ZERO : reserve;
            minRemaining = minRemaining == null ? Duration.ZERO : minRemaining;
            if (defaultTimeout != null && (defaultTimeout.isNegative() || defaultTimeout.isZero())) {
                throw new IllegalArgumentException("defaultTimeout must be > 0, was " + defaultTimeout);
            }
            if (reserve.isNegative()) {
                throw new IllegalArgumentException("reserve must be >= 0, was " + reserve);
            }
            if (minRemaining.isNegative()) {
                throw new IllegalArgumentException("minRemaining must be >= 0, was " + minRemaining);
            }
        }

        public Settings withDefaultTimeout(Duration value) {
            return new Settings(value, reserve, minRemaining);
        }

        public Settings withReserve(Duration value) {
            return new Settings(defaultTimeout, value, minRemaining);
        }

        public Settings withMinRemaining(Duration value) {
            return new Settings(defaultTimeout, reserve, value);
        }
    }

    private final String channel;
    private final Settings settings;
    private final long reserveNanos;
    private final long minRemainingNanos;
    private final Function<MethodDescriptor<?, ?>, Duration> methodTimeouts;
    private final DeadlineEventListener listener;
    private final @Nullable Executor fastFailExecutor;
    private final ConcurrentHashMap<String, CallTarget> targets = new ConcurrentHashMap<>();

    /** Rules without per-method timeouts or events. */
    public DeadlineClientInterceptor(String channel, Settings settings) {
        this(channel, settings, null, null, null);
    }

    /**
     * @param channel the channel name (event tag)
     * @param settings the rules
     * @param methodTimeouts the service-config {@code timeout} of a method (absent = none; the
     *     function may answer none for a method); see {@link #methodTimeouts(ServiceConfig)}
     * @param listener events for meters (absent = none)
     */
    public DeadlineClientInterceptor(String channel, Settings settings,
            @Nullable Function<MethodDescriptor<?, ?>, @Nullable Duration> methodTimeouts,
            @Nullable DeadlineEventListener listener) {
        this(channel, settings, methodTimeouts, listener, null);
    }

    /**
     * @param fastFailExecutor where a refused call's listener is closed when the call options carry
     *     no executor; absent = a shared daemon pool
     */
    public DeadlineClientInterceptor(String channel, Settings settings,
            @Nullable Function<MethodDescriptor<?, ?>, @Nullable Duration> methodTimeouts,
            @Nullable DeadlineEventListener listener, @Nullable Executor fastFailExecutor) {
        this.channel = Objects.requireNonNull(channel, "channel");
        this.settings = settings == null ? Settings.NONE : settings;
        this.reserveNanos = this.settings.reserve().toNanos();
        this.minRemainingNanos = this.settings.minRemaining().toNanos();
        this.methodTimeouts = methodTimeouts == null ? NO_METHOD_TIMEOUTS : methodTimeouts;
        this.listener = listener == null ? DeadlineEventListener.NOOP : listener;
        this.fastFailExecutor = fastFailExecutor;
    }

    /** The per-method {@code timeout} lookup of a service config (gRPC matching). */
    public static Function<MethodDescriptor<?, ?>, @Nullable Duration> methodTimeouts(@Nullable ServiceConfig serviceConfig) {
        if (serviceConfig == null || serviceConfig.methodConfigs().stream().noneMatch(mc -> mc.timeout() != null)) {
            return NO_METHOD_TIMEOUTS;
        }
        return method -> {
            MethodConfig mc = serviceConfig.find(method);
            return mc == null ? null : mc.timeout();
        };
    }

    public String channel() {
        return channel;
    }

    public Settings settings() {
        return settings;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
            CallOptions callOptions, Channel next) {
        Deadline explicit = callOptions.getDeadline();
        Deadline inherited = Context.current().getDeadline();
        Deadline effective = explicit;
        boolean changed = false;

        // 1 + 2: keep the earlier of explicit and inherited; shorten an inherited one by the reserve.
        if (inherited != null && (explicit == null || !explicit.isBefore(inherited))) {
            effective = reserveNanos > 0 ? inherited.offset(-reserveNanos, TimeUnit.NANOSECONDS) : inherited;
            changed = true;
        }

        // 3: the method's timeout caps; default-timeout fills in.
        Duration methodTimeout = methodTimeouts.apply(method);
        if (methodTimeout != null) {
            Deadline fromMethod = Deadline.after(methodTimeout.toNanos(), TimeUnit.NANOSECONDS);
            if (effective == null || fromMethod.isBefore(effective)) {
                effective = fromMethod;
                changed = true;
            }
        } else if (effective == null && settings.defaultTimeout() != null) {
            effective = Deadline.after(settings.defaultTimeout().toNanos(), TimeUnit.NANOSECONDS);
            changed = true;
        }

        CallOptions options = changed ? callOptions.withDeadline(effective) : callOptions;

        // 4: the floor.
        if (effective != null) {
            CallTarget target = target(method);
            long remaining = effective.timeRemaining(TimeUnit.NANOSECONDS);
            listener.deadlineRemaining(target, remaining);
            if (minRemainingNanos > 0 && remaining < minRemainingNanos) {
                listener.fastFail(target);
                Status status = Status.DEADLINE_EXCEEDED.withDescription(String.format(
                        "not sent: %.1f ms left, less than min-remaining %.1f ms (channel %s, %s)",
                        remaining / 1e6, minRemainingNanos / 1e6, channel, method.getFullMethodName()));
                Executor executor = options.getExecutor() != null ? options.getExecutor()
                        : fastFailExecutor != null ? fastFailExecutor : SharedExecutor.INSTANCE;
                return new FailedClientCall<>(status, executor);
            }
        }
        return next.newCall(method, options);
    }

    private CallTarget target(MethodDescriptor<?, ?> method) {
        String name = method.getFullMethodName();
        CallTarget t = targets.get(name);
        if (t == null) {
            t = targets.computeIfAbsent(name, n -> new CallTarget(channel, n));
        }
        return t;
    }

    @Override
    public String toString() {
        return "DeadlineClientInterceptor[" + channel + ", " + settings + "]";
    }

    /** A call that is never sent: it closes its listener with a fixed status on the given executor. */
    static final class FailedClientCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {
        private final Status status;
        private final Executor executor;
        private boolean started;

        FailedClientCall(Status status, Executor executor) {
            this.status = status;
            this.executor = executor;
        }

        @Override
        public void start(Listener<RespT> responseListener, Metadata headers) {
            Objects.requireNonNull(responseListener, "responseListener");
            synchronized (this) {
                if (started) {
                    throw new IllegalStateException("Already started");
                }
                started = true;
            }
            Runnable close = Context.current().wrap(() -> responseListener.onClose(status, new Metadata()));
            try {
                executor.execute(close);
            } catch (RejectedExecutionException e) {
                close.run();
            }
        }

        @Override
        public void request(int numMessages) {
        }

        @Override
        public void cancel(@Nullable String message, @Nullable Throwable cause) {
        }

        @Override
        public void halfClose() {
        }

        @Override
        public void sendMessage(ReqT message) {
        }

        @Override
        public boolean isReady() {
            return false;
        }
    }

    /** Lazily created daemon pool for closing refused calls whose options carry no executor. */
    private static final class SharedExecutor {
        static final ExecutorService INSTANCE;

        static {
            AtomicInteger n = new AtomicInteger();
            ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
                    new SynchronousQueue<>(), r -> {
                        Thread t = new Thread(r, "grpc-retry-deadline-" + n.incrementAndGet());
                        t.setDaemon(true);
                        return t;
                    });
            INSTANCE = pool;
        }
    }
}
