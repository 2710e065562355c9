package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.GrpcRetryProperties;
import io.github.grpcretry.spring.GrpcRetryClientProperties;
import io.github.grpcretry.testing.PackagedMetadata;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.convert.ApplicationConversionService;

/**
 * IDE completion on the Spring Boot 4.1 line, read from the metadata this jar ships: every key described
 * with the code's default, nothing hand-written under a channel, and the status codes bound as an enum
 * under every channel and every method entry.
 */
class ConfigurationMetadataTest {

    private final PackagedMetadata metadata = PackagedMetadata.load(getClass().getClassLoader());

    @Test
    void keysAreDescribedGeneratedAndTypedDownToTheStatusCodes() {
        metadata.assertCompletionContract(GrpcRetryClientProperties.class);
    }

    @Test
    void everyDefaultOfTheCodeIsInTheMetadata() {
        metadata.assertDefaultsMatch(
                Map.of("grpc.retry", new Binder(new MapConfigurationPropertySource()).bindOrCreate("grpc.retry",
                        GrpcRetryProperties.class)),
                (value, type) -> ApplicationConversionService.getSharedInstance().convert(value, type));
    }
}
