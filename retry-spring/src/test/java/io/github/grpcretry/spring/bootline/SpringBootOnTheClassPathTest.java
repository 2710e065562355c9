package io.github.grpcretry.spring.bootline;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;

/**
 * The Spring Boot these tests run on is the one the build says (3.5.7 in retry-spring, 4.1.2 in
 * retry-spring-boot4-test): a dependency-management mix-up cannot pass unseen as "tested on both lines".
 */
class SpringBootOnTheClassPathTest {

    @Test
    void theTestsRunOnTheSpringBootTheBuildNames() {
        String expected = System.getProperty("grpcretry.expected-spring-boot");
        assertThat(expected).as("system property grpcretry.expected-spring-boot (set by the module's surefire)").isNotBlank();
        assertThat(SpringBootVersion.getVersion()).isEqualTo(expected);
    }
}
