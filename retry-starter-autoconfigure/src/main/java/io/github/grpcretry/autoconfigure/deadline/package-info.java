/**
 * Deadline propagation and cascade defence on the Spring Boot 3.5 line: the channel configurer, the
 * task decorator that carries the gRPC Context, and the registration of the server interceptor and the
 * HTTP deadline filter.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.autoconfigure.deadline;

import org.jspecify.annotations.NullMarked;
