/**
 * The configuration of the channels, resolved from the {@code grpc.retry.clients.*} property tree, the
 * service-config JSON files it names, a base layer and the customizers ({@link
 * io.github.grpcretry.spring.config.RetryConfigResolver}); the unknown-key check, the deadline
 * property checks and the start-up report of an invalid configuration. Uses retry-core only.
 *
 * <p><b>Integration SPI</b>: for the auto-configuration modules of the Spring Boot lines, not for
 * application code; counted apart from the user API in docs/api.md.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.spring.config;

import org.jspecify.annotations.NullMarked;
