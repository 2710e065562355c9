package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.BackgroundWarmUp;
import io.github.grpcretry.spring.testing.BackgroundWarmUpContract;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/** The start-up warm-up on Spring Boot 3.5: {@link BackgroundWarmUpListener}, registered as a listener. */
class BackgroundWarmUpTest extends BackgroundWarmUpContract {

    /**
     * The line's own warm-up as the listener's thread runs it: it completes. The thread drops what it throws (at
     * DEBUG), and the contract's cases run {@link BackgroundWarmUp} with a resolution of their own, so a failure of
     * the listener's code would otherwise go unseen.
     */
    @Test
    void theLinesWarmUpCompletes() {
        assertThatCode(BackgroundWarmUpListener::warmUp).doesNotThrowAnyException();
    }

    @Override
    protected Class<?> autoConfiguration() {
        return GrpcRetryAutoConfiguration.class;
    }

    @Override
    protected Class<?> channelHook() {
        return GrpcRetryChannelConfigurer.class;
    }

    @Override
    protected BackgroundWarmUp.Resolution resolution(AtomicReference<ChannelRetryConfigs> resolved) {
        return (properties, environment, beans) ->
                resolved.set(GrpcRetryAutoConfiguration.Client.resolve(properties, List.of(), environment, beans));
    }

    @Override
    protected ChannelRetryConfigs startedWith(String... properties) {
        SpringApplication application = new SpringApplication(App.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThat(application.getListeners()).hasAtLeastOneElementOfType(BackgroundWarmUpListener.class);
        try (ConfigurableApplicationContext context = application.run(arguments(properties))) {
            return context.getBean(ChannelRetryConfigs.class);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class})
    static class App {
    }
}
