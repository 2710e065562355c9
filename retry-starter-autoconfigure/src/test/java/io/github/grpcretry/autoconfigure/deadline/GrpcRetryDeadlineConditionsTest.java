package io.github.grpcretry.autoconfigure.deadline;

import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.deadline.DeadlineServerInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.task.TaskDecorator;

/** The conditions of {@link GrpcRetryAutoConfiguration}, alone in an ApplicationContextRunner. */
class GrpcRetryDeadlineConditionsTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class));

    @Test
    void ownTaskDecoratorBacksTheStartersOff() {
        TaskDecorator own = task -> task;
        runner.withBean("ownDecorator", TaskDecorator.class, () -> own).run(context -> {
            assertThat(context).getBean(TaskDecorator.class).isSameAs(own);
            assertThat(context).doesNotHaveBean(GrpcContextTaskDecorator.class);
        });
    }

    @Test
    void withoutNetDevhsServerNoServerInterceptor() {
        runner.withClassLoader(new FilteredClassLoader("net.devh.boot.grpc.server")).run(context -> assertThat(context)
                .hasNotFailed().doesNotHaveBean(DeadlineServerInterceptor.class)
                .hasSingleBean(GrpcContextTaskDecorator.class));
    }

    @Test
    void withoutContextPropagationNoAccessor() {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer.context")).run(context -> assertThat(context)
                .hasNotFailed().doesNotHaveBean("grpcContextThreadLocalAccessor"));
        runner.run(context -> assertThat(context).hasBean("grpcContextThreadLocalAccessor"));
    }
}
