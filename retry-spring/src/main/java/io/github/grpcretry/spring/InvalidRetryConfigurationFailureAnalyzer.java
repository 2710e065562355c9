package io.github.grpcretry.spring;

import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.spring.config.ConfigProblemReport;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;

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
        return new FailureAnalysis(ConfigProblemReport.description(cause.getProblems(), this::origin, this::written,
                this::replaced), ConfigProblemReport.action(cause.getProblems(), this::replaced), cause);
    }

    /**
     * For a property of a list entry ({@code ...method[0].retry.initial-backoff}) that a lower property source
     * sets while a higher one has other elements of the list: that source replaced the list whole (Spring Boot's
     * rule), with the name of the source and a key of the entry (or of the list) it has. Null otherwise.
     */
    private ConfigProblemReport.@Nullable ListReplacement replaced(String path) {
        if (path.contains(" ")) {
            return null;
        }
        ConfigurationPropertyName name = ConfigurationPropertyName.adapt(path, '.');
        ConfigurationPropertySource holder = null;
        String lost = null;
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty property = source.getConfigurationProperty(name);
            if (property != null) {
                holder = source;
                lost = property.getOrigin() == null ? null : property.getOrigin().toString();
                break;
            }
        }
        if (holder == null) {
            return null;
        }
        for (int i = 1; i < name.getNumberOfElements(); i++) {
            if (!name.isNumericIndex(i)) {
                continue;
            }
            ConfigurationPropertyName list = name.chop(i);
            ConfigurationPropertyName entry = name.chop(i + 1);
            for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
                if (source == holder) {
                    break;
                }
                ConfigurationPropertyName key = keyOf(source, entry);
                key = key != null ? key : keyOf(source, list);
                if (key != null) {
                    ConfigurationProperty property = source.getConfigurationProperty(key);
                    Object underlying = source.getUnderlyingSource();
                    String sourceName = underlying instanceof PropertySource<?> ps ? ps.getName() : String.valueOf(underlying);
                    String where = property == null || property.getOrigin() == null ? key.toString()
                            : key + " from " + property.getOrigin();
                    return new ConfigProblemReport.ListReplacement(list.toString(), entry.toString(), sourceName, where,
                            lost);
                }
            }
        }
        return null;
    }

    /** A key of {@code source} that is {@code name} or under it; null when the source has none (or cannot list its keys). */
    private static @Nullable ConfigurationPropertyName keyOf(ConfigurationPropertySource source,
            ConfigurationPropertyName name) {
        if (source.getConfigurationProperty(name) != null) {
            return name;
        }
        if (!(source instanceof IterableConfigurationPropertySource iterable)) {
            return null;
        }
        return iterable.stream().filter(name::isAncestorOf).sorted().findFirst().orElse(null);
    }

    /**
     * Where the value of {@code path} was set, as Spring Boot's own reports name it; for a method entry's
     * {@code name[j]}, where its service or method was set; for a problem inside a service-config file
     * ({@code classpath:sc.json $.methodConfig[0]...}), the property that names the file and where that was
     * set. Null when unknown.
     */
    private @Nullable String origin(String path) {
        int json = path.indexOf(" $");
        if (json > 0) {
            return fileProperty(path.substring(0, json));
        }
        String origin = propertyOrigin(path);
        if (origin == null && path.matches(".*\\.name\\[\\d+]")) {
            origin = propertyOrigin(path + ".service");
            origin = origin != null ? origin : propertyOrigin(path + ".method");
        }
        return origin;
    }

    /** The value of the property {@code path} as written in the property source that wins; null when it has none. */
    private @Nullable String written(String path) {
        ConfigurationPropertyName name = ConfigurationPropertyName.adapt(path, '.');
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty property = source.getConfigurationProperty(name);
            if (property != null) {
                Object value = property.getValue();
                return value instanceof CharSequence || value instanceof Number || value instanceof Boolean
                        ? value.toString() : null;
            }
        }
        return null;
    }

    private @Nullable String propertyOrigin(String path) {
        ConfigurationPropertyName name = ConfigurationPropertyName.adapt(path, '.');
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty property = source.getConfigurationProperty(name);
            if (property != null && property.getOrigin() != null) {
                return property.getOrigin().toString();
            }
        }
        return null;
    }

    /** {@code <property> = <value>} (and its origin) of the {@code service-config-file} property that names {@code file}. */
    private @Nullable String fileProperty(String file) {
        ConfigurationPropertyName clients = ConfigurationPropertyName.of("grpc.retry.clients");
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            for (ConfigurationPropertyName name : (Iterable<ConfigurationPropertyName>) iterable.stream()::iterator) {
                if (!clients.isAncestorOf(name) || !name.getLastElement(ConfigurationPropertyName.Form.UNIFORM)
                        .equals("serviceconfigfile")) {
                    continue;
                }
                ConfigurationProperty property = iterable.getConfigurationProperty(name);
                Object value = property == null ? null : property.getValue();
                String bare = value == null ? "" : value.toString().trim().replaceFirst("^(classpath\\*?:|file:)", "")
                        .replaceFirst("^/+", "");
                if (!bare.isEmpty() && file.endsWith(bare)) {
                    return "set by " + name + " = " + value
                            + (property.getOrigin() == null ? "" : " (" + property.getOrigin() + ")");
                }
            }
        }
        return null;
    }
}
