package io.github.grpcretry.springgrpc;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The target grpc-java canonicalized for each Spring gRPC channel when it built it (such as
 * {@code dns:///inventory:9090}), by channel name: learnt by {@link GrpcRetryChannelCustomizer} when a
 * channel is built, read when {@link GrpcRetryClientInterceptor} makes the channel's engine on its first
 * call (the {@code grpc.target} of the A96 meters).
 */
final class ChannelTargets {

    private final Map<String, String> targets = new ConcurrentHashMap<>();

    void built(String channel, String target) {
        targets.put(channel, target);
    }

    /** The channel's canonical target; its name when no channel of that name was built by Spring gRPC. */
    String of(String channel) {
        return targets.getOrDefault(channel, channel);
    }
}
