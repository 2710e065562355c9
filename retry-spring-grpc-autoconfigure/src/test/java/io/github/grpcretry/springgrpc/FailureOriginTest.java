package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.testing.PackagedMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * What a user sees when a value in their application.yml is wrong: Spring Boot's start-up report names
 * the property, the value, the file and line it was set on, the rule and the fix.
 */
@ExtendWith(OutputCaptureExtension.class)
class FailureOriginTest {

    @Test
    void theReportNamesTheFileAndLineOfTheBadValue(CapturedOutput output) {
        assertThatThrownBy(() -> GrpcClientContext.start("spring.config.location=classpath:/origin/application.yml")
                .close()).isNotNull();
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START",
                "Property: grpc.retry.clients.inventory.service-config.method[0].retry.max-attempts",
                "Origin:   class path resource [origin/application.yml] - 9:",
                "Reason:   max-attempts of a retry policy must be >= 2");
    }

    @Test
    void anUnknownStatusCodeIsReportedWithItsLineAndTheValidNames(CapturedOutput output) {
        assertThatThrownBy(() -> GrpcClientContext.start("spring.config.location=classpath:/origin/bad-status-code.yml").close()).isNotNull();
        assertThat(output.getOut() + output.getErr()).contains(PackagedMetadata.unknownStatusCodeReport());
    }
}
