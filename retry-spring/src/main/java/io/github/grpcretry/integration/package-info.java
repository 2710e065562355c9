/**
 * What the auto-configuration modules of both Spring Boot lines share (module retry-spring), beyond
 * retry-core's user API: the configuration
 * resolver ({@link io.github.grpcretry.integration.RetryConfigResolver}: property tree, JSON files, base
 * service config, customizers, path-aware problems), the channel setup for both engines
 * ({@link io.github.grpcretry.integration.ChannelSetup}), the statistics, gauges and channel-state
 * meters read by Actuator and metrics, and what both lines' Spring glue wraps: the HTTP deadline filter,
 * the health and endpoint report, the start-up reports of a wrong Spring Boot line and of an invalid
 * configuration.
 *
 * <p><b>Integration SPI</b>: for the auto-configuration modules of the Spring Boot lines (and other
 * framework integrations), not for application code. Counted apart from the user API in docs/api.md; it
 * may change between minor versions, with a note in the release notes.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.integration;

import org.jspecify.annotations.NullMarked;
