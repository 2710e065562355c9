package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.testing.Texts.occurrences;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.attempt.AdaptiveHedgingRegistry;
import io.github.grpcretry.policy.AdaptiveHedgingPolicy;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * {@code retry-info}, {@code retry-info-max-delay} and {@code adaptive-hedging.*} on Spring Boot 4.1: bound under
 * every channel, inherited from GLOBAL field by field, validated with the property's path, the adaptive delays
 * shown as a gauge and on the endpoint, and with {@code engine: native} (which applies neither) one WARN each
 * naming where they are set.
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
    void adaptiveDelaysAreAGaugeAndAnEndpointFieldPerMethod() {
        ScriptedService service = new ScriptedService((key, n) -> ScriptedService.ok());
        try (GrpcServerContext server = GrpcServerContext.start(service);
                GrpcClientContext client = GrpcClientContext.start(List.of(new SimpleMeterRegistry()),
                        "spring.grpc.client.channel.svc.target=" + server.nettyTarget(),
                        "grpc.retry.clients.svc.service-config.method[0].hedging.max-attempts=2",
                        "grpc.retry.clients.svc.service-config.method[0].hedging.delay=2s",
                        "grpc.retry.clients.svc.adaptive-hedging.enabled=true")) {
            for (int i = 0; i < 3; i++) {
                client.stub("svc").unaryRpc(GrpcClientContext.request("a"));
            }
            AdaptiveHedgingRegistry registry = client.bean(AdaptiveHedgingRegistry.class);
            assertThat(registry.delays("svc")).singleElement().satisfies(d -> {
                assertThat(d.fullMethodName()).isEqualTo("grpc.testing.SimpleService/UnaryRpc");
                assertThat(d.adapted()).as("3 of 100 samples").isFalse();
                assertThat(d.delay()).isEqualTo(Duration.ofSeconds(2));
                assertThat(d.windowCalls()).isEqualTo(3);
            });
            MeterRegistry meters = client.bean(MeterRegistry.class);
            assertThat(meters.get("grpc.client.hedging.delay").tag("client", "svc")
                    .tag("method", "grpc.testing.SimpleService/UnaryRpc").gauge().value()).isEqualTo(2.0);
            Map<String, Object> entry = client.bean(RetryReport.class).endpoint("svc");
            assertThat(entry).extractingByKey("hedgingDelays").asString()
                    .contains("grpc.testing.SimpleService/UnaryRpc", "delay=2s", "adapted=false", "windowCalls=3");
            assertThat(entry).extractingByKey("config").asString()
                    .contains("retryInfo=true", "retryInfoMaxDelay=30s", "adaptiveHedging={maxExtraLoad=0.05");
        }
    }

    @Test
    void aHedgeRefusedByTheExtraLoadCapIsCountedAsMaxExtraLoad() {
        // the first call of the method: one hedge would be 100 % extra load, over the 5 % cap; no budget is set
        ScriptedService service = new ScriptedService((key, n) -> ScriptedService.delayedOk(1000));
        try (GrpcServerContext server = GrpcServerContext.start(service);
                GrpcClientContext client = GrpcClientContext.start(List.of(new SimpleMeterRegistry()),
                        "spring.grpc.client.channel.svc.target=" + server.nettyTarget(),
                        "grpc.retry.clients.svc.service-config.method[0].hedging.max-attempts=2",
                        "grpc.retry.clients.svc.service-config.method[0].hedging.delay=20ms",
                        "grpc.retry.clients.svc.adaptive-hedging.enabled=true",
                        "grpc.retry.clients.svc.adaptive-hedging.max-extra-load=0.05")) {
            client.stub("svc").unaryRpc(GrpcClientContext.request("held"));
            assertThat(service.count("held")).as("the hedge was not sent").isEqualTo(1);
            MeterRegistry meters = client.bean(MeterRegistry.class);
            assertThat(meters.get("grpc.client.retry.suppressed").tag("client", "svc").tag("reason", "max_extra_load")
                    .counter().count()).isEqualTo(1.0);
            assertThat(meters.find("grpc.client.retry.suppressed").tag("reason", "budget").counters())
                    .allSatisfy(c -> assertThat(c.count()).isZero());
        }
    }

    @Test
    void theNativeEngineWithoutTheseSettingsDoesNotWarn(CapturedOutput output) {
        try (GrpcClientContext client = GrpcClientContext.start("grpc.retry.engine=native")) {
            assertThat(client.bean(ChannelRetryConfigs.class)).isNotNull();
        }
        assertThat(output.getAll()).doesNotContain(RETRY_INFO_WARNING, ADAPTIVE_WARNING);
    }
}
