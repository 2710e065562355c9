/**
 * Micrometer meters of the engine, the guard and deadlines, and the meter names (Micrometer is optional:
 * these types need it on the class path).
 *
 * <p><b>API</b>: the types of this package are part of grpc-retry's public API (listed in docs/api.md);
 * they change only with a note in the release notes.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.metrics;

import org.jspecify.annotations.NullMarked;
