/**
 * The Spring Boot 3.5 line (net.devh channels): the validated per-channel configuration, the channel
 * configurer that applies the chosen engine, and the start-up checks.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.autoconfigure;

import org.jspecify.annotations.NullMarked;
