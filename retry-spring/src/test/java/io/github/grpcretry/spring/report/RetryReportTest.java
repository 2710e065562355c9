package io.github.grpcretry.spring.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.config.RetryConfigResolver.ClientProperties;
import io.github.grpcretry.config.RetryConfigResolver.MethodProperties;
import io.github.grpcretry.config.RetryConfigResolver.RetryProperties;
import io.github.grpcretry.config.RetryConfigResolver.RetryThrottlingProperties;
import io.github.grpcretry.config.RetryConfigResolver.ServiceConfigProperties;
import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ConnectivityState;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What health and the endpoint show of a channel, from the configuration, the limiters and the counts. */
class RetryReportTest {

    static ChannelRetryConfigs configs() {
        RetryProperties retry = new RetryProperties(3, Duration.ofMillis(50), Duration.ofSeconds(1), 2.0,
                List.of("UNAVAILABLE"), null);
        ServiceConfigProperties sc = new ServiceConfigProperties(
                List.of(new MethodProperties(null, null, null, null, null, retry, null)),
                new RetryThrottlingProperties(10.0, 0.1));
        return RetryConfigResolver.create()
                .client("inventory", new ClientProperties(sc, null, null, null, null, null, null, null, null, null, null, null, null, null))
                .resolve();
    }

    @Test
    void interceptorEngineShowsThrottleAndEffectiveConfig() {
        ChannelRetryConfigs configs = configs();
        RetryLimiterRegistry limiters = new RetryLimiterRegistry();
        ChannelRetryConfig config = configs.forChannel("inventory");
        RetryThrottle throttle = limiters.throttle("inventory", config.serviceConfig().retryThrottling()).orElseThrow();
        for (int i = 0; i < 6; i++) {
            throttle.onQualifiedFailureThenCheckAllowed();
        }
        RetryReport report = new RetryReport(ChannelSetup.Engine.INTERCEPTOR, () -> configs, () -> limiters,
                RetryStatistics::new, () -> () -> Map.of("inventory", ConnectivityState.READY));

        assertThat(report.channels()).containsExactly("inventory");
        assertThat(report.isThrottling("inventory")).isTrue();
        Map<String, Object> health = report.health("inventory", report.connectivityStates());
        assertThat(health).containsEntry("engine", "interceptor").containsEntry("tokens", 4.0)
                .containsEntry("maxTokens", 10.0).containsEntry("throttling", true)
                .containsEntry("connectivityState", "READY");
        Map<String, Object> channel = report.channel("inventory", Map.of());
        assertThat(channel.get("config").toString()).contains("maxAttempts=3", "initialBackoff=50ms",
                "retryableStatusCodes=[UNAVAILABLE]", "tokenRatio=0.1");
        assertThat(channel.get("counts").toString()).contains("calls=0");
    }

    @Test
    void theNativeEngineSaysWhatItCannotObserve() {
        ChannelRetryConfigs configs = configs();
        RetryReport report = new RetryReport(ChannelSetup.Engine.NATIVE, () -> configs, RetryLimiterRegistry::new,
                () -> null, () -> null);
        Map<String, Object> health = report.health("inventory", Map.of());
        assertThat(health).containsEntry("engine", "native").containsEntry("tokens", RetryReport.NOT_OBSERVABLE_NATIVE)
                .containsEntry("maxTokens", 10.0);
        assertThat(report.isThrottling("inventory")).isFalse();
    }

    @Test
    void endpointAndHealthListChannelsAndNameThrottling() {
        ChannelRetryConfigs configs = configs();
        RetryLimiterRegistry limiters = new RetryLimiterRegistry();
        RetryThrottle throttle = limiters.throttle("inventory",
                configs.forChannel("inventory").serviceConfig().retryThrottling()).orElseThrow();
        RetryReport report = new RetryReport(ChannelSetup.Engine.INTERCEPTOR, () -> configs, () -> limiters,
                () -> null, () -> () -> Map.of("orders", ConnectivityState.IDLE));

        Map<String, Object> all = report.endpoint();
        assertThat(all.keySet()).containsExactly("engine", "channels");
        assertThat(all.get("engine")).isEqualTo("interceptor");
        assertThat(((Map<?, ?>) all.get("channels")).keySet().toString()).isEqualTo("[inventory, orders]");
        assertThat(report.endpoint("orders")).containsEntry("connectivityState", "IDLE");
        assertThat(report.endpoint("unknown")).isNull();
        assertThat(report.health().throttling()).isEmpty();

        for (int i = 0; i < 6; i++) {
            throttle.onQualifiedFailureThenCheckAllowed();
        }
        RetryReport.HealthDetails health = report.health();
        assertThat(health.throttling()).containsExactly("inventory");
        assertThat(health.channels().keySet()).containsExactly("inventory", "orders");
    }

    @Test
    void theStatusWhileThrottledIsUpperCaseAndUpWhenNotSet() {
        assertThat(RetryReport.statusWhenThrottled(" out_of_service ")).isEqualTo("OUT_OF_SERVICE");
        assertThat(RetryReport.statusWhenThrottled(null)).isEqualTo("UP");
        assertThat(RetryReport.statusWhenThrottled(" ")).isEqualTo("UP");
    }

    @Test
    void aMeasuredDurationIsShownAsPeopleReadIt() {
        assertThat(RetryReport.measured(java.time.Duration.ofNanos(45_056_000))).isEqualTo("45.1ms");
        assertThat(RetryReport.measured(java.time.Duration.ofMillis(2))).isEqualTo("2ms");
        assertThat(RetryReport.measured(java.time.Duration.ofMillis(1500))).isEqualTo("1.5s");
        assertThat(RetryReport.measured(java.time.Duration.ofSeconds(2))).isEqualTo("2s");
        assertThat(RetryReport.measured(java.time.Duration.ofMillis(999_600))).isEqualTo("1000s");
        assertThat(RetryReport.measured(java.time.Duration.ofNanos(850_400))).isEqualTo("850us");
        assertThat(RetryReport.measured(java.time.Duration.ofNanos(500))).isEqualTo("0.5us");
        assertThat(RetryReport.measured(java.time.Duration.ZERO)).isEqualTo("0s");
    }
}
