package io.github.grpcretry.springgrpc;

import io.github.grpcretry.integration.UnknownProperties;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.grpc.client.autoconfigure.ServiceConfig;
import org.springframework.core.env.Environment;

/**
 * The keys this starter checks at start-up ({@link UnknownProperties}): everything under
 * {@code grpc.retry}, and the retry, hedging and retrythrottling parts of Spring Boot's
 * {@code spring.grpc.client.channel.<name>.service-config} that the starter takes over (checked against
 * Boot's own types; the rest of Boot's tree is Boot's).
 */
final class UnknownPropertyKeys {

    static final UnknownProperties CHECK = UnknownProperties.builder()
            .scope("grpc.retry", GrpcRetryProperties.class)
            .scope(BootChannelProperties.PREFIX + "*.service-config.method[*].retry", ServiceConfig.MethodConfig.RetryPolicy.class)
            .scope(BootChannelProperties.PREFIX + "*.service-config.method[*].hedging", ServiceConfig.MethodConfig.HedgingPolicy.class)
            .scope(BootChannelProperties.PREFIX + "*.service-config.retrythrottling", ServiceConfig.RetryThrottlingPolicy.class)
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
