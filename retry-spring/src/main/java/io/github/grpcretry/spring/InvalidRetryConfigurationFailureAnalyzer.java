package io.github.grpcretry.spring;

import io.github.grpcretry.integration.ConfigProblemReport;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.env.Environment;

/**
 * Reports an invalid retry configuration: each problem with its property path (grpc.retry.*, on the
 * Spring Boot 4.1 line also Spring Boot's {@code spring.grpc.client.channel.<name>.service-config.*}, or a
 * service-config file and its JSON path), the value, where the value was set (its origin: file and line,
 * environment variable, ...) and the rule, then what to change. Spring Boot passes the application's
 * {@link Environment} to the constructor. Registered in this module's {@code META-INF/spring.factories}.
 */
public class InvalidRetryConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRetryConfigurationException> {

    private final Environment environment;

    public InvalidRetryConfigurationFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidRetryConfigurationException cause) {
        return new FailureAnalysis(ConfigProblemReport.description(cause.getProblems(), this::origin),
                ConfigProblemReport.action(cause.getProblems()), cause);
    }

    /** Where the value of {@code path} was set, as Spring Boot's own reports name it; null when unknown. */
    private @Nullable String origin(String path) {
        ConfigurationPropertyName name = ConfigurationPropertyName.adapt(path, '.');
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty property = source.getConfigurationProperty(name);
            if (property != null && property.getOrigin() != null) {
                return property.getOrigin().toString();
            }
        }
        return null;
    }
}
