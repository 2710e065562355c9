package io.github.grpcretry.autoconfigure.architecture;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import io.github.grpcretry.architecture.ArchitectureRules;
import io.github.grpcretry.autoconfigure.archfixture.UsesInternal;
import org.junit.jupiter.api.Test;

/**
 * The Spring Boot 3.5 auto-configuration uses retry-core's API and integration packages only, never an
 * {@code internal} one; and the rule itself fails on a class that does.
 */
@AnalyzeClasses(packages = "io.github.grpcretry.autoconfigure", importOptions = ImportOption.DoNotIncludeTests.class)
class AutoconfigureArchitectureTest {

    @ArchTest
    static final ArchRule usesOnlyApiAndIntegration = ArchitectureRules.AUTOCONFIGURE_USES_NO_INTERNALS;

    @ArchTest
    static final ArchRule usesNoOtherModulesInternals = ArchitectureRules.NO_OTHER_MODULES_INTERNALS;

    @ArchTest
    static final ArchRule noPackageCycles = ArchitectureRules.NO_PACKAGE_CYCLES;

    @Test
    void ruleFailsOnAClassThatUsesAnInternalPackage() {
        assertThatThrownBy(() -> ArchitectureRules.AUTOCONFIGURE_USES_NO_INTERNALS.check(
                new ClassFileImporter().importClasses(UsesInternal.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("UsesInternal")
                .hasMessageContaining("io.github.grpcretry.internal.pushback.Pushback");
    }

    /** The start-up warm-up initialises classes of retry-core, retry-spring and this module beside the main thread. */
    @Test
    void theStartersClassesHaveNoCycleOfStaticInitializers() {
        ArchitectureRules.NO_STATIC_INITIALIZER_CYCLES.check(ArchitectureRules.everyModulesMainClasses());
    }
}
