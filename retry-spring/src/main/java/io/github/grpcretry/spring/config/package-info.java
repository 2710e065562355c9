/**
 * The start-up checks of the configuration that need Spring's view of it: the unknown-key check, the
 * rules of the deadline properties and the start-up report of an invalid configuration. The channels'
 * configuration itself is resolved by retry-core's {@link io.github.grpcretry.config.RetryConfigResolver}.
 * Uses retry-core only.
 *
 * <p><b>Integration SPI</b>: for the auto-configuration modules of the Spring Boot lines, not for
 * application code; counted apart from the user API in docs/api.md.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.spring.config;

import org.jspecify.annotations.NullMarked;
