/**
 * A resilience4j {@code Retry} instance as the engine's retry decider (resilience4j is optional).
 *
 * <p><b>API</b>: the types of this package are part of grpc-retry's public API (listed in docs/api.md);
 * they change only with a note in the release notes.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.resilience4j;

import org.jspecify.annotations.NullMarked;
