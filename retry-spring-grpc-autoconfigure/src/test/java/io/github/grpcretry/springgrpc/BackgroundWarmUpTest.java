package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.BackgroundWarmUp;
import io.github.grpcretry.spring.testing.BackgroundWarmUpContract;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.preinitialize.BackgroundPreinitializer;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** The start-up warm-up on Spring Boot 4.1: {@link GrpcRetryBackgroundPreinitializer}, one of Boot's own. */
class BackgroundWarmUpTest extends BackgroundWarmUpContract {

    /**
     * The line's own warm-up as Boot's {@code background-preinit} thread runs it: it completes. Boot drops what a
     * pre-initialiser throws, and the contract's cases run {@link BackgroundWarmUp} with a resolution of their own, so
     * a failure of this class's code (its resolution's arguments, say) would otherwise go unseen.
     */
    @Test
    void theLinesPreinitializerCompletes() {
        assertThatCode(() -> new GrpcRetryBackgroundPreinitializer().preinitialize()).doesNotThrowAnyException();
    }

    @Override
    protected Class<?> autoConfiguration() {
        return GrpcRetryAutoConfiguration.class;
    }

    @Override
    protected Class<?> channelHook() {
        return GrpcRetryChannelCustomizer.class;
    }

    @Override
    protected BackgroundWarmUp.Resolution resolution(AtomicReference<ChannelRetryConfigs> resolved) {
        return (properties, environment, beans) -> resolved.set(GrpcRetryAutoConfiguration.Client.resolve(properties,
                new BootChannelProperties(null), List.of(), environment, beans));
    }

    @Override
    protected ChannelRetryConfigs startedWith(String... properties) {
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(BackgroundPreinitializer.class))
                .hasAtLeastOneElementOfType(GrpcRetryBackgroundPreinitializer.class);
        try (GrpcClientContext client = GrpcClientContext.start(properties)) {
            return client.bean(ChannelRetryConfigs.class);
        }
    }
}
