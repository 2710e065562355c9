package io.github.grpcretry.springgrpc.testing;

import java.util.Map;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.OriginLookup;
import org.springframework.boot.origin.SystemEnvironmentOrigin;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Environment variables for one application: a property source Spring Boot reads as it reads the
 * process environment (relaxed names such as {@code GRPC_RETRY_CLIENTS_SVC_MAXATTEMPTSCAP}, origins
 * {@code System Environment Property "..."}), just above the real one.
 */
public final class EnvironmentVariables extends SystemEnvironmentPropertySource implements OriginLookup<String> {

    private EnvironmentVariables(Map<String, Object> variables) {
        super("test-" + StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables);
    }

    /** An initializer that adds {@code variables} to the application's environment. */
    public static ApplicationContextInitializer<ConfigurableApplicationContext> of(Map<String, Object> variables) {
        return context -> context.getEnvironment().getPropertySources().addBefore(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new EnvironmentVariables(variables));
    }

    @Override
    public Origin getOrigin(String key) {
        return getSource().containsKey(key) ? new SystemEnvironmentOrigin(key) : null;
    }
}
