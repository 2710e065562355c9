package io.github.grpcretry.spring.report;

import io.github.grpcretry.metrics.RetryMeterNames;
import io.grpc.ConnectivityState;
import java.util.Map;

/**
 * The connectivity state of the application's channels by channel name, for health, the endpoint
 * and the {@value RetryMeterNames#CHANNEL_STATE} gauges. Implementations must not ask a channel to
 * connect ({@code getState(false)}).
 */
@FunctionalInterface
public interface ChannelStateSource {

    ChannelStateSource NONE = Map::of;

    /** The state of every channel known now; channels not built yet are absent. */
    Map<String, ConnectivityState> states();
}
