package io.github.grpcretry.spring;

import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.spring.config.UnknownProperties;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * What the unknown-key check ({@link UnknownProperties}) reads from a Spring context, the same on both
 * lines: the scopes (every {@code @ConfigurationProperties} bean bound under a prefix) and the keys the
 * environment's property sources hold, in Spring Boot's uniform form, with their values and origins.
 */
public final class PropertyKeys {

    private PropertyKeys() {
    }

    /**
     * The start-up problems of the keys under {@value GrpcRetryProperties#PREFIX} (and under the line's own
     * scopes) that bind to nothing ({@link UnknownProperties#problems}). The keys are first checked against
     * {@link GrpcRetryProperties} alone; only when one of them binds to nothing there are the context's other
     * {@code @ConfigurationProperties} beans bound under the prefix looked up (an application's own
     * properties bean may claim it), so a valid configuration costs no pass over every bean definition.
     *
     * @param lineScopes adds the line's further checked scopes to a builder
     */
    public static List<ConfigProblem> unknownKeyProblems(Environment environment, ListableBeanFactory beans,
            UnaryOperator<UnknownProperties.Builder> lineScopes, boolean ignore, Consumer<String> warnings) {
        UnknownProperties check = lineScopes.apply(
                UnknownProperties.builder().scope(GrpcRetryProperties.PREFIX, GrpcRetryProperties.class)).build();
        List<UnknownProperties.Key> keys = keys(environment, check);
        if (check.check(keys).isEmpty()) {
            return List.of();
        }
        UnknownProperties.Builder scopes = UnknownProperties.builder();
        boundUnder(GrpcRetryProperties.PREFIX, beans, GrpcRetryProperties.class).forEach(scopes::scope);
        // the beans' scopes lie inside the prefix's, so the keys in scope are the same
        return lineScopes.apply(scopes).build().problems(keys, ignore, warnings);
    }

    /**
     * The prefix and type of every {@code @ConfigurationProperties} bean bound at or under {@code root},
     * outermost first ({@code root} itself always, as {@code rootType} when no bean is bound there).
     */
    public static Map<String, Class<?>> boundUnder(String root, ListableBeanFactory beans, Class<?> rootType) {
        Map<String, Class<?>> scopes = new TreeMap<>(Comparator.comparingInt(String::length).thenComparing(p -> p));
        scopes.put(root, rootType);
        for (String name : beans.getBeanDefinitionNames()) {
            ConfigurationProperties a = beans.findAnnotationOnBean(name, ConfigurationProperties.class, false);
            Class<?> type = beans.getType(name, false);
            String prefix = a == null ? "" : a.prefix().isEmpty() ? a.value() : a.prefix();
            if (type != null && (prefix.equals(root) || prefix.startsWith(root + "."))) {
                scopes.put(prefix, ClassUtils.getUserClass(type));
            }
        }
        return scopes;
    }

    /** Every key in a checked scope that the environment's property sources hold, highest precedence first. */
    public static List<UnknownProperties.Key> keys(Environment environment, UnknownProperties check) {
        List<UnknownProperties.Key> keys = new ArrayList<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            iterable.stream().forEach(name -> {
                if (name.isEmpty() || !check.mayBeInScope(name.getElement(0, ConfigurationPropertyName.Form.UNIFORM))) {
                    return;
                }
                List<String> elements = new ArrayList<>(name.getNumberOfElements());
                for (int i = 0; i < name.getNumberOfElements(); i++) {
                    String e = name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL);
                    elements.add(name.isNumericIndex(i) ? "[" + e + "]" : e);
                }
                if (check.inScope(elements)) {
                    ConfigurationProperty p = iterable.getConfigurationProperty(name);
                    keys.add(new UnknownProperties.Key(elements, name.toString(),
                            p == null || p.getValue() == null ? null : p.getValue().toString(),
                            p == null || p.getOrigin() == null ? null : p.getOrigin().toString()));
                }
            });
        }
        return keys;
    }
}
