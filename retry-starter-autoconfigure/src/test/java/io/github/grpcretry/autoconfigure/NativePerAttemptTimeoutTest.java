package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

/**
 * {@code per-attempt-receive-timeout} in both engines, against a real server whose first attempt of
 * every call stalls (held 30 s, answered only if still there) while later attempts answer at once.
 * The interceptor engine cuts the stalled attempt after the timeout and retries; grpc-java 1.85
 * (engine native) parses {@code perAttemptRecvTimeout} into its retry policy but its
 * {@code RetriableStream} never applies it, so the attempt runs until the call's deadline. The
 * starter says so with one WARN at start-up naming where the timeout is set.
 */
@ExtendWith(OutputCaptureExtension.class)
class NativePerAttemptTimeoutTest {

    private static final String M = "grpc.retry.clients.inventory.service-config.method[0].";
    private static final String WARNING = "per-attempt-receive-timeout is ignored: grpc.retry.engine=native";
    private static final Duration PER_ATTEMPT = Duration.ofMillis(200);
    /** The call's deadline: ten times the per-attempt timeout. */
    private static final long DEADLINE_MS = 2000;

    private ScriptedServer server;
    private String serverName;

    @BeforeEach
    void startServer() throws Exception {
        serverName = "per-attempt-" + UUID.randomUUID();
        server = ScriptedServer.start(serverName);
        // the calls under test carry "stall" (their first attempt is held); the warm-up's are answered at once
        server.script(a -> a.previousAttempts == null && "stall".equals(a.header(CALL.name()))
                ? Action.ok().delay(30_000) : Action.ok());
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    private ApplicationContextRunner runner(String engine) {
        return RetryTestContexts.runner().withPropertyValues(
                "grpc.client.inventory.address=in-process:" + serverName,
                "grpc.retry.engine=" + engine,
                M + "name[0].service=grpc.testing.SimpleService",
                M + "retry.max-attempts=3",
                M + "retry.initial-backoff=10ms",
                M + "retry.max-backoff=100ms",
                M + "retry.backoff-multiplier=2",
                M + "retry.retryable-status-codes=unavailable",
                M + "retry.per-attempt-receive-timeout=" + PER_ATTEMPT.toMillis() + "ms");
    }

    private static final Metadata.Key<String> CALL = Metadata.Key.of("x-call", Metadata.ASCII_STRING_MARSHALLER);

    /**
     * The channel's stub for calls named {@code name}, after a warm-up call on the same channel: the
     * first call of a fresh context loads classes and connects, which must not eat the per-attempt
     * timeout of the call under test before its first attempt reached the server.
     */
    private SimpleServiceGrpc.SimpleServiceBlockingStub warmedStub(ApplicationContext ctx, String name) {
        Channel channel = ctx.getBean(GrpcChannelFactory.class).createChannel("inventory");
        assertThat(stub(channel, "warm-up").withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(request("warm"))
                .getResponseMessage()).isEqualTo("warm");
        server.reset();
        return stub(channel, name).withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS);
    }

    private static SimpleServiceGrpc.SimpleServiceBlockingStub stub(Channel channel, String name) {
        Metadata headers = new Metadata();
        headers.put(CALL, name);
        return SimpleServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    private static SimpleRequest request(String text) {
        return SimpleRequest.newBuilder().setRequestMessage(text).build();
    }

    private static int occurrences(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }

    private void awaitCancelled(Arrival a) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!a.cancelled) {
            assertThat(System.nanoTime()).as("arrival " + a.index + " seen cancelled by the server").isLessThan(end);
            Thread.sleep(5); // polls the server's record of the cancel
        }
    }

    @Test
    void interceptorEngineCutsTheStalledAttemptAndRetries(CapturedOutput output) {
        runner("interceptor").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(warmedStub(ctx, "stall").unaryRpc(request("hello")).getResponseMessage()).isEqualTo("hello");
            List<Arrival> arrivals = server.arrivals();
            assertThat(arrivals).hasSize(2);
            assertThat(arrivals).extracting(a -> a.previousAttempts).containsExactly(null, 1);
            // the stalled attempt was cancelled by the client, not answered by the server
            awaitCancelled(arrivals.get(0));
            assertThat(arrivals.get(0).closedByServer).isFalse();
            // the retry left after the per-attempt timeout (plus a 10 ms backoff), not before
            assertThat(TimeUnit.NANOSECONDS.toMillis(arrivals.get(1).nanoTime - arrivals.get(0).nanoTime))
                    .isGreaterThanOrEqualTo(PER_ATTEMPT.toMillis());
        });
        assertThat(output.getAll()).doesNotContain(WARNING);
    }

    @Test
    void nativeEngineRunsStalledAttemptToDeadlineAndWarnsOnce(CapturedOutput output) {
        runner("native").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = warmedStub(ctx, "stall");
            long start = System.nanoTime();
            assertThatThrownBy(() -> stub.unaryRpc(request("hello")))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // one attempt, never cut: it ran until the call's deadline cancelled it
            List<Arrival> arrivals = server.arrivals();
            assertThat(arrivals).hasSize(1);
            awaitCancelled(arrivals.get(0));
            assertThat(arrivals.get(0).closedByServer).isFalse();
            assertThat(elapsedMs).as("the call ended at its deadline, far past the per-attempt timeout")
                    .isGreaterThanOrEqualTo(5 * PER_ATTEMPT.toMillis());
            // the same policy makes the interceptor engine retry (test above); here nothing but the deadline acted
            assertThat(server.arrivalCount()).isEqualTo(1);
        });
        String all = output.getAll();
        assertThat(occurrences(all, WARNING)).as(all).isEqualTo(1);
        assertThat(all).contains(WARNING + " (grpc-java's own retry) reads perAttemptRecvTimeout from the service config"
                + " but never applies it, so a stalled attempt is not cut and retried; only the call's deadline ends it."
                + " Set at: grpc.retry.clients.inventory.service-config.method[0].retry.per-attempt-receive-timeout = 0.2s."
                + " Use grpc.retry.engine=interceptor to have it applied, or remove it");
        assertThat(all).contains("WARN");
    }

    @Test
    void oneWarningNamesEveryPlaceThatSetsIt(CapturedOutput output) {
        RetryTestContexts.runner()
                .withUserConfiguration(AddsPerAttemptTimeout.class)
                .withPropertyValues(
                        "grpc.retry.engine=native",
                        "grpc.retry.clients.GLOBAL.service-config.method[0].name[0].service=shop.Other",
                        "grpc.retry.clients.GLOBAL.service-config.method[0].retry.max-attempts=2",
                        "grpc.retry.clients.GLOBAL.service-config.method[0].retry.initial-backoff=10ms",
                        "grpc.retry.clients.GLOBAL.service-config.method[0].retry.max-backoff=10ms",
                        "grpc.retry.clients.GLOBAL.service-config.method[0].retry.backoff-multiplier=2",
                        "grpc.retry.clients.GLOBAL.service-config.method[0].retry.retryable-status-codes=unavailable",
                        "grpc.retry.clients.GLOBAL.service-config.method[0].retry.per-attempt-receive-timeout=1s",
                        "grpc.retry.clients.inventory.service-config-file=classpath:service-configs/per-attempt-timeout.json",
                        "grpc.retry.clients.orders.max-attempts-cap=4")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    ChannelRetryConfigs configs = ctx.getBean(ChannelRetryConfigs.class);
                    assertThat(configs.forChannel("orders").serviceConfig().find("shop.Orders", "Get").retryPolicy()
                            .perAttemptReceiveTimeout()).isEqualTo(Duration.ofMillis(700));
                });
        String all = output.getAll();
        assertThat(occurrences(all, WARNING)).as(all).isEqualTo(1);
        assertThat(all).contains("Set at: grpc.retry.clients.GLOBAL.service-config.method[0].retry.per-attempt-receive-timeout = 1s, "
                + "classpath:service-configs/per-attempt-timeout.json $.methodConfig[0].retryPolicy.perAttemptRecvTimeout = 0.3s.");
        // GLOBAL sets one for every channel: the customizer's is named only when nothing configured does
        assertThat(all).doesNotContain("ServiceConfigCustomizer(");
    }

    @Test
    void aTimeoutOnlyACustomizerAddsIsNamedByTheCustomizer(CapturedOutput output) {
        RetryTestContexts.runner()
                .withUserConfiguration(AddsPerAttemptTimeout.class)
                .withPropertyValues("grpc.retry.engine=native", "grpc.retry.clients.orders.max-attempts-cap=4")
                .run(ctx -> assertThat(ctx).hasNotFailed());
        String all = output.getAll();
        assertThat(occurrences(all, WARNING)).as(all).isEqualTo(1);
        assertThat(all).contains("Set at: ServiceConfigCustomizer(orders).");
    }

    @Test
    void noWarningWithoutAPerAttemptTimeout(CapturedOutput output) {
        RetryTestContexts.runner()
                .withPropertyValues("grpc.retry.engine=native",
                        "grpc.retry.clients.inventory.service-config-file=classpath:service-configs/simple-retry.json")
                .run(ctx -> assertThat(ctx).hasNotFailed());
        assertThat(output.getAll()).doesNotContain(WARNING);
    }

    /** A customizer that gives channel "orders" a retry policy with a 700 ms per-attempt timeout. */
    static class AddsPerAttemptTimeout {
        @org.springframework.context.annotation.Bean
        ServiceConfigCustomizer perAttemptTimeoutForOrders() {
            return (channel, config) -> {
                if (!channel.equals("orders")) {
                    return config;
                }
                List<MethodConfig> out = new ArrayList<>();
                out.add(new MethodConfig(List.of(MethodName.of("shop.Orders", null)), null, null, null, null,
                        new RetryPolicy(2, Duration.ofMillis(10), Duration.ofMillis(100), 2,
                                EnumSet.of(Status.Code.UNAVAILABLE), Duration.ofMillis(700)), null));
                out.addAll(config.methodConfigs());
                return new ServiceConfig(out, config.retryThrottling());
            };
        }
    }
}
