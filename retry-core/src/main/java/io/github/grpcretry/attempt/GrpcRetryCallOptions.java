package io.github.grpcretry.attempt;

import io.github.grpcretry.policy.RetryPolicy;
import io.grpc.CallOptions;
import java.util.Objects;

/**
 * Per-call switches of the interceptor engine, as {@link CallOptions.Key}s. With a generated stub:
 * {@code stub.withOption(GrpcRetryCallOptions.DISABLE, true)} or
 * {@code stub.withOption(GrpcRetryCallOptions.POLICY, policy)}.
 */
public final class GrpcRetryCallOptions {

    /** {@code true}: this call is sent once, never retried (it takes the engine's pass-through path). */
    public static final CallOptions.Key<Boolean> DISABLE =
            CallOptions.Key.createWithDefault("io.github.grpcretry.disable", Boolean.FALSE);

    /**
     * This call's own retry policy, used instead of the method's (its max attempts still limited by
     * the channel's {@code max-attempts-cap}).
     */
    public static final CallOptions.Key<RetryPolicy> POLICY = CallOptions.Key.create("io.github.grpcretry.policy");

    private GrpcRetryCallOptions() {
    }

    /** {@code options} with retries turned off for the call. */
    public static CallOptions withoutRetries(CallOptions options) {
        return options.withOption(DISABLE, Boolean.TRUE);
    }

    /** {@code options} giving the call its own retry policy. */
    public static CallOptions withPolicy(CallOptions options, RetryPolicy policy) {
        return options.withOption(POLICY, Objects.requireNonNull(policy, "policy"));
    }

    /** Whether retries are turned off for a call with these options. */
    public static boolean isDisabled(CallOptions options) {
        return Boolean.TRUE.equals(options.getOption(DISABLE));
    }
}
