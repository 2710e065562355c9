package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.bootline.SpringBootLineCheck;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.asm.ClassWriter;
import org.springframework.asm.Opcodes;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The Spring Boot 3.5 starter on Spring Boot 4 (or beside the 4.1 line's starter) stops start-up naming the right artifact. */
class SpringBootLineCheckTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SpringBootLineAutoConfiguration.class));

    /** A class loader that also has Spring Boot 4's core class (an empty interface of that name). */
    static final class WithBoot4Class extends ClassLoader {
        WithBoot4Class(ClassLoader parent) {
            super(parent);
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            if (!name.equals(SpringBootLineCheck.BOOT4_CLASS)) {
                throw new ClassNotFoundException(name);
            }
            ClassWriter w = new ClassWriter(0);
            w.visit(Opcodes.V17, Opcodes.ACC_PUBLIC | Opcodes.ACC_INTERFACE | Opcodes.ACC_ABSTRACT,
                    name.replace('.', '/'), null, "java/lang/Object", null);
            w.visitEnd();
            byte[] bytes = w.toByteArray();
            return defineClass(name, bytes, 0, bytes.length);
        }
    }

    @Test
    void onSpringBoot3TheCheckRegistersNothing() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(SpringBootLineAutoConfiguration.class);
        });
    }

    @Test
    void onSpringBoot4TheReportNamesTheSpringGrpcStarter() {
        runner.withClassLoader(new WithBoot4Class(getClass().getClassLoader())).run(context -> {
            assertThat(context).hasFailed();
            assertThat(RetryTestContexts.failureReport(context.getStartupFailure()))
                    .contains("runs on Spring Boot 4")
                    .contains("depend on io.github.grpcretry:retry-spring-grpc-starter instead of io.github.grpcretry:retry-starter");
        });
    }

    @Test
    void bothLinesStartersAreNamed() {
        SpringBootLineCheck.Problem problem = SpringBootLineCheck.forBoot3Line(Set.of(SpringBootLineCheck.BOOT4_LINE_CLASS)::contains);
        assertThat(problem).isNotNull();
        assertThat(problem.action()).contains("keep io.github.grpcretry:retry-starter",
                "remove io.github.grpcretry:retry-spring-grpc-starter");
    }
}
