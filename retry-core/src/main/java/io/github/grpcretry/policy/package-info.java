/**
 * The gRFC A6 service config model: {@link io.github.grpcretry.policy.ServiceConfig},
 * {@link io.github.grpcretry.policy.MethodConfig}, {@link io.github.grpcretry.policy.MethodName}, the retry,
 * hedging and throttling policies, a channel's effective configuration
 * ({@link io.github.grpcretry.policy.ChannelRetryConfig}), the hook that changes it in code
 * ({@link io.github.grpcretry.policy.ServiceConfigCustomizer}) and the invalid-configuration report.
 *
 * <p><b>API</b>: the types of this package are part of grpc-retry's public API (listed in docs/api.md);
 * they change only with a note in the release notes.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.policy;

import org.jspecify.annotations.NullMarked;
