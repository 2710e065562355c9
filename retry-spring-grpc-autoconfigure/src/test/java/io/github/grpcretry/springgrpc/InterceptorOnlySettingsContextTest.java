package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.testing.Texts.occurrences;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * {@code retry-info}, {@code retry-info-max-delay} and {@code adaptive-hedging.*} on Spring Boot 4.1: bound under
 * every channel, inherited from GLOBAL field by field, validated with the property's path, and with
 * {@code engine: native} (which applies neither) one WARN each naming where they are set.
 */
@ExtendWith(OutputCaptureExtension.class)
class InterceptorOnlySettingsContextTest {

    private static final String RETRY_INFO_WARNING = "retry-info is ignored: grpc.retry.engine=native";
    private static final String ADAPTIVE_WARNING = "adaptive-hedging is ignored: grpc.retry.engine=native";

    @Test
    void theSettingsBindAndAreInheritedFromGlobal(CapturedOutput output) {
        try (GrpcClientContext client = GrpcClientContext.start(
                "grpc.retry.clients.GLOBAL.retry-info-max-delay=5s",
                "grpc.retry.clients.GLOBAL.adaptive-hedging.enabled=true",
                "grpc.retry.clients.GLOBAL.adaptive-hedging.max-extra-load=0.1",
                "grpc.retry.clients.svc.retry-info=false",
                "grpc.retry.clients.svc.adaptive-hedging.min-samples=20",
                "grpc.retry.clients.svc.adaptive-hedging.max-delay=2s",
                "grpc.retry.clients.svc.adaptive-hedging.window=10s")) {
            ChannelRetryConfigs configs = client.bean(ChannelRetryConfigs.class);
            ChannelRetryConfig svc = configs.forChannel("svc");
            assertThat(svc.retryInfo()).isFalse();
            assertThat(svc.retryInfoMaxDelay()).isEqualTo(Duration.ofSeconds(5));
            assertThat(svc.adaptiveHedging()).isEqualTo(new AdaptiveHedgingPolicy(0.1, Duration.ofMillis(1),
                    Duration.ofSeconds(2), 20, Duration.ofSeconds(10)));
            ChannelRetryConfig other = configs.forChannel("other");
            assertThat(other.retryInfo()).as("the default").isTrue();
            assertThat(other.adaptiveHedging()).isEqualTo(new AdaptiveHedgingPolicy(0.1, Duration.ofMillis(1), null,
                    100, Duration.ofSeconds(30)));
        }
        assertThat(output.getAll()).doesNotContain(RETRY_INFO_WARNING, ADAPTIVE_WARNING);
    }

    @Test
    void withoutSettingsRetryInfoIsOnAndAdaptiveHedgingOff() {
        try (GrpcClientContext client = GrpcClientContext.start()) {
            ChannelRetryConfig svc = client.bean(ChannelRetryConfigs.class).forChannel("svc");
            assertThat(svc.retryInfo()).isTrue();
            assertThat(svc.retryInfoMaxDelay()).isEqualTo(ChannelRetryConfig.DEFAULT_RETRY_INFO_MAX_DELAY);
            assertThat(svc.adaptiveHedging()).isNull();
        }
    }

    @Test
    void anInvalidValueStopsStartUpNamingItsPath(CapturedOutput output) {
        assertThatThrownBy(() -> GrpcClientContext.start("grpc.retry.clients.svc.retry-info-max-delay=0s",
                "grpc.retry.clients.svc.adaptive-hedging.enabled=true",
                "grpc.retry.clients.svc.adaptive-hedging.max-extra-load=0.6").close()).isNotNull();
        String console = output.getOut() + output.getErr();
        assertThat(console).contains("grpc.retry.clients.svc.retry-info-max-delay", "retry-info-max-delay must be > 0",
                "grpc.retry.clients.svc.adaptive-hedging.max-extra-load", "must be in (0, 0.5]");
    }

    @Test
    void theNativeEngineWarnsOnceForEachNamingTheProperties(CapturedOutput output) {
        try (GrpcClientContext client = GrpcClientContext.start("grpc.retry.engine=native",
                "grpc.retry.clients.GLOBAL.retry-info=false",
                "grpc.retry.clients.svc.retry-info-max-delay=3s",
                "grpc.retry.clients.svc.adaptive-hedging.enabled=true")) {
            assertThat(client.bean(ChannelRetryConfigs.class).forChannel("svc").retryInfoMaxDelay())
                    .isEqualTo(Duration.ofSeconds(3));
        }
        String all = output.getAll();
        assertThat(occurrences(all, RETRY_INFO_WARNING)).as(all).isEqualTo(1);
        assertThat(occurrences(all, ADAPTIVE_WARNING)).as(all).isEqualTo(1);
        assertThat(all).contains("grpc.retry.clients.GLOBAL.retry-info = false",
                "grpc.retry.clients.svc.retry-info-max-delay = 3s",
                "grpc.retry.clients.svc.adaptive-hedging.enabled = true");
    }

    @Test
    void theNativeEngineWithoutTheseSettingsDoesNotWarn(CapturedOutput output) {
        try (GrpcClientContext client = GrpcClientContext.start("grpc.retry.engine=native")) {
            assertThat(client.bean(ChannelRetryConfigs.class)).isNotNull();
        }
        assertThat(output.getAll()).doesNotContain(RETRY_INFO_WARNING, ADAPTIVE_WARNING);
    }
}
