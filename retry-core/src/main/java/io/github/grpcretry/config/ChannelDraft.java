package io.github.grpcretry.config;

import io.github.grpcretry.config.RetryConfigResolver.ChannelField;
import io.github.grpcretry.config.RetryConfigResolver.ClientProperties;
import io.github.grpcretry.internal.config.RetryConfigValidator;
import io.github.grpcretry.internal.config.RetryThrottlingDraft;
import io.github.grpcretry.internal.config.ServiceConfigDraft;
import io.github.grpcretry.internal.config.Sourced;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ServiceConfig;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Everything configured for one channel (or GLOBAL), not yet validated: its service config (the file and the
 * typed properties already merged) and its channel-wide settings as bound, the properties record itself. Each
 * channel-wide value is read through the table of channel-wide fields ({@link ChannelField}), with the property
 * path it was set at.
 *
 * @param path the channel's property prefix, e.g. {@code grpc.retry.clients.inventory}
 * @param properties the channel's bound properties (its service-config parts are in {@code serviceConfig})
 * @param global the GLOBAL entry whose values this channel inherits where it sets none; null for none
 */
record ChannelDraft(String channel, String path, ServiceConfigDraft serviceConfig, ClientProperties properties,
        @Nullable ChannelDraft global) {

    ChannelDraft {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(serviceConfig, "serviceConfig");
        Objects.requireNonNull(properties, "properties");
    }

    /** A channel with nothing set. */
    static ChannelDraft empty(String channel, String path) {
        return new ChannelDraft(channel, path, ServiceConfigDraft.EMPTY, ClientProperties.NONE, null);
    }

    /** This channel with another service config. */
    ChannelDraft withServiceConfig(ServiceConfigDraft newServiceConfig) {
        return new ChannelDraft(channel, path, newServiceConfig, properties, global);
    }

    /**
     * This channel with every channel-wide value it leaves unset taken from {@code globalDraft}, field by field
     * (each field of the table, and the retrythrottling fields). Method entries are not copied: they are layered at
     * match time ({@link ServiceConfig#layeredOver}).
     */
    ChannelDraft inheriting(ChannelDraft globalDraft) {
        if (globalDraft == this) {
            return this;
        }
        RetryThrottlingDraft own = serviceConfig.retryThrottling();
        RetryThrottlingDraft inherited = globalDraft.serviceConfig.retryThrottling();
        RetryThrottlingDraft t = own == null ? inherited : own.overlay(inherited);
        return new ChannelDraft(channel, path, new ServiceConfigDraft(serviceConfig.methodConfigs(), t), properties,
                globalDraft);
    }

    /** The value of {@code field} and where it was set: this channel's, else GLOBAL's; null when neither sets it. */
    @Nullable Sourced<?> get(ChannelField field) {
        Sourced<?> own = field.sourced(properties, path);
        return own != null || global == null ? own : global.get(field);
    }

    /** The channel-wide settings validated, with their defaults ({@link ChannelField#settings}). */
    Settings settings(RetryConfigValidator validator) {
        return ChannelField.settings(this, validator);
    }

    /**
     * The channel-wide settings of one channel after validation and defaults, in the configuration the engine
     * takes (its service config still empty: the resolution lays the channel's in), and where its attempt cap was
     * set (for the cap warnings).
     */
    record Settings(ChannelRetryConfig config, String maxAttemptsCapPath) {
    }
}
