package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.metrics.RetryMeterNames;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.testing.Backends;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Spring Boot 3.5 (net.devh): three Netty backends on 127.0.0.1 behind one name, net.devh's default
 * {@code round_robin}, one backend answering UNAVAILABLE to everything, 8 concurrent callers: with the interceptor
 * engine's default {@code avoid-tried-backends} no retry goes back to the backend that failed it and no call fails;
 * the channel's setting shows in its configuration; {@code backend-picks} is validated; the native engine warns.
 */
@ExtendWith(OutputCaptureExtension.class)
class TriedBackendsContextTest {

    private static final String M = "grpc.retry.clients.svc.service-config.method[0].";

    private static List<String> properties(String target, String... more) {
        List<String> p = new ArrayList<>(List.of("grpc.client.svc.address=" + target,
                "grpc.client.svc.negotiation-type=plaintext",
                M + "name[0].service=" + SimpleServiceGrpc.SERVICE_NAME,
                M + "retry.max-attempts=3", M + "retry.initial-backoff=1ms", M + "retry.max-backoff=2ms",
                M + "retry.backoff-multiplier=2", M + "retry.retryable-status-codes=UNAVAILABLE"));
        p.addAll(List.of(more));
        return p;
    }

    @Test
    void noRetryGoesBackToTheFailedBackendAndNoCallFails() throws Exception {
        try (Backends backends = Backends.start(3)) {
            backends.server(0).script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            RetryTestContexts.runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .withPropertyValues(properties(backends.target()).toArray(String[]::new)).run(ctx -> {
                        assertThat(ctx).hasNotFailed();
                        ChannelRetryConfig config = ctx.getBean(ChannelRetryConfigs.class).forChannel("svc");
                        assertThat(config.avoidTriedBackends()).isTrue();
                        assertThat(config.backendPicks()).isEqualTo(ChannelRetryConfig.DEFAULT_BACKEND_PICKS);
                        assertThat(RetryReport.config(config)).containsEntry("avoidTriedBackends", true)
                                .containsEntry("backendPicks", 5);
                        Channel channel = ctx.getBean(GrpcChannelFactory.class).createChannel("svc");
                        backends.warmUp(channel, 3);

                        Backends.Outcome outcome = Backends.run(channel, "boot3", 8, 40, -1, () -> { });

                        Map<String, List<Integer>> attempts = backends.attemptsByCall();
                        System.out.printf("Boot 3.5: %d calls, %d retries, %d to a tried backend, %d failed%n",
                                attempts.size(), Backends.later(attempts), Backends.sentToTried(attempts),
                                outcome.failedCalls());
                        assertThat(outcome.failures()).isEmpty();
                        assertThat(Backends.later(attempts)).isGreaterThan(40);
                        assertThat(Backends.sentToTried(attempts)).isZero();
                        assertThat(ctx.getBean(MeterRegistry.class).find(RetryMeterNames.BACKEND_REUSED).counters())
                                .as("no retry had to go back").isEmpty();
                    });
        }
    }

    @Test
    void withAvoidanceOffRetriesGoBackToTheFailedBackend() throws Exception {
        try (Backends backends = Backends.start(3)) {
            backends.server(0).script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            RetryTestContexts.runner().withPropertyValues(properties(backends.target(),
                    "grpc.retry.clients.svc.avoid-tried-backends=false").toArray(String[]::new)).run(ctx -> {
                        assertThat(ctx).hasNotFailed();
                        Channel channel = ctx.getBean(GrpcChannelFactory.class).createChannel("svc");
                        backends.warmUp(channel, 3);

                        Backends.run(channel, "boot3off", 8, 60, -1, () -> { });

                        Map<String, List<Integer>> attempts = backends.attemptsByCall();
                        System.out.printf("Boot 3.5, off: %d calls, %d retries, %d to a tried backend%n",
                                attempts.size(), Backends.later(attempts), Backends.sentToTried(attempts));
                        assertThat(Backends.sentToTried(attempts)).isPositive();
                    });
        }
    }

    @Test
    void backendPicksOutOfRangeStopsStartUpNamingTheKey() {
        RetryTestContexts.runner().withPropertyValues(properties("static://127.0.0.1:1",
                "grpc.retry.clients.svc.backend-picks=11").toArray(String[]::new)).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(RetryTestContexts.failureReport(ctx.getStartupFailure()))
                            .contains("grpc.retry.clients.svc.backend-picks").contains("between 1 and 10");
                });
    }

    @Test
    void theNativeEngineWarnsOnceThatItCannotAvoidTriedBackends(CapturedOutput output) {
        RetryTestContexts.runner().withPropertyValues(properties("static://127.0.0.1:1", "grpc.retry.engine=native",
                "grpc.retry.clients.svc.avoid-tried-backends=true").toArray(String[]::new)).run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    ctx.getBean(ReloadableChannels.class);
                });
        String console = output.getOut() + output.getErr();
        assertThat(console.split("avoid-tried-backends is ignored", -1)).as("one WARN").hasSize(2);
        assertThat(console).contains("grpc.retry.clients.svc.avoid-tried-backends = true");
    }
}
