package io.github.grpcretry.deadline;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The deadline rules a {@link DeadlineClientInterceptor} applies.
 *
 * @param defaultTimeout deadline given to a call that has none at all (neither on its
 *     {@code CallOptions} nor inherited from the gRPC {@code Context}); absent = none
 * @param reserve taken off a deadline inherited from the gRPC {@code Context} (an inbound call being
 *     served), so the downstream call gives up before the upstream one does; zero = off
 * @param minRemaining a call with less time than this left fails at once with DEADLINE_EXCEEDED and
 *     is never sent; zero = off
 */
public record DeadlineSettings(@Nullable Duration defaultTimeout, Duration reserve, Duration minRemaining) {

    /** No default, no reserve, no floor: the interceptor changes nothing. */
    public static final DeadlineSettings NONE = new DeadlineSettings(null, Duration.ZERO, Duration.ZERO);

    public DeadlineSettings {
        reserve = reserve == null ? Duration.ZERO : reserve;
        minRemaining = minRemaining == null ? Duration.ZERO : minRemaining;
        if (defaultTimeout != null && (defaultTimeout.isNegative() || defaultTimeout.isZero())) {
            throw new IllegalArgumentException("defaultTimeout must be > 0, was " + defaultTimeout);
        }
        if (reserve.isNegative()) {
            throw new IllegalArgumentException("reserve must be >= 0, was " + reserve);
        }
        if (minRemaining.isNegative()) {
            throw new IllegalArgumentException("minRemaining must be >= 0, was " + minRemaining);
        }
    }

    public DeadlineSettings withDefaultTimeout(Duration value) {
        return new DeadlineSettings(value, reserve, minRemaining);
    }

    public DeadlineSettings withReserve(Duration value) {
        return new DeadlineSettings(defaultTimeout, value, minRemaining);
    }

    public DeadlineSettings withMinRemaining(Duration value) {
        return new DeadlineSettings(defaultTimeout, reserve, value);
    }
}
