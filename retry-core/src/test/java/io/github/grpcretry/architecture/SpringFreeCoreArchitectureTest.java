package io.github.grpcretry.architecture;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * retry-core's main classes: plain Java on grpc-java (Spring, servlets and Spring Boot lines live only in
 * retry-spring and the auto-configuration modules), no cycle between its packages, and no internal type in a public signature outside
 * {@code internal}. The rules are in {@link ArchitectureRules}.
 */
@AnalyzeClasses(packages = "io.github.grpcretry", importOptions = ImportOption.DoNotIncludeTests.class)
class SpringFreeCoreArchitectureTest {

    @ArchTest
    static final ArchRule retryCoreDoesNotUseSpring = ArchitectureRules.CORE_IS_SPRING_FREE;

    @ArchTest
    static final ArchRule retryCoreKnowsNoServletNorBootLine = ArchitectureRules.CORE_KNOWS_NO_SERVLET_NOR_BOOT_LINE;

    @ArchTest
    static final ArchRule noPackageCycles = ArchitectureRules.NO_PACKAGE_CYCLES;

    @ArchTest
    static final ArchRule apiExposesNoInternals = ArchitectureRules.API_EXPOSES_NO_INTERNALS;

    @ArchTest
    static final ArchRule usesNoOtherModulesInternals = ArchitectureRules.NO_OTHER_MODULES_INTERNALS;

    @ArchTest
    static final ArchRule noStaticInitializerCycles = ArchitectureRules.NO_STATIC_INITIALIZER_CYCLES;
}
