package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.github.grpcretry.testing.RepositoryDocs;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
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
    void everyPropertyOfTheGeneratedMetadataIsDocumented() throws Exception {
        List<String> names = new ArrayList<>();
        try (Reader r = new InputStreamReader(getClass().getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json"), StandardCharsets.UTF_8)) {
            for (JsonElement e : JsonParser.parseReader(r).getAsJsonObject().getAsJsonArray("properties")) {
                names.add(e.getAsJsonObject().get("name").getAsString());
            }
        }
        assertThat(names).as("properties in the metadata").hasSizeGreaterThan(30);
        assertThat(docs.undocumented(names)).as("properties no docs/*.md mentions").isEmpty();
    }
}
