package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.ScriptedServer.Arrival;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * Hedging end to end through the starter (default engine = interceptor): a net.devh channel whose
 * {@code service-config.method[0].hedging.*} properties make the interceptor engine hedge against a
 * real in-process server, with the hedges visible as meters ({@code grpc.client.call.hedges},
 * {@code grpc.client.retry.attempts{kind=hedge}}).
 */
class HedgingContextTest {

    private static final String M = "grpc.retry.clients.inventory.service-config.method[0].";

    private ScriptedServer server;
    private String serverName;

    @BeforeEach
    void startServer() throws Exception {
        serverName = "hedging-context-" + UUID.randomUUID();
        server = ScriptedServer.start(serverName);
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    private ApplicationContextRunner runner(String... extra) {
        return RetryTestContexts.runner()
                .withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class, MetricsAutoConfiguration.class,
                        SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
                .withPropertyValues("grpc.client.inventory.address=in-process:" + serverName,
                        M + "name[0].service=grpc.testing.SimpleService",
                        // two attempts: the first held, the hedge after 300 ms; a third hedge would make the
                        // arrival counts depend on how fast the hedge's answer comes back (missed under load)
                        M + "hedging.max-attempts=2",
                        M + "hedging.delay=300ms",
                        M + "hedging.non-fatal-status-codes=unavailable")
                .withPropertyValues(extra);
    }

    private static SimpleServiceGrpc.SimpleServiceBlockingStub stub(ApplicationContext ctx) {
        Channel channel = ctx.getBean(GrpcChannelFactory.class).createChannel("inventory");
        return SimpleServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static SimpleRequest request(String text) {
        return SimpleRequest.newBuilder().setRequestMessage(text).build();
    }

    @Test
    void slowFirstAttemptIsOvertakenAndTheHedgeIsMetered() {
        server.script(a -> a.index == 1 ? Action.ok().delay(3000) : Action.ok());
        runner().run(ctx -> {
            assertThat(ctx).hasNotFailed();
            long start = System.nanoTime();
            assertThat(stub(ctx).unaryRpc(request("hello")).getResponseMessage()).isEqualTo("hello");
            long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(elapsed).isBetween(290L, 1500L);
            List<Arrival> arrivals = server.arrivals();
            assertThat(arrivals).extracting(a -> a.previousAttempts).containsExactly(null, 1);
            Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> server.arrivals().get(0).cancelled);

            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            DistributionSummary hedgeSummary = meters.get("grpc.client.call.hedges").summary();
            // gRFC A66's attributes: the generated method's name and the target grpc-java made of the address
            assertThat(hedgeSummary.getId().getTag("grpc.method")).isEqualTo("grpc.testing.SimpleService/UnaryRpc");
            assertThat(hedgeSummary.getId().getTag("grpc.target")).startsWith("directaddress:///");
            HistogramSnapshot hedges = hedgeSummary.takeSnapshot();
            assertThat(hedges.count()).isEqualTo(1);
            assertThat(hedges.total()).isEqualTo(1.0);
            Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> meters.find("grpc.client.retry.attempts")
                    .tags("kind", "initial", "status", "CANCELLED").counter() != null);
            assertThat(meters.get("grpc.client.retry.attempts").tags("kind", "hedge", "status", "OK").counter().count())
                    .isEqualTo(1.0);
        });
    }

    @Test
    void fatalStatusOnTheHedgeEndsTheCall() {
        server.script(a -> a.index == 1 ? Action.ok().delay(3000) : Action.fail(Status.Code.INTERNAL));
        runner().run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThatThrownBy(() -> stub(ctx).unaryRpc(request("x")))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL));
            assertThat(server.arrivalCount()).isEqualTo(2);
        });
    }

    @Test
    void aHedgeRefusedByAdaptiveHedgingsExtraLoadCapIsCountedAsMaxExtraLoad() {
        // the first call of the method: one hedge would be 100 % extra load, over the 5 % cap; no budget is set
        server.script(a -> Action.ok().delay(1000));
        runner("grpc.retry.clients.inventory.adaptive-hedging.enabled=true",
                "grpc.retry.clients.inventory.adaptive-hedging.max-extra-load=0.05", M + "hedging.delay=20ms").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(stub(ctx).unaryRpc(request("held")).getResponseMessage()).isEqualTo("held");
            assertThat(server.arrivalCount()).as("the hedge was not sent").isEqualTo(1);
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            assertThat(meters.get("grpc.client.retry.suppressed").tag("client", "inventory").tag("reason", "max_extra_load")
                    .counter().count()).isEqualTo(1.0);
            assertThat(meters.find("grpc.client.retry.suppressed").tag("reason", "budget").counters())
                    .allSatisfy(c -> assertThat(c.count()).isZero());
        });
    }

    @Test
    void nativeEngineHedgesFromTheSameProperties() {
        server.script(a -> a.index == 1 ? Action.ok().delay(3000) : Action.ok());
        runner("grpc.retry.engine=native").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(stub(ctx).unaryRpc(request("hello")).getResponseMessage()).isEqualTo("hello");
            assertThat(server.arrivals()).extracting(a -> a.previousAttempts).containsExactly(null, 1);
        });
    }
}
