package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.testing.RepositoryDocs;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.ObjectMapper;

/** Every property of the Spring Boot 4.1 line's generated metadata is documented in docs/. */
class DocumentationTest {

    @Test
    void everyPropertyOfTheGeneratedMetadataIsDocumented() throws Exception {
        List<String> names = new ArrayList<>();
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            new ObjectMapper().readTree(in).path("properties").forEach(p -> names.add(p.path("name").asString()));
        }
        assertThat(names).as("properties in the metadata").hasSizeGreaterThan(30);
        assertThat(RepositoryDocs.find().undocumented(names)).as("properties no docs/*.md mentions").isEmpty();
    }
}
