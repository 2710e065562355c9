package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.resilience4j.retry.RetryRegistry;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.annotation.Order;

/** The JSON file under typed properties, GLOBAL inheritance, method precedence and customizers, in real contexts. */
@ExtendWith(OutputCaptureExtension.class)
class ServiceConfigMergeContextTest {

    private static final String SVC = "grpc.testing.SimpleService";
    private static final String C = "grpc.retry.clients.inventory.";
    private static final String G = "grpc.retry.clients.GLOBAL.";

    @Test
    void typedPropertiesOverlayTheJsonFileFieldByField() {
        RetryTestContexts.runner()
                .withPropertyValues(C + "service-config-file=classpath:service-configs/overlay-base.json",
                        // same names as the file's first entry: overlays it field by field
                        C + "service-config.method[0].name[0].service=" + SVC,
                        C + "service-config.method[0].retry.max-attempts=4",
                        // a new entry: added
                        C + "service-config.method[1].name[0].service=other.Service",
                        C + "service-config.method[1].timeout=1s",
                        C + "service-config.retrythrottling.token-ratio=0.5")
                .run(ctx -> {
                    ServiceConfig sc = ctx.getBean(ChannelRetryConfigs.class).forChannel("inventory").serviceConfig();
                    assertThat(sc.methodConfigs()).hasSize(3);
                    MethodConfig service = sc.find(SVC, "StreamingOutputCall");
                    assertThat(service.retryPolicy().maxAttempts()).isEqualTo(4);
                    assertThat(service.retryPolicy().initialBackoff()).isEqualTo(Duration.ofMillis(10));
                    assertThat(service.retryPolicy().retryableStatusCodes()).containsExactly(Status.Code.UNAVAILABLE);
                    assertThat(service.timeout()).isEqualTo(Duration.ofSeconds(2));
                    MethodConfig exact = sc.find(SVC, "UnaryRpc");
                    assertThat(exact.waitForReady()).isTrue();
                    assertThat(exact.retryPolicy()).isNull();
                    assertThat(sc.find("other.Service", "Any").timeout()).isEqualTo(Duration.ofSeconds(1));
                    assertThat(sc.retryThrottling().maxTokens()).isEqualTo(10.0);
                    assertThat(sc.retryThrottling().tokenRatio()).isEqualTo(0.5);
                });
    }

    @Test
    void mergedConfigDrivesGrpcJavaExactMethodBeatsService() throws Exception {
        String name = "merge-" + UUID.randomUUID();
        try (ScriptedServer server = ScriptedServer.start(name)) {
            server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            RetryTestContexts.runner()
                    .withPropertyValues("grpc.client.inventory.address=in-process:" + name, "grpc.retry.engine=native",
                            C + "service-config-file=classpath:service-configs/overlay-base.json",
                            C + "service-config.method[0].name[0].service=" + SVC,
                            C + "service-config.method[0].retry.max-attempts=4",
                            // the exact UnaryRpc entry is not waiting for ready here (in-process would not matter)
                            C + "service-config.method[1].name[0].service=" + SVC,
                            C + "service-config.method[1].name[0].method=UnaryRpc",
                            C + "service-config.method[1].wait-for-ready=false")
                    .run(ctx -> {
                        Channel ch = ctx.getBean(GrpcChannelFactory.class).createChannel("inventory");
                        SimpleServiceGrpc.SimpleServiceBlockingStub stub =
                                SimpleServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
                        // UnaryRpc: the exact entry (no retry policy) wins over the service entry
                        assertThatThrownBy(() -> stub.unaryRpc(SimpleRequest.getDefaultInstance()))
                                .isInstanceOf(StatusRuntimeException.class);
                        assertThat(server.arrivalCount()).isEqualTo(1);
                        server.reset();
                        // ServerStreamingRpc: the service entry, max-attempts 4 from YAML, backoff from the file
                        assertThatThrownBy(() -> stub.serverStreamingRpc(SimpleRequest.getDefaultInstance()).hasNext())
                                .isInstanceOf(StatusRuntimeException.class);
                        assertThat(server.arrivalCount()).isEqualTo(4);
                    });
        }
    }

    @Test
    void channelsInheritGlobalPerFieldAndMatchOwnEntriesFirst() {
        RetryRegistry resilience4j = RetryRegistry.ofDefaults();
        resilience4j.retry("shared"); // the instance GLOBAL names, which the bridge checks at start-up
        RetryTestContexts.runner()
                .withBean(RetryRegistry.class, () -> resilience4j)
                .withPropertyValues(
                        G + "max-attempts-cap=3", G + "budget.ratio=0.2", G + "budget.ttl=5s",
                        G + "per-rpc-buffer-limit=2MB", G + "connect-timeout=3s", G + "resilience4j-retry=shared",
                        G + "service-config.retrythrottling.max-tokens=20", G + "service-config.retrythrottling.token-ratio=0.2",
                        G + "service-config.method[0].name[0].service=" + SVC,
                        G + "service-config.method[0].retry.max-attempts=3",
                        G + "service-config.method[0].retry.initial-backoff=10ms",
                        G + "service-config.method[0].retry.max-backoff=100ms",
                        G + "service-config.method[0].retry.backoff-multiplier=2",
                        G + "service-config.method[0].retry.retryable-status-codes=unavailable",
                        G + "service-config.method[1].timeout=5s",
                        C + "budget.ratio=0.5",
                        C + "service-config.retrythrottling.token-ratio=0.3",
                        C + "service-config.method[0].name[0].service=" + SVC,
                        C + "service-config.method[0].name[0].method=UnaryRpc",
                        C + "service-config.method[0].wait-for-ready=true",
                        "grpc.retry.clients.orders.service-config.method[0].timeout=1s")
                .run(ctx -> {
                    ChannelRetryConfigs configs = ctx.getBean(ChannelRetryConfigs.class);
                    assertThat(configs.configuredChannels()).containsExactly("inventory", "orders");

                    ChannelRetryConfig inv = configs.forChannel("inventory");
                    assertThat(inv.maxAttemptsCap()).isEqualTo(3);
                    assertThat(inv.perRpcBufferLimit()).isEqualTo(2L << 20);
                    assertThat(inv.retryBufferSize()).isEqualTo(ChannelRetryConfig.DEFAULT_RETRY_BUFFER_SIZE);
                    assertThat(inv.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(inv.resilience4jRetry()).isEqualTo("shared");
                    assertThat(inv.budget()).isEqualTo(new RetryBudgetPolicy(0.5, 10, Duration.ofSeconds(5)));
                    assertThat(inv.serviceConfig().retryThrottling().maxTokens()).isEqualTo(20.0);
                    assertThat(inv.serviceConfig().retryThrottling().tokenRatio()).isEqualTo(0.3);
                    // exact (own) > service (GLOBAL) > default (GLOBAL)
                    MethodConfig unary = inv.serviceConfig().find(SVC, "UnaryRpc");
                    assertThat(unary.waitForReady()).isTrue();
                    assertThat(unary.retryPolicy()).isNull();
                    assertThat(inv.serviceConfig().find(SVC, "ServerStreamingRpc").retryPolicy().maxAttempts()).isEqualTo(3);
                    assertThat(inv.serviceConfig().find("other.Service", "X").timeout()).isEqualTo(Duration.ofSeconds(5));

                    // "orders" has its own channel default: it is matched before GLOBAL's service entry
                    ChannelRetryConfig orders = configs.forChannel("orders");
                    MethodConfig ordersSvc = orders.serviceConfig().find(SVC, "ServerStreamingRpc");
                    assertThat(ordersSvc.timeout()).isEqualTo(Duration.ofSeconds(1));
                    assertThat(ordersSvc.retryPolicy()).isNull();
                    assertThat(orders.budget()).isEqualTo(new RetryBudgetPolicy(0.2, 10, Duration.ofSeconds(5)));

                    // a channel with no entry at all gets GLOBAL's
                    ChannelRetryConfig payments = configs.forChannel("payments");
                    assertThat(payments.maxAttemptsCap()).isEqualTo(3);
                    assertThat(payments.serviceConfig().find(SVC, "UnaryRpc").retryPolicy().maxAttempts()).isEqualTo(3);
                    assertThat(payments.serviceConfig().retryThrottling().tokenRatio()).isEqualTo(0.2);
                });
    }

    @Test
    void globalEntryAboveTheCapIsWarnedOnceWithItsPath(CapturedOutput output) {
        RetryTestContexts.runner()
                .withPropertyValues(
                        G + "service-config.method[0].retry.max-attempts=7",
                        G + "service-config.method[0].retry.initial-backoff=10ms",
                        G + "service-config.method[0].retry.max-backoff=100ms",
                        G + "service-config.method[0].retry.backoff-multiplier=2",
                        G + "service-config.method[0].retry.retryable-status-codes=14",
                        C + "connect-timeout=1s", "grpc.retry.clients.orders.connect-timeout=1s")
                .run(ctx -> {
                    ChannelRetryConfigs configs = ctx.getBean(ChannelRetryConfigs.class);
                    assertThat(configs.forChannel("inventory").serviceConfig().find(SVC, "X").retryPolicy().maxAttempts())
                            .isEqualTo(5);
                    assertThat(configs.forChannel("payments").serviceConfig().find(SVC, "X").retryPolicy().maxAttempts())
                            .isEqualTo(5);
                });
        String warning = G + "service-config.method[0].retry.max-attempts = 7 is above the max-attempts-cap 5";
        assertThat(output.getAll().split(java.util.regex.Pattern.quote(warning), -1)).hasSize(2);
    }

    @Test
    void customizersSeeTheMergedConfigAndRunBeforeTheCap(CapturedOutput output) {
        RetryTestContexts.runner()
                .withUserConfiguration(Customizers.class)
                .withPropertyValues(G + "service-config.method[0].timeout=5s", C + "max-attempts-cap=4")
                .run(ctx -> {
                    ChannelRetryConfig inv = ctx.getBean(ChannelRetryConfigs.class).forChannel("inventory");
                    RetryPolicy r = inv.serviceConfig().find("shop.Inventory", "Reserve").retryPolicy();
                    assertThat(r.maxAttempts()).isEqualTo(4);
                    // the customizer saw GLOBAL's default entry
                    assertThat(inv.serviceConfig().find("x.Y", "Z").timeout()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(ctx.getBean(Customizers.class).seen).contains("inventory:1");
                });
        assertThat(output.getAll()).contains(
                "ServiceConfigCustomizer(inventory) methodConfig[0].retryPolicy.maxAttempts = 9 is above the max-attempts-cap 4");
    }

    static class Customizers {
        final List<String> seen = new ArrayList<>();

        @org.springframework.context.annotation.Bean
        @Order(1)
        ServiceConfigCustomizer addReserve() {
            return (channel, config) -> {
                seen.add(channel + ":" + config.methodConfigs().size());
                List<MethodConfig> out = new ArrayList<>();
                out.add(new MethodConfig(List.of(MethodName.of("shop.Inventory", "Reserve")), null, null, null, null,
                        new RetryPolicy(9, Duration.ofMillis(10), Duration.ofMillis(100), 2,
                                EnumSet.of(Status.Code.UNAVAILABLE), null), null));
                out.addAll(config.methodConfigs());
                return new ServiceConfig(out, config.retryThrottling());
            };
        }
    }
}
