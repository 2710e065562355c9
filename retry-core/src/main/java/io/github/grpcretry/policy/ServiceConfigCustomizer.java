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
     * @param channel the channel's name: net.devh's {@code @GrpcClient("<channel>")} on the Spring Boot 3.5
     *     line, the name given to Spring gRPC's {@code createChannel} on the Spring Boot 4.1 line; {@code GLOBAL}
     *     is never passed: GLOBAL's entries are already part of {@code config}
     * @param config the merged config, never null (possibly {@link ServiceConfig#EMPTY})
     * @return the config to use, not null
     */
    ServiceConfig customize(String channel, ServiceConfig config);
}
