package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.testing.PackagedMetadata;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * What a user sees when a value in their application.yml is wrong: Spring Boot's start-up report names
 * the property, the value, the file and line it was set on, the rule and the fix, for every bad value.
 */
@ExtendWith(OutputCaptureExtension.class)
class FailureOriginTest {

    @SpringBootConfiguration
    @ImportAutoConfiguration({GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class})
    static class App {
    }

    private static ConfigurableApplicationContext start(String yml) {
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("spring.config.location=classpath:/origin/" + yml, "spring.main.banner-mode=off").run();
    }

    @Test
    void theReportNamesTheFileAndLineOfEachBadValue(CapturedOutput output) {
        assertThatThrownBy(() -> start("application.yml").close()).isNotNull();
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START",
                "Property: grpc.retry.clients.inventory.service-config.method[0].retry.max-attempts",
                "Origin:   class path resource [origin/application.yml] - 9:",
                "Reason:   max-attempts of a retry policy must be >= 2");
    }

    @Test
    void anUnknownStatusCodeIsReportedWithItsLineAndTheValidNames(CapturedOutput output) {
        assertThatThrownBy(() -> start("bad-status-code.yml").close()).isNotNull();
        assertThat(output.getOut() + output.getErr()).contains(PackagedMetadata.unknownStatusCodeReport());
    }
}
