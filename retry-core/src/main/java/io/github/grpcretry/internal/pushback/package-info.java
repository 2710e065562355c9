/**
 * Parsing of the {@code grpc-retry-pushback-ms} trailer (gRFC A6 server pushback).
 *
 * <p><b>Internal</b>: not API. May change or disappear without notice; code outside retry-core must not
 * use it (an ArchUnit rule of the auto-configuration modules checks it).
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.internal.pushback;

import org.jspecify.annotations.NullMarked;
