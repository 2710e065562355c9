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
 * lists it: public top-level types outside {@code internal} packages, all of them user API (the
 * integration packages for the Boot lines, {@code io.github.grpcretry.spring..}, are retry-spring's). A new public type fails here until the
 * bound and docs/api.md say why.
 */
class PublicApiSizeTest {

    static final int API_TYPES = 46;

    /** The public top-level types outside {@code internal} packages of the classes under {@code packageName}. */
    static List<String> publicTypes(String packageName) {
        return new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(packageName).stream()
                .filter(JavaClass::isTopLevelClass)
                .filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                .map(JavaClass::getName)
                .filter(n -> !n.contains(".internal.") && !n.endsWith(".package-info"))
                .sorted().toList();
    }

    @Test
    void theUserApiKeepsItsDocumentedSizeAndNoIntegrationType() {
        List<String> publicTypes = publicTypes("io.github.grpcretry");
        assertThat(publicTypes).as("public API types (docs/api.md)").hasSize(API_TYPES)
                .noneMatch(n -> n.startsWith("io.github.grpcretry.spring."));
    }
}
