package io.github.grpcretry.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** retry-core is plain Java on grpc-java: Spring lives only in the auto-configuration modules. */
@AnalyzeClasses(packages = "io.github.grpcretry", importOptions = ImportOption.DoNotIncludeTests.class)
class SpringFreeCoreArchitectureTest {

    @ArchTest
    static final ArchRule retryCoreDoesNotUseSpring = noClasses()
            .that().resideInAPackage("io.github.grpcretry..")
            .should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "net.devh..")
            .because("the engine and limiter packages must not import Spring (CONTRACT.md §1)");
}
