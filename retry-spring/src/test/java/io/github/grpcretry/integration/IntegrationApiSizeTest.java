package io.github.grpcretry.integration;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.github.grpcretry.architecture.ArchitectureRules;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * retry-spring's public surface for the Boot lines, as docs/api.md ("Counting") states it: the public
 * top-level types of the {@code integration} package. A new public type fails here until the bound and
 * docs/api.md say why. The package also exposes no internal type of retry-core and uses no Spring Boot
 * type that moved in Boot 4 (it runs on both lines).
 */
class IntegrationApiSizeTest {

    static final int INTEGRATION_TYPES = 16;

    private static final com.tngtech.archunit.core.domain.JavaClasses GLUE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.github.grpcretry.integration");

    @Test
    void theIntegrationPackageKeepsItsDocumentedSize() {
        List<String> publicTypes = GLUE.stream()
                .filter(c -> c.getPackageName().equals("io.github.grpcretry.integration"))
                .filter(JavaClass::isTopLevelClass)
                .filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                .map(JavaClass::getName)
                .filter(n -> !n.endsWith(".package-info"))
                .sorted().toList();
        assertThat(publicTypes).as("public integration types (docs/api.md)").hasSize(INTEGRATION_TYPES);
    }

    @Test
    void theIntegrationPackageExposesNoInternalType() {
        ArchitectureRules.API_EXPOSES_NO_INTERNALS.check(GLUE.that(
                com.tngtech.archunit.base.DescribedPredicate.describe("in integration",
                        c -> c.getPackageName().startsWith("io.github.grpcretry.integration"))));
    }
}
