package io.github.grpcretry.spring;

import io.github.grpcretry.integration.UnknownProperties;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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
