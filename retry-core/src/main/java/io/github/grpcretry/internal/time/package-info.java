/**
 * The rules about durations every part of retry-core shares: the longest duration accepted, overflow-free
 * nanoseconds, the protobuf-JSON form and the form users write. Depends on no other grpc-retry package.
 * Retry-spring reaches what it needs of them through {@code RetryConfigResolver}.
 *
 * <p><b>Internal</b>: not API. May change or disappear without notice; code outside retry-core must not
 * use it (an ArchUnit rule of the auto-configuration modules checks it).
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.internal.time;

import org.jspecify.annotations.NullMarked;
