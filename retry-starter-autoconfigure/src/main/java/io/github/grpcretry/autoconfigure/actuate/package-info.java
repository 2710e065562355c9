/**
 * Actuator on the Spring Boot 3.5 line: the {@code grpcRetry} health contributor and the
 * {@code grpcretry} endpoint.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.autoconfigure.actuate;

import org.jspecify.annotations.NullMarked;
