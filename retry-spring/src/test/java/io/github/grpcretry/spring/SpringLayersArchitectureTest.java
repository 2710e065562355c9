package io.github.grpcretry.spring;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.github.grpcretry.architecture.ArchitectureRules;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * retry-spring's packages and the direction of their imports, as docs/api.md lists them: {@code spring}
 * (the configurations both lines import) on top, then {@code report}, then {@code reload}, then
 * {@code channel} and {@code config}; {@code metrics}, {@code web} and {@code bootline} stand apart. Every
 * import points down, no package cycle, the public types of the sub-packages keep the size docs/api.md
 * states, and none of them exposes an internal type of retry-core.
 */
class SpringLayersArchitectureTest {

    static final int SUBPACKAGE_TYPES = 15;

    private static final String ROOT = "io.github.grpcretry.spring";

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            // main classes only: a directory here, retry-spring's jar where the Boot 4.1 module runs these tests
            // from the test-jar (whose own classes are not main code)
            .withImportOption(location -> !location.contains("-tests.jar"))
            .importPackages(ROOT);

    static final ArchRule LAYERS = layeredArchitecture().consideringOnlyDependenciesInLayers()
            .layer("Spring").definedBy(ROOT)
            .layer("Report").definedBy(ROOT + ".report")
            .layer("Reload").definedBy(ROOT + ".reload")
            .layer("Channel").definedBy(ROOT + ".channel")
            .layer("Config").definedBy(ROOT + ".config")
            .layer("Metrics").definedBy(ROOT + ".metrics")
            .layer("Web").definedBy(ROOT + ".web")
            .layer("BootLine").definedBy(ROOT + ".bootline")
            .whereLayer("Spring").mayNotBeAccessedByAnyLayer()
            .whereLayer("Report").mayOnlyBeAccessedByLayers("Spring")
            .whereLayer("Reload").mayOnlyBeAccessedByLayers("Report", "Spring")
            .whereLayer("Channel").mayOnlyBeAccessedByLayers("Reload", "Report", "Spring")
            .whereLayer("Config").mayOnlyBeAccessedByLayers("Reload", "Report", "Spring")
            .whereLayer("Metrics").mayOnlyBeAccessedByLayers("Spring")
            .whereLayer("Web").mayOnlyBeAccessedByLayers("Spring")
            .whereLayer("BootLine").mayOnlyBeAccessedByLayers("Spring")
            .because("each package of retry-spring builds on the ones below it (docs/api.md)");

    @Test
    void everyImportPointsDown() {
        assertThat(MAIN.stream().map(JavaClass::getPackageName).distinct().sorted().toList())
                .as("retry-spring's packages: a new one needs its place in the layers")
                .containsExactly(ROOT, ROOT + ".bootline", ROOT + ".channel", ROOT + ".config", ROOT + ".metrics",
                        ROOT + ".reload", ROOT + ".report", ROOT + ".web");
        LAYERS.check(MAIN);
    }

    @Test
    void theLayerRuleFailsOnAnImportPointingUp() {
        // channel.ChannelSetup used by a class of config: config may use retry-core only.
        JavaClasses bad = new ClassFileImporter().importClasses(io.github.grpcretry.spring.channel.ChannelSetup.class,
                io.github.grpcretry.spring.report.RetryReport.class, io.github.grpcretry.spring.reload.ReloadableChannels.class);
        assertThatThrownBy(() -> layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("Report").definedBy(ROOT + ".report")
                .layer("Channel").definedBy(ROOT + ".channel")
                .layer("Reload").definedBy(ROOT + ".reload")
                .whereLayer("Report").mayNotBeAccessedByAnyLayer()
                .whereLayer("Channel").mayNotBeAccessedByAnyLayer()
                .check(bad)).isInstanceOf(AssertionError.class).hasMessageContaining("ChannelSetup");
    }

    @Test
    void noPackageCycle() {
        ArchitectureRules.NO_PACKAGE_CYCLES.check(MAIN);
    }

    @Test
    void importsNoInternalPackageOfRetryCore() {
        ArchitectureRules.NO_OTHER_MODULES_INTERNALS.check(MAIN);
    }

    @Test
    void theSubPackagesKeepTheirDocumentedSizeAndExposeNoInternalType() {
        List<String> publicTypes = MAIN.stream()
                .filter(c -> c.getPackageName().startsWith(ROOT + "."))
                .filter(JavaClass::isTopLevelClass)
                .filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                .map(JavaClass::getName)
                .filter(n -> !n.endsWith(".package-info"))
                .sorted().toList();
        assertThat(publicTypes).as("public types of retry-spring's sub-packages (docs/api.md)").hasSize(SUBPACKAGE_TYPES);
        ArchitectureRules.API_EXPOSES_NO_INTERNALS.check(MAIN.that(DescribedPredicate.describe("in a sub-package",
                c -> c.getPackageName().startsWith(ROOT + "."))));
    }
}
