package io.github.grpcretry.sample.lab;

import java.util.Map;

/**
 * The property names a Spring line (and, on Spring Boot 4.1, a route) gives a {@link ChannelSpec}: where
 * the channel's address goes, where its service config goes, and the name its channel factory takes.
 */
public interface ChannelNaming {

    /** The channel's own properties (its address). */
    Map<String, String> channel(ChannelSpec spec);

    /** The prefix of the channel's service config, ending in {@code service-config.}. */
    String serviceConfigPrefix(ChannelSpec spec);

    /** The prefix of the channel's other settings, {@code grpc.retry.clients.<key>.}. */
    String clientPrefix(ChannelSpec spec);

    /** The name the line's channel factory builds the channel under. */
    default String channelName(ChannelSpec spec) {
        return spec.name();
    }

    /** A channel name as a key of a Spring property map: in brackets when it holds characters a key cannot. */
    static String key(String channelName) {
        return channelName.matches("[a-zA-Z0-9-]+") ? channelName : "[" + channelName + "]";
    }
}
