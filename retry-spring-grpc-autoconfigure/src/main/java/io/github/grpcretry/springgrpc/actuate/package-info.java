/**
 * Actuator on the Spring Boot 4.1 line: the {@code grpcRetry} health contributor and the
 * {@code grpcretry} endpoint.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.springgrpc.actuate;

import org.jspecify.annotations.NullMarked;
