/**
 * Channels whose configuration changes while they run: the run-time reload of the properties
 * ({@link io.github.grpcretry.spring.reload.ReloadableChannels}) and a name resolver's service config
 * ({@link io.github.grpcretry.spring.reload.PolicySources}, with the calls that wait for its first
 * answer). Uses {@code config} and {@code channel}.
 *
 * <p><b>Integration SPI</b>: for the auto-configuration modules of the Spring Boot lines, not for
 * application code; counted apart from the user API in docs/api.md.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.spring.reload;

import org.jspecify.annotations.NullMarked;
