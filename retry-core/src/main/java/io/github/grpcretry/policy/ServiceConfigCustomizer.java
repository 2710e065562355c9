package io.github.grpcretry.policy;

/**
 * Changes a channel's service config in code. Declare one or more as beans; they run in
 * {@code @Order} order on every channel's merged config (its own entries layered over GLOBAL's,
 * file and typed properties merged), before the attempt cap is applied and checked. The result is
 * validated like configured values; problems are reported with the path
 * {@code ServiceConfigCustomizer(<channel>) methodConfig[i]...}.
 */
@FunctionalInterface
public interface ServiceConfigCustomizer {

    /**
     * @param channel the net.devh channel name ({@code @GrpcClient("<channel>")}); {@code GLOBAL} is
     *     never passed: GLOBAL's entries are already part of {@code config}
     * @param config the merged config, never null (possibly {@link ServiceConfig#EMPTY})
     * @return the config to use, not null
     */
    ServiceConfig customize(String channel, ServiceConfig config);
}
