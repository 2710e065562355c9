package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.deadline.DeadlineServerInterceptor;
import io.github.grpcretry.guard.GuardServerInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@link GrpcRetryAutoConfiguration} in an ApplicationContextRunner. */
class GrpcRetryServerAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class));

    @Test
    void enabledRegistersTheGuardAndTheDeadlineInterceptors() {
        runner.run(context -> assertThat(context).hasSingleBean(GuardServerInterceptor.class)
                .hasSingleBean(DeadlineServerInterceptor.class));
    }

    @Test
    void guardSwitchedOffLeavesTheDeadlineInterceptor() {
        runner.withPropertyValues("grpc.retry.guard.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(GuardServerInterceptor.class).hasSingleBean(DeadlineServerInterceptor.class));
    }

    @Test
    void disabledRegistersNothing() {
        runner.withPropertyValues("grpc.retry.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(GuardServerInterceptor.class).doesNotHaveBean(DeadlineServerInterceptor.class));
    }

    @Test
    void withoutSpringGrpcServerNothingIsRegistered() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.grpc.server",
                "org.springframework.boot.grpc.server")).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(GuardServerInterceptor.class)
                            .doesNotHaveBean(DeadlineServerInterceptor.class);
                });
    }
}
