/**
 * The amplification guard: a server whose own downstream calls exhausted their retries answers its
 * caller with "do not retry" (server pushback), so retries do not multiply across layers.
 *
 * <p><b>API</b>: the types of this package are part of grpc-retry's public API (listed in docs/api.md);
 * they change only with a note in the release notes.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.guard;

import org.jspecify.annotations.NullMarked;
