package io.github.grpcretry.testing;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.ServiceConfig;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** A {@link ChannelRetryConfigs} over fixed, already-effective channel configs (what the binding layer would produce). */
public final class FixedChannelRetryConfigs implements ChannelRetryConfigs {

    private final Map<String, ChannelRetryConfig> configs = new LinkedHashMap<>();

    public FixedChannelRetryConfigs(ChannelRetryConfig... configs) {
        for (ChannelRetryConfig c : configs) {
            this.configs.put(c.channel(), c);
        }
    }

    @Override
    public ChannelRetryConfig forChannel(String channel) {
        ChannelRetryConfig c = configs.get(channel);
        return c != null ? c : ChannelRetryConfig.of(channel, ServiceConfig.EMPTY);
    }

    @Override
    public Set<String> configuredChannels() {
        return Collections.unmodifiableSet(new TreeSet<>(configs.keySet()));
    }
}
