package io.github.grpcretry.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/** Names and key values of the per-attempt observation; {@link DefaultAttemptObservationConvention} is the default. */
public interface AttemptObservationConvention extends ObservationConvention<AttemptObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof AttemptObservationContext;
    }
}
