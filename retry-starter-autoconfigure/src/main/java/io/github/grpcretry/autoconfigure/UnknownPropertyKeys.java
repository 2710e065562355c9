package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.autoconfigure.deadline.GrpcRetryDeadlineProperties;
import io.github.grpcretry.integration.UnknownProperties;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

/** The keys this starter checks at start-up ({@link UnknownProperties}): everything under {@code grpc.retry}. */
final class UnknownPropertyKeys {

    static final UnknownProperties CHECK = UnknownProperties.builder()
            .scope("grpc.retry", GrpcRetryProperties.class)
            .scope(GrpcRetryDeadlineProperties.PREFIX, GrpcRetryDeadlineProperties.class)
            .build();

    private UnknownPropertyKeys() {
    }

    /** Every key in a checked scope that the environment's property sources hold, highest precedence first. */
    static List<UnknownProperties.Key> keys(Environment environment) {
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
                if (CHECK.inScope(elements)) {
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
