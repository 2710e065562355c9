package io.github.grpcretry.guard;

import io.github.grpcretry.attempt.GrpcRetryCallOptions;
import io.github.grpcretry.internal.callback.CallbackFailures;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.internal.pushback.Pushback;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Client side of the amplification guard (docs/design.md §8): watches the outcome of every logical call
 * made while a guarded inbound call is served and marks that inbound call's {@link GuardMarker}
 * when the downstream call failed after its retries were used up or suppressed.
 *
 * <p>It must see logical calls, not attempts: install it <em>outside</em> the interceptor engine
 * (with {@code ManagedChannelBuilder.intercept}, an interceptor added later runs earlier). With
 * grpc-java's own retry (engine=native) every interceptor is outside the retries, so it works with
 * a client that is not this starter's engine as well.
 *
 * <h2>The rule</h2>
 * A downstream call marks the inbound call when it closes with a non-OK status and either
 * <ol>
 *   <li>its trailers carry a {@code grpc-retry-pushback-ms} that means "stop" (negative, malformed
 *       or repeated): a layer further down already retried, or refused retries; passing the "stop"
 *       on keeps every layer above from retrying again; or</li>
 *   <li>the method had retries on this channel (a retry policy of 2 or more attempts, or a hedging
 *       policy, after the channel's cap; a call's own policy from {@link GrpcRetryCallOptions#POLICY}
 *       counts, a call with {@link GrpcRetryCallOptions#DISABLE} has none) and the status is one the
 *       policy retries (a retryable code; DEADLINE_EXCEEDED as well when the policy has a per-attempt
 *       receive timeout; for hedging a non-fatal code). Such a call ended with a retryable failure,
 *       so its retries were used up (max attempts) or suppressed (throttle, budget, deadline,
 *       pushback, commitment).</li>
 * </ol>
 * A failure with a status the policy does not retry (INVALID_ARGUMENT, NOT_FOUND, ...) does not
 * mark: nothing was retried, and the layer above decides by its own policy. A method without any
 * retries on this channel does not mark either (unless rule 1 applies), so the layer above remains
 * the one layer that retries.
 *
 * <p>Outside a guarded inbound call (no marker in the current Context) the call is not wrapped.
 */
public final class GuardClientInterceptor implements ClientInterceptor {

    private static final Policies NONE = new Policies(null, null);

    private final @Nullable ChannelRetryConfig config;
    private final GuardEventListener events;
    private final ConcurrentHashMap<String, Policies> policies = new ConcurrentHashMap<>();

    /** A method's retry and hedging policies on this channel (either may be null). */
    private record Policies(@Nullable RetryPolicy retry, @Nullable HedgingPolicy hedging) {
    }

    /**
     * @param config the channel's effective configuration (its policies say which failures were
     *     retried); absent for a channel without retries (only rule 1 applies)
     */
    public GuardClientInterceptor(@Nullable ChannelRetryConfig config) {
        this(config, GuardEventListener.NOOP);
    }

    public GuardClientInterceptor(@Nullable ChannelRetryConfig config, @Nullable GuardEventListener events) {
        this.config = config;
        this.events = Objects.requireNonNullElse(events, GuardEventListener.NOOP);
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
            CallOptions callOptions, Channel next) {
        GuardMarker marker = GuardMarker.current();
        ClientCall<ReqT, RespT> call = next.newCall(method, callOptions);
        if (marker == null) {
            return call;
        }
        return new WatchedCall<>(call, marker, method, callOptions);
    }

    /**
     * Whether a downstream call that closed with {@code status} and {@code trailers} failed after
     * its retries were used up or suppressed (the rule above).
     *
     * @param retry the method's retry policy on the channel (already capped); absent = none
     * @param hedging the method's hedging policy (already capped); absent = none
     */
    public static boolean retriesExhausted(Status status, Metadata trailers, @Nullable RetryPolicy retry,
            @Nullable HedgingPolicy hedging) {
        Status.Code code = status.getCode();
        if (code == Status.Code.OK) {
            return false;
        }
        if (Pushback.parse(trailers) == Pushback.STOP) {
            return true;
        }
        if (hedging != null && hedging.maxAttempts() >= 2) {
            return hedging.isNonFatal(code);
        }
        if (retry != null && retry.maxAttempts() >= 2) {
            return retry.isRetryable(code)
                    || code == Status.Code.DEADLINE_EXCEEDED && retry.perAttemptReceiveTimeout() != null;
        }
        return false;
    }

    private boolean exhausted(MethodDescriptor<?, ?> method, CallOptions options, Status status, Metadata trailers) {
        if (status.isOk()) {
            return false;
        }
        RetryPolicy retry = null;
        HedgingPolicy hedging = null;
        if (!GrpcRetryCallOptions.isDisabled(options)) {
            RetryPolicy own = options.getOption(GrpcRetryCallOptions.POLICY);
            if (own != null) {
                retry = config == null ? own : own.capped(config.maxAttemptsCap());
            } else if (config != null) {
                Policies p = policies.computeIfAbsent(method.getFullMethodName(), n -> {
                    MethodConfig mc = config.serviceConfig().find(method);
                    return mc == null ? NONE : new Policies(mc.retryPolicy(), mc.hedgingPolicy());
                });
                retry = p.retry();
                hedging = p.hedging();
            }
        }
        return retriesExhausted(status, trailers, retry, hedging);
    }

    private final class WatchedCall<ReqT, RespT> extends SimpleForwardingClientCall<ReqT, RespT> {
        private final GuardMarker marker;
        private final MethodDescriptor<ReqT, RespT> method;
        private final CallOptions options;

        WatchedCall(ClientCall<ReqT, RespT> delegate, GuardMarker marker, MethodDescriptor<ReqT, RespT> method,
                CallOptions options) {
            super(delegate);
            this.marker = marker;
            this.method = method;
            this.options = options;
        }

        @Override
        public void start(Listener<RespT> responseListener, Metadata headers) {
            super.start(new SimpleForwardingClientCallListener<>(responseListener) {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    // marked before the application hears of the failure, so its reaction sees the mark
                    if (exhausted(method, options, status, trailers)) {
                        marker.mark();
                        try {
                            events.inboundMarked(marker.inboundMethod(), method.getFullMethodName(), status.getCode());
                        } catch (RuntimeException e) {
                            // a listener must never break the call (docs/design.md §14)
                            CallbackFailures.SHARED.failed("GuardEventListener", events, "inboundMarked", e,
                                    "the event is skipped, the call goes on");
                        }
                    }
                    super.onClose(status, trailers);
                }
            }, headers);
        }
    }

    @Override
    public String toString() {
        return "GuardClientInterceptor[" + (config == null ? "-" : config.channel()) + "]";
    }
}
