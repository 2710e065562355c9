/**
 * The Micrometer gauges of the limiters and of the channels' connectivity states. Uses retry-core
 * only.
 *
 * <p><b>Integration SPI</b>: for the auto-configuration modules of the Spring Boot lines, not for
 * application code; counted apart from the user API in docs/api.md.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.spring.metrics;

import org.jspecify.annotations.NullMarked;
