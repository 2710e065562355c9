package io.github.grpcretry.spring;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import org.springframework.boot.context.properties.bind.Binder;

/**
 * How a Spring Boot line makes the configuration of every channel again from the changed environment, for
 * a run-time reload (docs/reload.md): it binds its property types through {@code binder} (the same
 * conversions as at start-up) and validates exactly as at start-up, the unknown-key check included.
 */
@FunctionalInterface
public interface RetryConfigRebinding {

    /**
     * @throws io.github.grpcretry.policy.InvalidRetryConfigurationException listing every problem
     */
    ChannelRetryConfigs resolve(Binder binder);
}
