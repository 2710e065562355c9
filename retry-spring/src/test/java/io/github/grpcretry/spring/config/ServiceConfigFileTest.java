package io.github.grpcretry.spring.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.config.RetryConfigResolver.ServiceConfigFile;
import io.github.grpcretry.config.RetryConfigResolver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ServiceConfigFileTest {

    @Test
    void aFileIsReadAsUtf8() {
        ServiceConfigFile file = ServiceConfigFile.read("classpath:sc.json", true,
                () -> new ByteArrayInputStream("{\"methodConfig\":[]} é".getBytes(StandardCharsets.UTF_8)));
        assertThat(file.text()).isEqualTo("{\"methodConfig\":[]} é");
        assertThat(file.problem()).isNull();
    }

    @Test
    void aMissingOrFailingFileSaysWhyAndWhatToDo() {
        ServiceConfigFile missing = ServiceConfigFile.read("file:/nope.json", false, () -> {
            throw new AssertionError("a missing file is not opened");
        });
        assertThat(missing.text()).isNull();
        assertThat(missing.problem()).isEqualTo("the service config file does not exist");
        assertThat(missing.fix()).contains("classpath:service-config.json");

        ServiceConfigFile failing = ServiceConfigFile.read("file:/locked.json", true, () -> {
            throw new IOException("Permission denied");
        });
        assertThat(failing.name()).isEqualTo("file:/locked.json");
        assertThat(failing.problem()).isEqualTo("the service config file cannot be read: Permission denied");
        assertThat(failing.fix()).isEqualTo("make the file readable by the application");
    }
}
