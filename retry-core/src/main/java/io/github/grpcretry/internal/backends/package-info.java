/**
 * Retries and hedges that avoid the backends their call has tried: a load-balancing policy of the starter's
 * ({@link io.github.grpcretry.internal.backends.TriedBackendsLoadBalancerProvider}) runs the application's own
 * policy as its child and asks the child's picker again when it returns a backend the call already tried; the
 * engine's per-attempt stream tracer factory ({@link io.github.grpcretry.internal.backends.TriedBackends}) carries
 * the call's history to the picker in the attempt's {@code CallOptions}.
 *
 * <p><b>Internal</b>: not API. May change or disappear without notice; code outside retry-core must not
 * use it (an ArchUnit rule of the auto-configuration modules checks it).
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.internal.backends;

import org.jspecify.annotations.NullMarked;
