package io.github.grpcretry.autoconfigure.guard;

import io.github.grpcretry.autoconfigure.GuardChannelConfigurer;
import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.guard.GuardServerInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The conditions of {@link GrpcRetryAutoConfiguration}, alone in an ApplicationContextRunner. */
class GrpcRetryGuardConditionsTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class));

    @Test
    void enabledRegistersTheServerAndChannelGuards() {
        runner.run(context -> assertThat(context).hasSingleBean(GuardServerInterceptor.class)
                .hasSingleBean(GuardChannelConfigurer.class));
    }

    @Test
    void disabledOrGuardOffRegistersNeither() {
        runner.withPropertyValues("grpc.retry.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(GuardServerInterceptor.class).doesNotHaveBean(GuardChannelConfigurer.class));
        runner.withPropertyValues("grpc.retry.guard.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(GuardServerInterceptor.class).doesNotHaveBean(GuardChannelConfigurer.class));
    }

    @Test
    void withoutNetDevhsServerOnlyTheChannelGuard() {
        runner.withClassLoader(new FilteredClassLoader("net.devh.boot.grpc.server")).run(context -> assertThat(context)
                .doesNotHaveBean(GuardServerInterceptor.class).hasSingleBean(GuardChannelConfigurer.class));
    }

    @Test
    void withoutNetDevhsClientOnlyTheServerGuard() {
        runner.withClassLoader(new FilteredClassLoader("net.devh.boot.grpc.client")).run(context -> assertThat(context)
                .hasSingleBean(GuardServerInterceptor.class).doesNotHaveBean(GuardChannelConfigurer.class));
    }
}
