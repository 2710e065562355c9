package io.github.grpcretry.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The model, limiter and engine code is plain Java on grpc-java: Spring lives only in autoconfigure. */
@AnalyzeClasses(packages = "io.github.grpcretry", importOptions = ImportOption.DoNotIncludeTests.class)
class SpringFreeCoreArchitectureTest {

    @ArchTest
    static final ArchRule onlyAutoconfigureUsesSpring = noClasses()
            .that().resideInAPackage("io.github.grpcretry..")
            .and().resideOutsideOfPackage("io.github.grpcretry.autoconfigure..")
            .should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "net.devh..")
            .because("the engine and limiter packages must not import Spring (CONTRACT.md §1)");
}
