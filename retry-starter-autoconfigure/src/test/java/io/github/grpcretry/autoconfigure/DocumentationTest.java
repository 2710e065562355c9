package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.GrpcRetryClientProperties;
import io.github.grpcretry.testing.PackagedMetadata;
import io.github.grpcretry.testing.RepositoryDocs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README stays short and every link in it and in docs/ resolves; every property of this line is documented. */
class DocumentationTest {

    private final RepositoryDocs docs = RepositoryDocs.find();

    @Test
    void theReadmeIsShortAndEveryLinkResolves() throws Exception {
        assertThat(Files.readAllLines(docs.readme())).as("README.md lines").hasSizeLessThanOrEqualTo(300);
        List<String> broken = new ArrayList<>();
        for (Path p : docs.markdownFiles()) {
            broken.addAll(docs.brokenLinks(p));
        }
        assertThat(broken).as("broken links").isEmpty();
    }

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
