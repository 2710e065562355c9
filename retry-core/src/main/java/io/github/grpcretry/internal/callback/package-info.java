/**
 * What happens when application code the engine calls (an event listener, a retry decider, a
 * customizer) throws: logged once per callback and kind, then counted.
 *
 * <p><b>Internal</b>: not API. May change or disappear without notice; code outside retry-core must not
 * use it (an ArchUnit rule of the auto-configuration modules checks it).
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.internal.callback;

import org.jspecify.annotations.NullMarked;
