package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.bootline.SpringBootLineCheck;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class SpringBootLineCheckTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SpringBootLineAutoConfiguration.class, SslAutoConfiguration.class,
                    GrpcClientAutoConfiguration.class));

    @Test
    void theRightLineStartsAndTheCheckRegistersNothing() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(SpringBootLineAutoConfiguration.class);
        });
    }

    @Test
    void onSpringBoot3TheReportNamesTheBoot3Starter() {
        // A Spring Boot 3 classpath: Spring Boot 4's core class is missing.
        runner.withClassLoader(new FilteredClassLoader(SpringBootLineCheck.BOOT4_CLASS)).run(context -> {
            assertThat(context).hasFailed();
            String report = FailureReports.report(context.getStartupFailure());
            assertThat(report)
                    .contains("runs on Spring Boot 3")
                    .contains("depend on io.github.grpcretry:retry-starter instead of io.github.grpcretry:retry-spring-grpc-starter");
        });
    }

    @Test
    void netDevhOnSpringBoot4IsNamedWithWhatToRemove() {
        Set<String> classes = Set.of(SpringBootLineCheck.BOOT4_CLASS, SpringBootLineCheck.NET_DEVH_CLIENT_CLASS);
        SpringBootLineCheck.Problem problem = SpringBootLineCheck.forBoot4Line(classes::contains);
        assertThat(problem).isNotNull();
        assertThat(problem.description()).contains("net.devh", "Spring Boot 3 library");
        assertThat(problem.action()).contains("Remove net.devh:grpc-client-spring-boot-starter",
                "keep io.github.grpcretry:retry-spring-grpc-starter");

        Set<String> serverOnly = Set.of(SpringBootLineCheck.BOOT4_CLASS, SpringBootLineCheck.NET_DEVH_SERVER_CLASS);
        assertThat(SpringBootLineCheck.forBoot4Line(serverOnly::contains)).isNotNull();
    }

    @Test
    void bothLinesStartersAreNamed() {
        Set<String> classes = Set.of(SpringBootLineCheck.BOOT4_CLASS, SpringBootLineCheck.BOOT3_LINE_CLASS);
        SpringBootLineCheck.Problem problem = SpringBootLineCheck.forBoot4Line(classes::contains);
        assertThat(problem).isNotNull();
        assertThat(problem.action()).contains("remove io.github.grpcretry:retry-starter");
    }

    @Test
    void theClasspathOfTheseTestsFits() {
        assertThat(SpringBootLineCheck.forBoot4Line(name -> SpringBootLineCheck.isPresent(name, getClass().getClassLoader())))
                .isNull();
    }
}
