package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static io.github.grpcretry.spring.testing.RefreshScenario.MAX_ATTEMPTS_KEY;
import static io.github.grpcretry.spring.testing.RefreshScenario.TIMEOUT_KEY;
import static io.github.grpcretry.spring.testing.RefreshScenario.brokenYamlPolicy;
import static io.github.grpcretry.spring.testing.RefreshScenario.policy;
import static io.github.grpcretry.spring.testing.RefreshScenario.yamlPolicy;

import io.github.grpcretry.autoconfigure.actuate.GrpcRetryHealthIndicator;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.GrpcRetryEndpoint;
import io.github.grpcretry.spring.testing.RefreshScenario;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.cloud.endpoint.event.RefreshEvent;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Run-time reload on Spring Boot 3.5 (net.devh) with a real refresh: the policy lives in a file the
 * application imports ({@code spring.config.import}), the test rewrites it and calls Spring Cloud's
 * {@link ContextRefresher#refresh()} while calls run against a real in-process gRPC server.
 */
@ExtendWith(OutputCaptureExtension.class)
class RuntimeReloadContextTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    @TempDir
    Path dir;

    ScriptedServer server;
    String serverName;

    @BeforeEach
    void startServer() throws Exception {
        serverName = "reload-" + UUID.randomUUID();
        server = ScriptedServer.start(serverName);
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    Path write(String content) {
        return RefreshScenario.write(dir, content);
    }

    ConfigurableApplicationContext start(Path file, String... more) {
        return start("inv", file, more);
    }

    /** The application with the client {@code channel} (the file's entry is {@code inv} still). */
    ConfigurableApplicationContext start(String channel, Path file, String... more) {
        Map<String, Object> props = new LinkedHashMap<>(Map.of("spring.main.banner-mode", "off",
                "spring.config.import", "file:" + file,
                "grpc.client." + channel + ".address", "in-process:" + serverName,
                "grpc.server.port", "-1",
                "management.endpoints.web.exposure.include", "grpcretry",
                "grpc.server.in-process-name", "reload-unused-" + serverName));
        for (String p : more) {
            props.put(p.substring(0, p.indexOf('=')), p.substring(p.indexOf('=') + 1));
        }
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE).properties(props).run();
    }

    static SimpleServiceGrpc.SimpleServiceBlockingStub stub(ConfigurableApplicationContext context) {
        return SimpleServiceGrpc.newBlockingStub(context.getBean(GrpcChannelFactory.class).createChannel("inv"));
    }

    /** Attempts the server saw for one always-failing call. */
    int attemptsOfAFailingCall(SimpleServiceGrpc.SimpleServiceBlockingStub stub) {
        server.script(a -> Action.failOnHalfClose(Status.Code.UNAVAILABLE));
        int before = server.arrivalCount();
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(SimpleRequest.getDefaultInstance()));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        return server.arrivalCount() - before;
    }

    /** {@code lastReload} of channel {@code inv} as the {@code grpcretry} endpoint shows it, the same in the health details. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> lastReload(ConfigurableApplicationContext context) {
        Map<String, Object> shown = (Map<String, Object>) context.getBean(GrpcRetryEndpoint.class).channel("inv").get("lastReload");
        Map<String, Object> channels = (Map<String, Object>) context.getBean(GrpcRetryHealthIndicator.class).health()
                .getDetails().get("channels");
        assertThat(((Map<String, Object>) channels.get("inv")).get("lastReload")).isEqualTo(shown);
        return shown;
    }

    static double reloads(ConfigurableApplicationContext context, String outcome) {
        return context.getBean(MeterRegistry.class).get("grpc.client.retry.config.reloads")
                .tag("client", "inv").tag("outcome", outcome).counter().count();
    }

    @Test
    void aRefreshTakesTwoToFourAttemptsRejectsAnInvalidOneAndAFixClearsTheRejection(CapturedOutput output) throws Exception {
        Path file = write(policy("2"));
        try (ConfigurableApplicationContext context = start(file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = stub(context);
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(2);
            assertThat(reloads(context, "applied")).isZero();

            write(policy("4"));
            Set<String> changed = context.getBean(ContextRefresher.class).refresh();
            assertThat(changed).contains(MAX_ATTEMPTS_KEY);
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(4);
            assertThat(lastReload(context)).containsEntry("outcome", "applied");
            assertThat(reloads(context, "applied")).isEqualTo(1);

            write(policy("1"));
            context.getBean(ContextRefresher.class).refresh();
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(4);
            assertThat(lastReload(context)).containsEntry("outcome", "rejected");
            assertThat((String) lastReload(context).get("message"))
                    .contains(MAX_ATTEMPTS_KEY);
            assertThat(reloads(context, "rejected")).isEqualTo(1);

            // the file fixed back to what runs: the refresh names the key, and the rejection is cleared
            write(policy("4"));
            assertThat(context.getBean(ContextRefresher.class).refresh()).contains(MAX_ATTEMPTS_KEY);
            assertThat(lastReload(context)).containsEntry("outcome", "unchanged");
            assertThat((String) lastReload(context).get("message")).contains(MAX_ATTEMPTS_KEY);
            assertThat(reloads(context, "unchanged")).isEqualTo(1);
            assertThat(reloads(context, "rejected")).isEqualTo(1);
            assertThat(reloads(context, "applied")).isEqualTo(1);
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(4);
            assertThat(output.getOut()).contains("grpc.retry reload of channel inv: unchanged, the channel already runs"
                    + " this configuration (" + MAX_ATTEMPTS_KEY + ")");
        }
    }

    @Test
    void aFileThatCannotBeReadIsRecordedAsFailedAndTheRunningPolicyStays(CapturedOutput output) throws Exception {
        Path file = RefreshScenario.writeYaml(dir, yamlPolicy("4"));
        try (ConfigurableApplicationContext context = start(file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = stub(context);
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(4);

            RefreshScenario.writeYaml(dir, brokenYamlPolicy());
            ContextRefresher refresher = context.getBean(ContextRefresher.class);
            RuntimeException thrown = catchThrowableOfType(RuntimeException.class, refresher::refresh);
            assertThat(thrown).isNotNull();
            assertThat(lastReload(context)).containsEntry("outcome", "failed");
            assertThat((String) lastReload(context).get("message")).contains("while parsing a flow sequence")
                    .contains("retryable-status-codes: [UNAVAILABLE").doesNotContain("\n");
            assertThat(reloads(context, "failed")).isEqualTo(1);
            assertThat(output.getOut()).contains("grpc.retry reload failed, the configuration could not be read");
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(4);

            // Spring Cloud Bus and scheduled reloads publish a RefreshEvent, whose listener calls the same refresher
            assertThat(catchThrowableOfType(RuntimeException.class,
                    () -> context.publishEvent(new RefreshEvent(this, null, "a scheduled reload")))).isNotNull();
            assertThat(reloads(context, "failed")).isEqualTo(2);

            RefreshScenario.writeYaml(dir, yamlPolicy("3"));
            assertThat(refresher.refresh()).contains(MAX_ATTEMPTS_KEY);
            assertThat(lastReload(context)).containsEntry("outcome", "applied");
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(3);
            assertThat(reloads(context, "failed")).isEqualTo(2);
        }
    }

    @Test
    void eachOutcomeNamesTheKeysThatCausedIt() throws Exception {
        Path file = write(policy("2"));
        try (ConfigurableApplicationContext context = start(file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = stub(context);
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(2);
            ContextRefresher refresher = context.getBean(ContextRefresher.class);

            write(policy("2") + TIMEOUT_KEY + "=5s\n");
            refresher.refresh();
            assertThat(lastReload(context)).containsEntry("outcome", "restart_required");
            assertThat((String) lastReload(context).get("message")).contains(TIMEOUT_KEY).doesNotContain(MAX_ATTEMPTS_KEY);

            // the held timeout still needs the restart; the attempts change is held with it
            write(policy("3") + TIMEOUT_KEY + "=5s\n");
            refresher.refresh();
            assertThat(lastReload(context)).containsEntry("outcome", "restart_required");
            assertThat((String) lastReload(context).get("message")).contains("restart required, the channel keeps its"
                    + " running configuration: " + TIMEOUT_KEY).contains("held with it: " + MAX_ATTEMPTS_KEY);
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(2);

            // the timeout removed: what is applied is the attempts change
            write(policy("3"));
            assertThat(refresher.refresh()).containsExactly(TIMEOUT_KEY);
            assertThat(lastReload(context)).containsEntry("outcome", "applied")
                    .containsEntry("message", "applied (" + MAX_ATTEMPTS_KEY + ")");
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(3);
        }
    }

    @Test
    void thousandCallsRunThroughTenRefreshesWithoutAFailure() throws Exception {
        Path file = write(policy("3"));
        int calls = 1000;
        int refreshes = 10;
        // each call's first attempt fails, its retry succeeds
        server.script(a -> a.previousAttempts == null ? Action.failOnHalfClose(Status.Code.UNAVAILABLE) : Action.ok());
        try (ConfigurableApplicationContext context = start(file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = stub(context);
            ContextRefresher refresher = context.getBean(ContextRefresher.class);
            int failed = RefreshScenario.callsThroughRefreshes(calls, refreshes,
                    i -> stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(SimpleRequest.getDefaultInstance()),
                    r -> {
                        write(policy(r % 2 == 0 ? "4" : "3"));
                        assertThat(refresher.refresh()).contains(MAX_ATTEMPTS_KEY);
                    });
            assertThat(failed).isZero();
            assertThat(server.arrivalCount()).isEqualTo(2 * calls);
            assertThat(reloads(context, "applied")).isEqualTo(refreshes);
        }
    }

    @Test
    void aRefreshOfAnEntryInAnotherCaseIsTheChannelsAndNamesItsKey() throws Exception {
        Path file = write(policy("2"));
        try (ConfigurableApplicationContext context = start("Inv", file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(
                    context.getBean(GrpcChannelFactory.class).createChannel("Inv"));
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(2);

            write(policy("4"));
            assertThat(context.getBean(ContextRefresher.class).refresh()).contains(MAX_ATTEMPTS_KEY);
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(4);
            assertThat(context.getBean(GrpcRetryEndpoint.class).channel("Inv").get("lastReload").toString())
                    .contains("outcome=applied").contains("message=applied (" + MAX_ATTEMPTS_KEY + ")");
        }
    }

    @Test
    void aNativeEngineChangeIsReportedAsRestartRequired() throws Exception {
        Path file = write(policy("2"));
        try (ConfigurableApplicationContext context = start(file, "grpc.retry.engine=native")) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = stub(context);
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(2);

            write(policy("4"));
            context.getBean(ContextRefresher.class).refresh();
            assertThat(lastReload(context)).containsEntry("outcome", "restart_required");
            assertThat((String) lastReload(context).get("message")).contains("restart required")
                    .contains(MAX_ATTEMPTS_KEY);
            assertThat(reloads(context, "restart_required")).isEqualTo(1);
            assertThat(attemptsOfAFailingCall(stub)).isEqualTo(2);
            assertThat(context.getBean(ChannelRetryConfigs.class).forChannel("inv").serviceConfig()
                    .find("grpc.testing.SimpleService", "UnaryRpc").retryPolicy().maxAttempts()).isEqualTo(2);
        }
    }
}
