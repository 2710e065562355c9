package io.github.grpcretry.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The size of retry-core's public surface, as docs/api.md ("Counting") states it and {@code .ci/public-types}
 * lists it: public top-level types outside {@code internal} packages, the user API apart from the
 * {@code integration} package (for the auto-configuration modules only). A new public type fails here until
 * the bound and docs/api.md say why.
 */
class PublicApiSizeTest {

    static final int API_TYPES = 43;
    static final int INTEGRATION_TYPES = 15;

    @Test
    void theUserApiAndTheIntegrationPackageKeepTheirDocumentedSize() {
        List<String> publicTypes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.github.grpcretry").stream()
                .filter(JavaClass::isTopLevelClass)
                .filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                .map(JavaClass::getName)
                .filter(n -> !n.contains(".internal.") && !n.endsWith(".package-info"))
                .sorted().toList();
        List<String> integration = publicTypes.stream().filter(n -> n.startsWith("io.github.grpcretry.integration.")).toList();
        List<String> api = publicTypes.stream().filter(n -> !integration.contains(n)).toList();
        assertThat(api).as("public API types (docs/api.md)").hasSize(API_TYPES);
        assertThat(integration).as("public integration types (docs/api.md)").hasSize(INTEGRATION_TYPES);
    }
}
