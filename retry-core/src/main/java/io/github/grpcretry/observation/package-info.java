/**
 * Per-attempt observations of the interceptor engine with Micrometer's Observation API (Micrometer is
 * optional: these types need {@code micrometer-observation} on the class path): each attempt is a child
 * observation {@code grpc.client.attempt} of the call's observation, and its trace context goes into that
 * attempt's headers (docs/observability.md).
 *
 * <p><b>API</b>: the types of this package are part of grpc-retry's public API (listed in docs/api.md);
 * they change only with a note in the release notes.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.observation;

import org.jspecify.annotations.NullMarked;
