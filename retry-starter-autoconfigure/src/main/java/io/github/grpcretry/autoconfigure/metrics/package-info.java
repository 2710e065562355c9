/**
 * Meters and event listeners on the Spring Boot 3.5 line: the Micrometer event listener, the
 * limiter and connectivity gauges, and the deadline and guard meters.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
