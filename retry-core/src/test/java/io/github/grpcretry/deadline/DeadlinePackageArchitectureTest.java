package io.github.grpcretry.deadline;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The deadline package is plain Java on grpc-java (and optional Micrometer): no Spring. */
class DeadlinePackageArchitectureTest {

    @Test
    void deadlinePackageDoesNotDependOnSpring() {
        JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.github.grpcretry.deadline");
        noClasses().that().resideInAPackage("io.github.grpcretry.deadline..")
                .should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "net.devh..",
                        "io.github.grpcretry.autoconfigure..")
                .check(classes);
    }
}
