/**
 * The retry budget of a channel (beyond A6): retries as a share of calls over a sliding window.
 *
 * <p><b>API</b>: the types of this package are part of grpc-retry's public API (listed in docs/api.md);
 * they change only with a note in the release notes.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.budget;

import org.jspecify.annotations.NullMarked;
