/**
 * A channel's interceptors for either engine ({@link io.github.grpcretry.spring.channel.ChannelSetup}),
 * and the resilience4j Retry references
 * of a configuration. Uses retry-core only.
 *
 * <p><b>Integration SPI</b>: for the auto-configuration modules of the Spring Boot lines, not for
 * application code; counted apart from the user API in docs/api.md.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.spring.channel;

import org.jspecify.annotations.NullMarked;
