package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.autoconfigure.deadline.GrpcRetryDeadlineProperties;
import io.github.grpcretry.testing.PackagedMetadata;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.convert.ApplicationConversionService;

/**
 * IDE completion on the Spring Boot 3.5 line, read from the metadata this jar ships: every key described
 * with the code's default, nothing hand-written under a channel, and the status codes bound as an enum
 * under every channel and every method entry.
 */
class RetryConfigurationMetadataTest {

    private final PackagedMetadata metadata = PackagedMetadata.load(getClass().getClassLoader());

    @Test
    void everyKeyIsDescribedAndNoneIsAHandWrittenIndexedName() {
        metadata.assertEveryKeyDescribedAndNoneHandWritten();
        assertThat(metadata.names()).contains("grpc.retry.enabled", "grpc.retry.engine", "grpc.retry.clients",
                "grpc.retry.guard.enabled", "grpc.retry.health.status-when-throttled", "grpc.retry.observation.enabled",
                "grpc.retry.deadline.default-timeout", "grpc.retry.deadline.reserve", "grpc.retry.deadline.min-remaining",
                "grpc.retry.deadline.http.header", "grpc.retry.deadline.http.max");
    }

    @Test
    void everyDefaultOfTheCodeIsInTheMetadata() {
        Binder empty = new Binder(new MapConfigurationPropertySource());
        metadata.assertDefaultsMatch(Map.of(
                        "grpc.retry", empty.bindOrCreate("grpc.retry", GrpcRetryProperties.class),
                        "grpc.retry.deadline", empty.bindOrCreate("grpc.retry.deadline", GrpcRetryDeadlineProperties.class)),
                (value, type) -> ApplicationConversionService.getSharedInstance().convert(value, type));
        assertThat(metadata.property("grpc.retry.engine").get("defaultValue").getAsString()).isEqualTo("interceptor");
    }

    @Test
    void statusCodesAreAnEnumUnderEveryChannelAndMethodEntry() {
        assertThat(metadata.assertChannelTreeIsTyped(GrpcRetryProperties.ClientProperties.class)).containsExactlyInAnyOrder(
                "serviceConfig.method.retry.retryableStatusCodes", "serviceConfig.method.hedging.nonFatalStatusCodes");
        assertThat(metadata.hints()).containsKeys("grpc.retry.engine", "grpc.retry.clients.keys",
                "grpc.retry.health.status-when-throttled");
        assertThat(metadata.hints().get("grpc.retry.clients.keys").toString()).contains("GLOBAL");
    }
}
