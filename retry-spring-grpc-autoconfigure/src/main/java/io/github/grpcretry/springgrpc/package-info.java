/**
 * The Spring Boot 4.1 line (Spring gRPC channels): the auto-configurations that put retry-core's engine,
 * deadlines, guard, meters and observations into every channel a Spring gRPC channel factory builds, the
 * service-config take-over and the start-up checks.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.springgrpc;

import org.jspecify.annotations.NullMarked;
