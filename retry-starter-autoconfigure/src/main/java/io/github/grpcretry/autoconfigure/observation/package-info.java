/**
 * Per-attempt observations on the Spring Boot 3.5 line.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.autoconfigure.observation;

import org.jspecify.annotations.NullMarked;
