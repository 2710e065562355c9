/**
 * Configuration as configured (drafts with the path of every value), the JSON reader, the validator and
 * the resolver that merges, validates, customizes and caps every channel's configuration.
 *
 * <p><b>Internal</b>: not API. May change or disappear without notice; code outside retry-core must not
 * use it (an ArchUnit rule of the auto-configuration modules checks it).
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.internal.config;

import org.jspecify.annotations.NullMarked;
