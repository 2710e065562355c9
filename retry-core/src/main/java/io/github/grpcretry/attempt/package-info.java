/**
 * The interceptor retry engine (gRFC A6 retries and hedging) and what a caller or an integrator sees of it:
 * the per-call options ({@link io.github.grpcretry.attempt.GrpcRetryCallOptions}), the engine's events
 * ({@link io.github.grpcretry.attempt.RetryEventListener}, {@link io.github.grpcretry.attempt.CallTarget},
 * {@link io.github.grpcretry.attempt.AttemptKind}, {@link io.github.grpcretry.attempt.SuppressionReason}),
 * pluggable retry decisions ({@link io.github.grpcretry.attempt.RetryDecider}), the engine's factory
 * ({@link io.github.grpcretry.attempt.RetryingClientInterceptor}) and its timers
 * ({@link io.github.grpcretry.attempt.RetryScheduler}). The engine's rules are described in docs/design.md;
 * the call implementations are package-private.
 *
 * <p><b>API</b>: the types of this package are part of grpc-retry's public API (listed in docs/api.md);
 * they change only with a note in the release notes.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.attempt;

import org.jspecify.annotations.NullMarked;
