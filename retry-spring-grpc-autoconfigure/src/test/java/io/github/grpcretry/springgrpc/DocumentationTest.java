package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.GrpcRetryClientProperties;
import io.github.grpcretry.testing.PackagedMetadata;
import io.github.grpcretry.testing.RepositoryDocs;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every property of the Spring Boot 4.1 line's generated metadata is documented in docs/. */
class DocumentationTest {

    @Test
    void everyPropertyOfTheMetadataAndOfTheChannelTreeIsDocumented() {
        List<String> names = new ArrayList<>(PackagedMetadata.load(getClass().getClassLoader()).names());
        assertThat(names).as("properties in the metadata").hasSizeGreaterThan(10);
        List<String> channel = PackagedMetadata.channelKeys(GrpcRetryClientProperties.class);
        assertThat(channel).as("keys of a channel").hasSizeGreaterThan(20)
                .contains("grpc.retry.clients.GLOBAL.service-config.method[0].retry.retryable-status-codes");
        names.addAll(channel);
        assertThat(RepositoryDocs.find().undocumented(names)).as("properties no docs/*.md mentions").isEmpty();
    }
}
