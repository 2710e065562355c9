package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.BackgroundWarmUp;
import java.util.List;
import org.springframework.boot.autoconfigure.preinitialize.BackgroundPreinitializer;

/**
 * The starter's {@link BackgroundWarmUp}, run by Spring Boot's background pre-initialisation (its thread, its
 * rules: once per JVM, not with one processor, not with {@code spring.backgroundpreinitializer.ignore=true}; the
 * application's ready or failed event waits for it).
 */
final class GrpcRetryBackgroundPreinitializer implements BackgroundPreinitializer {

    @Override
    public void preinitialize() throws Exception {
        BackgroundWarmUp.link(GrpcRetryAutoConfiguration.class);
        BackgroundWarmUp.run((properties, environment, beans) -> GrpcRetryAutoConfiguration.Client.resolve(properties,
                new BootChannelProperties(null), List.of(), environment, beans));
    }
}
