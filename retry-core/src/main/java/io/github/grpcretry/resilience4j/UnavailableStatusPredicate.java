package io.github.grpcretry.resilience4j;

import io.grpc.Status;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A resilience4j exception predicate for gRPC: true for a failure whose gRPC status (found with
 * {@link Status#fromThrowable}, through the cause chain) is UNAVAILABLE, the one status gRFC A6 treats
 * as safe to retry for any method. resilience4j's default predicate retries every exception, and so
 * every status (INVALID_ARGUMENT, PERMISSION_DENIED, DEADLINE_EXCEEDED, ...); name this class instead:
 * {@code resilience4j.retry.instances.<name>.retry-exception-predicate:
 * io.github.grpcretry.resilience4j.UnavailableStatusPredicate}.
 */
public class UnavailableStatusPredicate implements Predicate<Throwable> {

    @Override
    public boolean test(@Nullable Throwable throwable) {
        return throwable != null && Status.fromThrowable(throwable).getCode() == Status.Code.UNAVAILABLE;
    }
}
