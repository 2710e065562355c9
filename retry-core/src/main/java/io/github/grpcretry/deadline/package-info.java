/**
 * Deadlines across hops: the client interceptor that gives calls a default deadline, takes a reserve off
 * inherited deadlines and fails calls with too little time left; the server interceptor that maps an
 * expired inbound deadline; {@link io.github.grpcretry.deadline.Deadlines} for code that degrades as time
 * runs out; and {@link io.github.grpcretry.deadline.GrpcContextPropagation}, which carries the gRPC
 * {@code Context} (deadline, cancellation) across threads.
 *
 * <p><b>API</b>: the types of this package are part of grpc-retry's public API (listed in docs/api.md);
 * they change only with a note in the release notes.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.github.grpcretry.deadline;

import org.jspecify.annotations.NullMarked;
