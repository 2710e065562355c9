package io.github.grpcretry.policy;

import java.util.Set;

/**
 * The effective retry configuration of every channel, after the service-config file and the typed
 * properties were merged, GLOBAL applied, values validated and attempts capped.
 */
public interface ChannelRetryConfigs {

    /** Name of the entry whose values every channel inherits. */
    String GLOBAL = "GLOBAL";

    /**
     * The effective configuration of {@code channel}; a channel that was not configured gets what
     * GLOBAL (and the defaults) give it.
     */
    ChannelRetryConfig forChannel(String channel);

    /** Channels that have their own entry (GLOBAL excluded), sorted. */
    Set<String> configuredChannels();
}
