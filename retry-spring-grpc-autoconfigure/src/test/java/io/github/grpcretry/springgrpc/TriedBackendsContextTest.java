package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.testing.Backends;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Spring Boot 4.1 (Spring gRPC): three Netty backends on 127.0.0.1 behind one name, Boot's default
 * {@code round_robin} ({@code default.load-balancing-policy}), one backend answering UNAVAILABLE to everything,
 * 8 concurrent callers: with the interceptor engine's default {@code avoid-tried-backends} no retry goes back to the
 * backend that failed it and no call fails; with it off some do.
 */
class TriedBackendsContextTest {

    /** The starter's load-balancing policy (registered by retry-core). */
    private static final String POLICY = "grpcretry_avoid_tried_backends";

    private static final String M = "grpc.retry.clients.svc.service-config.method[0].";

    private static String[] properties(String target, String... more) {
        List<String> p = new ArrayList<>(List.of("spring.grpc.client.channel.svc.target=" + target,
                M + "name[0].service=" + SimpleServiceGrpc.SERVICE_NAME,
                M + "retry.max-attempts=3", M + "retry.initial-backoff=1ms", M + "retry.max-backoff=2ms",
                M + "retry.backoff-multiplier=2", M + "retry.retryable-status-codes=UNAVAILABLE"));
        p.addAll(List.of(more));
        return p.toArray(String[]::new);
    }

    @Test
    void noRetryGoesBackToTheFailedBackendAndNoCallFails() throws Exception {
        try (Backends backends = Backends.start(3);
                GrpcClientContext client = GrpcClientContext.start(properties(backends.target()))) {
            backends.server(0).script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            ChannelRetryConfig config = client.bean(ChannelRetryConfigs.class).forChannel("svc");
            assertThat(RetryReport.config(config)).containsEntry("avoidTriedBackends", true).containsEntry("backendPicks", 5);
            ManagedChannel channel = client.channel("svc");
            backends.warmUp(channel, 3);

            Backends.Outcome outcome = Backends.run(channel, "boot4", 8, 40, -1, () -> { });

            Map<String, List<Integer>> attempts = backends.attemptsByCall();
            System.out.printf("Boot 4.1: %d calls, %d retries, %d to a tried backend, %d failed%n", attempts.size(),
                    Backends.later(attempts), Backends.sentToTried(attempts), outcome.failedCalls());
            assertThat(outcome.failures()).isEmpty();
            assertThat(Backends.later(attempts)).isGreaterThan(40);
            assertThat(Backends.sentToTried(attempts)).isZero();
        }
    }

    @Test
    void bootsLoadBalancingBecomesTheChildOfTheStartersPolicy() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, GrpcClientAutoConfiguration.class,
                        GrpcRetryAutoConfiguration.class))
                .withPropertyValues("spring.grpc.client.channel.default.default.load-balancing-policy=pick_first",
                        "spring.grpc.client.channel.rr.target=static://127.0.0.1:1")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    GrpcRetryServiceConfigCustomizer customizer = ctx.getBean(GrpcRetryServiceConfigCustomizer.class);
                    // service-config.loadbalancing, as Boot renders it: the list becomes the child
                    Map<String, Object> listed = new LinkedHashMap<>(Map.of("loadBalancingConfig",
                            List.of(Map.of("round_robin", Map.of()))));
                    customizer.customize("svc", listed);
                    assertThat(listed.get("loadBalancingConfig")).isEqualTo(List.of(Map.of(
                            POLICY,
                            Map.of("childPolicy", List.of(Map.of("round_robin", Map.of()))))));
                    // default.load-balancing-policy of the channel's entry (rr: its own, Boot's round_robin) or of
                    // the default entry (svc has none of its own: pick_first)
                    Map<String, Object> none = new LinkedHashMap<>();
                    customizer.customize("svc", none);
                    assertThat(none.get("loadBalancingConfig")).isEqualTo(List.of(Map.of(
                            POLICY,
                            Map.of("childPolicy", List.of(Map.of("pick_first", Map.of()))))));
                    Map<String, Object> own = new LinkedHashMap<>();
                    customizer.customize("rr", own);
                    assertThat(own.get("loadBalancingConfig")).isEqualTo(List.of(Map.of(
                            POLICY,
                            Map.of("childPolicy", List.of(Map.of("round_robin", Map.of()))))));
                });
    }

    @Test
    void withAvoidanceOffRetriesGoBackToTheFailedBackend() throws Exception {
        try (Backends backends = Backends.start(3);
                GrpcClientContext client = GrpcClientContext.start(properties(backends.target(),
                        "grpc.retry.clients.svc.avoid-tried-backends=false"))) {
            backends.server(0).script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            ManagedChannel channel = client.channel("svc");
            backends.warmUp(channel, 3);

            Backends.run(channel, "boot4off", 8, 60, -1, () -> { });

            Map<String, List<Integer>> attempts = backends.attemptsByCall();
            System.out.printf("Boot 4.1, off: %d calls, %d retries, %d to a tried backend%n", attempts.size(),
                    Backends.later(attempts), Backends.sentToTried(attempts));
            assertThat(Backends.sentToTried(attempts)).isPositive();
        }
    }
}
