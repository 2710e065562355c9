/**
 * The configuration of channels from a property tree, for the integrations of a framework (the Spring Boot
 * lines' modules, through retry-spring): {@link io.github.grpcretry.config.RetryConfigResolver} takes a
 * channel's properties as typed records, service-config JSON files, a base service config and the
 * {@link io.github.grpcretry.policy.ServiceConfigCustomizer}s, and makes every channel's
 * {@link io.github.grpcretry.policy.ChannelRetryConfig}, each problem named by its property path or JSON
 * path. A framework binds its own property types and hands them over as these records.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.config;

import org.jspecify.annotations.NullMarked;
