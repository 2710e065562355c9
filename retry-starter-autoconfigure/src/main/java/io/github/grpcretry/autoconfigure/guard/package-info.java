/**
 * The cross-layer amplification guard on the Spring Boot 3.5 line: its server interceptor and
 * channel configurer.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.autoconfigure.guard;

import org.jspecify.annotations.NullMarked;
