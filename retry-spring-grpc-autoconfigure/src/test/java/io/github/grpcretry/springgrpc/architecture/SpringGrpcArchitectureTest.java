package io.github.grpcretry.springgrpc.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.github.grpcretry.architecture.ArchitectureRules;
import org.junit.jupiter.api.Test;

/** The Spring Boot 4.1 auto-configuration uses retry-core's API and integration packages only, and has no package cycle. */
class SpringGrpcArchitectureTest {

    private final JavaClasses classes = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.github.grpcretry.springgrpc");

    @Test
    void usesOnlyApiAndIntegrationPackages() {
        ArchitectureRules.AUTOCONFIGURE_USES_NO_INTERNALS.check(classes);
    }

    @Test
    void importsNoInternalPackageOfAnotherModule() {
        ArchitectureRules.NO_OTHER_MODULES_INTERNALS.check(classes);
    }

    @Test
    void hasNoPackageCycles() {
        ArchitectureRules.NO_PACKAGE_CYCLES.check(classes);
    }

    /** The start-up warm-up initialises classes of retry-core, retry-spring and this module beside the main thread. */
    @Test
    void theStartersClassesHaveNoCycleOfStaticInitializers() {
        ArchitectureRules.NO_STATIC_INITIALIZER_CYCLES.check(ArchitectureRules.everyModulesMainClasses());
    }
}
