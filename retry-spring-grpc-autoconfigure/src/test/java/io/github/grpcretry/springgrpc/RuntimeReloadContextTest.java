package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.spring.testing.RefreshScenario.MAX_ATTEMPTS_KEY;
import static io.github.grpcretry.spring.testing.RefreshScenario.TIMEOUT_KEY;
import static io.github.grpcretry.spring.testing.RefreshScenario.brokenYamlPolicy;
import static io.github.grpcretry.spring.testing.RefreshScenario.policy;
import static io.github.grpcretry.spring.testing.RefreshScenario.yamlPolicy;
import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.spring.testing.RefreshScenario;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Run-time reload on Spring Boot 4.1 with a real refresh: the policy lives in a file the application
 * imports ({@code spring.config.import}), the test rewrites it and calls Spring Cloud's
 * {@link ContextRefresher#refresh()} (once {@code POST /actuator/refresh} over HTTP) while calls run
 * against a real gRPC server on loopback.
 */
@ExtendWith(OutputCaptureExtension.class)
class RuntimeReloadContextTest {

    static ScriptedService service;
    static GrpcServerContext server;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        // "fail-*" always fails; any other key fails its first attempt and succeeds on the next one
        service = new ScriptedService((key, n) -> key.startsWith("fail") || n == 0 ? fail(Status.Code.UNAVAILABLE) : ok());
        server = GrpcServerContext.start(service);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    Path write(String content) {
        return RefreshScenario.write(dir, content);
    }

    GrpcClientContext client(Path file, String... more) {
        List<String> props = new ArrayList<>(List.of("spring.config.import=file:" + file,
                "spring.grpc.client.channel.inv.target=" + server.nettyTarget()));
        props.addAll(List.of(more));
        return GrpcClientContext.start(props.toArray(String[]::new));
    }

    /** Attempts the server saw for one always-failing call on {@code inv}. */
    static int attemptsOfAFailingCall(SimpleServiceGrpc.SimpleServiceBlockingStub stub, String key) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(request(key)));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        return service.count(key);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> lastReload(GrpcClientContext client) {
        return (Map<String, Object>) client.bean(RetryReport.class).endpoint("inv").get("lastReload");
    }

    static double reloads(GrpcClientContext client, String outcome) {
        return client.bean(MeterRegistry.class).get("grpc.client.retry.config.reloads")
                .tag("client", "inv").tag("outcome", outcome).counter().count();
    }

    @Test
    void aRefreshTakesTwoToFourAttemptsRejectsAnInvalidOneAndAFixClearsTheRejection(CapturedOutput output) throws Exception {
        Path file = write(policy("2"));
        try (GrpcClientContext client = client(file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("inv");
            assertThat(attemptsOfAFailingCall(stub, "fail-before")).isEqualTo(2);
            assertThat(reloads(client, "applied")).isZero();

            write(policy("4"));
            Set<String> changed = client.bean(ContextRefresher.class).refresh();
            assertThat(changed).contains(MAX_ATTEMPTS_KEY);
            assertThat(attemptsOfAFailingCall(stub, "fail-after")).isEqualTo(4);
            assertThat(lastReload(client)).containsEntry("outcome", "applied");
            assertThat(reloads(client, "applied")).isEqualTo(1);

            write(policy("1"));
            client.bean(ContextRefresher.class).refresh();
            assertThat(attemptsOfAFailingCall(stub, "fail-rejected")).isEqualTo(4);
            assertThat(lastReload(client)).containsEntry("outcome", "rejected");
            assertThat((String) lastReload(client).get("message"))
                    .contains(MAX_ATTEMPTS_KEY);
            assertThat(reloads(client, "rejected")).isEqualTo(1);
            @SuppressWarnings("unchecked")
            Map<String, Object> health = (Map<String, Object>) client.bean(RetryReport.class).health().channels().get("inv");
            assertThat(health.get("lastReload")).isEqualTo(lastReload(client));

            // the file fixed back to what runs: the refresh names the key, and the rejection is cleared
            write(policy("4"));
            assertThat(client.bean(ContextRefresher.class).refresh()).contains(MAX_ATTEMPTS_KEY);
            assertThat(lastReload(client)).containsEntry("outcome", "unchanged");
            assertThat((String) lastReload(client).get("message")).contains(MAX_ATTEMPTS_KEY);
            assertThat(reloads(client, "unchanged")).isEqualTo(1);
            assertThat(reloads(client, "rejected")).isEqualTo(1);
            assertThat(attemptsOfAFailingCall(stub, "fail-fixed")).isEqualTo(4);
            @SuppressWarnings("unchecked")
            Map<String, Object> healthAfterFix = (Map<String, Object>) client.bean(RetryReport.class).health().channels().get("inv");
            assertThat(healthAfterFix.get("lastReload")).isEqualTo(lastReload(client));
            assertThat(output.getOut()).contains("grpc.retry reload of channel inv: unchanged, the channel already runs"
                    + " this configuration (" + MAX_ATTEMPTS_KEY + ")");
        }
    }

    @Test
    void aFileThatCannotBeReadIsRecordedAsFailedAndTheRunningPolicyStays() throws Exception {
        Path file = RefreshScenario.writeYaml(dir, yamlPolicy("4"));
        try (GrpcClientContext client = client(file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("inv");
            assertThat(attemptsOfAFailingCall(stub, "fail-yaml-before")).isEqualTo(4);

            RefreshScenario.writeYaml(dir, brokenYamlPolicy());
            ContextRefresher refresher = client.bean(ContextRefresher.class);
            assertThat(catchThrowableOfType(RuntimeException.class, refresher::refresh)).isNotNull();
            assertThat(lastReload(client)).containsEntry("outcome", "failed");
            assertThat((String) lastReload(client).get("message")).contains("while parsing a flow sequence");
            assertThat(reloads(client, "failed")).isEqualTo(1);
            assertThat(attemptsOfAFailingCall(stub, "fail-yaml-broken")).isEqualTo(4);

            RefreshScenario.writeYaml(dir, yamlPolicy("3"));
            assertThat(refresher.refresh()).contains(MAX_ATTEMPTS_KEY);
            assertThat(lastReload(client)).containsEntry("outcome", "applied");
            assertThat(attemptsOfAFailingCall(stub, "fail-yaml-fixed")).isEqualTo(3);
        }
    }

    @Test
    void eachOutcomeNamesTheKeysThatCausedIt() throws Exception {
        Path file = write(policy("2"));
        try (GrpcClientContext client = client(file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("inv");
            assertThat(attemptsOfAFailingCall(stub, "fail-keys-before")).isEqualTo(2);
            ContextRefresher refresher = client.bean(ContextRefresher.class);

            write(policy("2") + TIMEOUT_KEY + "=5s\n");
            refresher.refresh();
            assertThat(lastReload(client)).containsEntry("outcome", "restart_required");
            assertThat((String) lastReload(client).get("message")).contains(TIMEOUT_KEY).doesNotContain(MAX_ATTEMPTS_KEY);

            // the held timeout still needs the restart; the attempts change is held with it
            write(policy("3") + TIMEOUT_KEY + "=5s\n");
            refresher.refresh();
            assertThat(lastReload(client)).containsEntry("outcome", "restart_required");
            assertThat((String) lastReload(client).get("message")).contains("restart required, the channel keeps its"
                    + " running configuration: " + TIMEOUT_KEY).contains("held with it: " + MAX_ATTEMPTS_KEY);
            assertThat(attemptsOfAFailingCall(stub, "fail-keys-held")).isEqualTo(2);

            // the timeout removed: what is applied is the attempts change
            write(policy("3"));
            assertThat(refresher.refresh()).containsExactly(TIMEOUT_KEY);
            assertThat(lastReload(client)).containsEntry("outcome", "applied")
                    .containsEntry("message", "applied (" + MAX_ATTEMPTS_KEY + ")");
            assertThat(attemptsOfAFailingCall(stub, "fail-keys-after")).isEqualTo(3);
        }
    }

    @Test
    void bootsOwnServiceConfigRetryIsReloadedToo() throws Exception {
        String m = "spring.grpc.client.channel.inv.service-config.method[0].";
        String boot = m + "name[0].service=grpc.testing.SimpleService\n" + m + "retry.initial-backoff=1ms\n"
                + m + "retry.max-backoff=2ms\n" + m + "retry.backoff-multiplier=1\n"
                + m + "retry.retryable-status-codes=UNAVAILABLE\n";
        Path file = write(boot + m + "retry.max-attempts=2\n");
        try (GrpcClientContext client = client(file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("inv");
            assertThat(attemptsOfAFailingCall(stub, "fail-boot-before")).isEqualTo(2);

            write(boot + m + "retry.max-attempts=3\n");
            assertThat(client.bean(ContextRefresher.class).refresh()).containsExactly(m + "retry.max-attempts");
            assertThat(attemptsOfAFailingCall(stub, "fail-boot-after")).isEqualTo(3);
            assertThat((String) lastReload(client).get("message")).contains(m + "retry.max-attempts");
        }
    }

    @Test
    void thousandCallsRunThroughTenRefreshesWithoutAFailure() throws Exception {
        Path file = write(policy("3"));
        int calls = 1000;
        int refreshes = 10;
        try (GrpcClientContext client = client(file)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("inv");
            ContextRefresher refresher = client.bean(ContextRefresher.class);
            int failed = RefreshScenario.callsThroughRefreshes(calls, refreshes,
                    i -> stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(request("flaky-" + i)),
                    r -> {
                        write(policy(r % 2 == 0 ? "4" : "3"));
                        assertThat(refresher.refresh()).contains(MAX_ATTEMPTS_KEY);
                    });
            assertThat(failed).isZero();
            assertThat(reloads(client, "applied")).isEqualTo(refreshes);
            // every call was retried once: its first attempt failed, the second succeeded
            for (int i = 0; i < calls; i += 97) {
                assertThat(service.count("flaky-" + i)).isEqualTo(2);
            }
        }
    }

    @Test
    void aNativeEngineChangeIsReportedAsRestartRequired() throws Exception {
        Path file = write(policy("2"));
        try (GrpcClientContext client = client(file, "grpc.retry.engine=native")) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = client.stub("inv");
            assertThat(attemptsOfAFailingCall(stub, "fail-native-before")).isEqualTo(2);

            write(policy("4"));
            client.bean(ContextRefresher.class).refresh();
            assertThat(lastReload(client)).containsEntry("outcome", "restart_required");
            assertThat((String) lastReload(client).get("message")).contains("restart required")
                    .contains(MAX_ATTEMPTS_KEY);
            assertThat(reloads(client, "restart_required")).isEqualTo(1);
            // nothing half-applied: the channel and the endpoint keep the running policy
            assertThat(attemptsOfAFailingCall(stub, "fail-native-after")).isEqualTo(2);
            assertThat(client.bean(io.github.grpcretry.policy.ChannelRetryConfigs.class).forChannel("inv").serviceConfig()
                    .find("grpc.testing.SimpleService", "UnaryRpc").retryPolicy().maxAttempts()).isEqualTo(2);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class WebApp {
    }

    @Test
    void postActuatorRefreshOverHttpAppliesTheNewPolicyAndRecordsAFailedOne() throws Exception {
        Path file = RefreshScenario.writeYaml(dir, yamlPolicy("2"));
        try (ConfigurableApplicationContext web = new SpringApplicationBuilder(WebApp.class)
                .web(WebApplicationType.SERVLET)
                .properties(Map.of("server.port", "0", "server.address", "127.0.0.1", "spring.main.banner-mode", "off",
                        "spring.grpc.server.enabled", "false", "spring.config.import", "file:" + file,
                        "spring.grpc.client.channel.inv.target", server.nettyTarget(),
                        "management.endpoints.web.exposure.include", "refresh,grpcretry"))
                .run()) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(
                    web.getBean(org.springframework.grpc.client.GrpcChannelFactory.class).createChannel("inv"));
            assertThat(attemptsOfAFailingCall(stub, "fail-http-before")).isEqualTo(2);

            RefreshScenario.writeYaml(dir, yamlPolicy("4"));
            int port = ((WebServerApplicationContext) web).getWebServer().getPort();
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> refresh = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/actuator/refresh")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(refresh.statusCode()).isEqualTo(200);
            assertThat(refresh.body()).contains(MAX_ATTEMPTS_KEY);
            assertThat(attemptsOfAFailingCall(stub, "fail-http-after")).isEqualTo(4);
            HttpResponse<String> endpoint = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/actuator/grpcretry/inv")).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(endpoint.body()).contains("\"lastReload\"").contains("\"outcome\":\"applied\"");

            // a file that cannot be read: the refresh answers 500 as without the starter, and it is recorded
            RefreshScenario.writeYaml(dir, brokenYamlPolicy());
            HttpResponse<String> failed = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/actuator/refresh")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(failed.statusCode()).isEqualTo(500);
            assertThat(attemptsOfAFailingCall(stub, "fail-http-failed")).isEqualTo(4);
            endpoint = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/actuator/grpcretry/inv")).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(endpoint.body()).contains("\"outcome\":\"failed\"");
        }
    }
}
