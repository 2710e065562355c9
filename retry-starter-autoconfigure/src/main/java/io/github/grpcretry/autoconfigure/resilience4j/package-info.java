/**
 * The resilience4j bridge on the Spring Boot 3.5 line: a named resilience4j {@code Retry}
 * instance as a channel's retry decider.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.autoconfigure.resilience4j;

import org.jspecify.annotations.NullMarked;
