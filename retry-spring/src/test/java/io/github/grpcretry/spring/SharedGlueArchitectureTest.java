package io.github.grpcretry.spring;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * retry-spring serves both Spring Boot lines: it names no Spring Boot type that moved or went away in
 * Spring Boot 4 (health, the metrics and health auto-configurations, {@code EnvironmentPostProcessor}'s
 * old package), and no line's own classes. Its {@code spring} package keeps the size docs/api.md states.
 */
class SharedGlueArchitectureTest {

    static final int SPRING_TYPES = 23;

    private static final JavaClasses GLUE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.github.grpcretry.spring");

    @Test
    void theGlueUsesNoSpringBootTypeThatMovedInBoot4() {
        noClasses().that().resideInAPackage("io.github.grpcretry.spring..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "org.springframework.boot.actuate.health..", "org.springframework.boot.health..",
                        "org.springframework.boot.actuate.autoconfigure..", "org.springframework.boot.env..",
                        "io.github.grpcretry.autoconfigure..", "io.github.grpcretry.springgrpc..",
                        "net.devh..", "org.springframework.grpc..")
                .because("retry-spring runs on Spring Boot 3.5 and 4.1 alike (docs/api.md)")
                .check(GLUE);
    }

    @Test
    void theSpringPackageKeepsItsDocumentedSize() {
        List<String> publicTypes = GLUE.stream()
                .filter(c -> c.getPackageName().equals("io.github.grpcretry.spring"))
                .filter(JavaClass::isTopLevelClass)
                .filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                .map(JavaClass::getName)
                .filter(n -> !n.endsWith(".package-info"))
                .sorted().toList();
        assertThat(publicTypes).as("public types of io.github.grpcretry.spring (docs/api.md)").hasSize(SPRING_TYPES);
    }
}
