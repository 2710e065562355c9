package io.github.grpcretry.sample;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.github.grpcretry.architecture.ArchitectureRules;
import org.junit.jupiter.api.Test;

/** The sample is what a user writes: it uses the starter's properties, beans and API packages, nothing else. */
class PublicApiOnlyTest {

    @Test
    void theSampleUsesOnlyThePublicApi() {
        JavaClasses sample = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                // what spring-boot:process-aot generated into the classes of an earlier build is not the sample's code
                .withImportOption(location -> !location.contains("__"))
                .importPackages("io.github.grpcretry.sample");
        ArchitectureRules.usesOnlyThePublicApi("io.github.grpcretry.sample..").check(sample);
    }
}
