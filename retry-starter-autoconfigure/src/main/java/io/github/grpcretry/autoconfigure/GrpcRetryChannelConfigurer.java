package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.reload.PolicySources;
import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.grpc.ManagedChannelBuilder;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelConfigurer;
import net.devh.boot.grpc.client.config.GrpcChannelProperties;
import net.devh.boot.grpc.client.config.GrpcChannelsProperties;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;

/**
 * Configures every net.devh channel builder from the channel's {@link ChannelRetryConfig}.
 *
 * <ul>
 *   <li><b>native</b>: {@code defaultServiceConfig} with the retry parts (retryPolicy, hedgingPolicy,
 *       retryThrottling), {@code enableRetry()}, {@code maxRetryAttempts/maxHedgedAttempts(cap)},
 *       {@code retryBufferSize}, {@code perRpcBufferLimit} and the connect timeout, then the
 *       {@link InterceptorEngineInstaller} (which adds the attempt tracer). With a cap of 1 the retry
 *       parts are left out (grpc-java rejects a policy of one attempt).</li>
 *   <li><b>interceptor</b>: {@code defaultServiceConfig} without the retry parts (timeouts,
 *       wait-for-ready and message limits still apply), grpc-java's caps of one attempt (nothing retries
 *       underneath the engine; grpc-java's transparent retry stays on), the connect timeout, then the
 *       {@link InterceptorEngineInstaller}, which puts the retrying interceptor on the builder.</li>
 * </ul>
 * A service config the channel's name resolver supplies is put under {@link PolicySources}' control
 * (its retry parts run by the interceptor engine for the names the channel does not configure; the
 * channel's own laid over it with the native one).
 * A builder is only touched when the channel has something to set.
 */
public class GrpcRetryChannelConfigurer implements GrpcChannelConfigurer, Ordered {

    /**
     * Runs before the deadline configurer ({@code LOWEST_PRECEDENCE - 100}): an interceptor added
     * earlier to a builder runs later, so the deadline rules wrap the engine and the engine sees
     * the final deadline.
     */
    public static final int ORDER = 0;

    @Override
    public int getOrder() {
        return ORDER;
    }

    /**
     * Puts the engine's interceptor on one channel's builder: the retrying interceptor when
     * engine=interceptor (called for every channel), the attempt tracer when engine=native (called
     * for every channel with settings of its own).
     */
    @FunctionalInterface
    public interface InterceptorEngineInstaller {

        /**
         * @param builder the channel's builder (e.g. call {@code builder.intercept(...)})
         * @param channel the net.devh channel name
         * @param config the channel's effective configuration (retry parts included)
         */
        void install(ManagedChannelBuilder<?> builder, String channel, ChannelRetryConfig config);
    }

    private final ChannelRetryConfigs configs;
    private final ChannelSetup.Engine engine;
    private final @Nullable InterceptorEngineInstaller interceptorEngine;
    private final @Nullable GrpcChannelsProperties channelsProperties;
    private final @Nullable PolicySources policySources;

    /**
     * @param interceptorEngine installs the interceptor engine; null = none (engine=interceptor then
     *     only applies the non-retry parts)
     * @param channelsProperties net.devh's client properties, used to map an in-process server name
     *     back to the client name (may be null)
     */
    public GrpcRetryChannelConfigurer(ChannelRetryConfigs configs, ChannelSetup.Engine engine,
            @Nullable InterceptorEngineInstaller interceptorEngine, @Nullable GrpcChannelsProperties channelsProperties) {
        this(configs, engine, interceptorEngine, channelsProperties, null);
    }

    /**
     * @param policySources puts a service config the channel's name resolver supplies under its control
     *     (null = none)
     */
    public GrpcRetryChannelConfigurer(ChannelRetryConfigs configs, ChannelSetup.Engine engine,
            @Nullable InterceptorEngineInstaller interceptorEngine, @Nullable GrpcChannelsProperties channelsProperties,
            @Nullable PolicySources policySources) {
        this.configs = Objects.requireNonNull(configs, "configs");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.interceptorEngine = interceptorEngine;
        this.channelsProperties = channelsProperties;
        this.policySources = policySources;
    }

    public ChannelSetup.Engine engine() {
        return engine;
    }

    @Override
    public void accept(ManagedChannelBuilder<?> builder, String builderName) {
        String channel = channelName(builderName);
        // a reloadable configuration learns that this channel is built: what the builder took needs a restart to change
        ChannelRetryConfig config = configs instanceof ReloadableChannels reloadable ? reloadable.built(channel)
                : configs.forChannel(channel);
        // The engine's interceptor goes on after the service config (it reads the retry parts from config).
        if (ChannelSetup.configure(builder, config, engine) && interceptorEngine != null) {
            interceptorEngine.install(builder, channel, config);
        }
        if (policySources != null) {
            policySources.install(builder, channel, () -> configs instanceof ReloadableChannels reloadable
                    ? reloadable.ownConfig(channel) : configs.forChannel(channel));
        }
    }

    /**
     * The client name for the name net.devh passes with a builder. For an {@code in-process:<server>}
     * address net.devh passes the server name, not the client name (and shares one channel among
     * clients naming the same server); it is mapped back to the client whose address names that
     * server, preferring one that has retry settings of its own. An entry has retry settings for a client
     * when its name matches the client's as start-up matches them ({@link RetryConfigResolver#matches}:
     * {@code mysvc} for {@code MySvc}).
     */
    public String channelName(String builderName) {
        if (channelsProperties == null || hasEntry(builderName)) {
            return builderName;
        }
        List<String> candidates = new ArrayList<>();
        for (Map.Entry<String, GrpcChannelProperties> e : channelsProperties.getClient().entrySet()) {
            URI address = e.getValue() == null ? null : e.getValue().getAddress();
            if (address != null && "in-process".equals(address.getScheme())
                    && builderName.equals(address.getSchemeSpecificPart())) {
                candidates.add(e.getKey());
            }
        }
        for (String c : candidates) {
            if (hasEntry(c)) {
                return c;
            }
        }
        return candidates.isEmpty() ? builderName : candidates.get(0);
    }

    /** Whether an entry of {@code grpc.retry.clients} other than GLOBAL applies to the client {@code name}. */
    private boolean hasEntry(String name) {
        for (String entry : configs.configuredChannels()) {
            if (!RetryConfigResolver.isGlobal(entry) && RetryConfigResolver.matches(entry, name)) {
                return true;
            }
        }
        return false;
    }
}
