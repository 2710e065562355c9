package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static io.github.grpcretry.testing.Texts.occurrences;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Keys that bind to nothing, on Spring Boot 4.1: every one under {@code grpc.retry}, and under the
 * retry, hedging and retrythrottling parts of {@code spring.grpc.client.channel.*.service-config}, stops
 * start-up with its key, value, origin and the closest known key, however deep it lies; the rest of
 * Boot's tree is left to Boot; every relaxed spelling and environment variable is accepted and takes
 * effect; {@code grpc.retry.ignore-unknown-properties=true} logs one WARN per key instead.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownKeysContextTest {

    static ScriptedService service;
    static GrpcServerContext server;

    @BeforeAll
    static void start() {
        service = new ScriptedService((key, n) -> fail(Status.Code.UNAVAILABLE));
        server = GrpcServerContext.start(service);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static String origin(int line) {
        return "Origin:   class path resource [unknown/typos.yml] - " + line + ":";
    }

    @Test
    void eachTypoStopsStartUpWithItsKeyOriginAndTheClosestKnownKey(CapturedOutput output) {
        assertThatThrownBy(() -> GrpcClientContext.start("spring.config.location=classpath:/unknown/typos.yml").close())
                .isNotNull();
        String console = output.getOut() + output.getErr();
        assertThat(console).contains("APPLICATION FAILED TO START",
                "Property: grpc.retry.engin\n    Value:    native\n    " + origin(3),
                "did you mean `engine`?",
                "Property: grpc.retry.clientz.svc.max-attempts-cap\n    Value:    3\n    " + origin(6),
                "did you mean `clients`?",
                "Property: grpc.retry.clients.svc.max-attempt\n    Value:    3\n    " + origin(9),
                "`max-attempt` binds to no property here, so the value has no effect; did you mean `max-attempts-cap`?",
                "Property: grpc.retry.clients.svc.budget.ration\n    Value:    0.1\n    " + origin(11),
                "did you mean `ratio`?",
                "Property: grpc.retry.clients.svc.service-config.method[0].name[0].servce\n"
                        + "    Value:    grpc.testing.SimpleService\n    " + origin(15),
                "did you mean `service`?",
                "Property: grpc.retry.clients.svc.service-config.method[0].retry.max-attempt\n    Value:    3\n    "
                        + origin(18),
                "did you mean `max-attempts`?",
                "Property: grpc.retry.clients.svc.service-config.method[0].retry.per-attempt-receive-timout\n"
                        + "    Value:    1s\n    " + origin(24),
                "did you mean `per-attempt-receive-timeout`?",
                "Property: spring.grpc.client.channel.svc.service-config.method[0].retry.max-attemps\n"
                        + "    Value:    3\n    " + origin(34),
                "Property: spring.grpc.client.channel.svc.service-config.retrythrottling.max-token\n"
                        + "    Value:    10\n    " + origin(42),
                "did you mean `max-tokens`?",
                "grpc.retry.clients.svc.service-config.method[0].retry.max-attempt: rename it to "
                        + "grpc.retry.clients.svc.service-config.method[0].retry.max-attempts");
        // Boot's own part of the service config (method[0].timout) is Boot's to check, not this starter's.
        // (A list element none of whose keys binds, such as a name[0] holding only servce, is rejected by
        // Spring Boot's binder itself, with its own report, before this check runs.)
        assertThat(console).doesNotContain("spring.grpc.client.channel.svc.service-config.method[0].timout");
        assertThat(occurrences(console, "Reason:   unknown key")).isEqualTo(9);
        // The other problems of the same configuration are in the same report.
        assertThat(console).contains("The gRPC retry configuration has 11 invalid values:",
                "grpc.retry.clientz.svc.max-attempts-cap: rename it to grpc.retry.clients.svc.max-attempts-cap");
    }

    @Test
    void anEnvironmentVariableTypoIsReportedWithTheVariable(CapturedOutput output) {
        assertThatThrownBy(() -> GrpcClientContext.start(List.of(),
                Map.of("GRPC_RETRY_CLIENTS_SVC_MAXATTEMPTCAP", "3")).close()).isNotNull();
        assertThat(output.getOut() + output.getErr()).contains(
                "Property: grpc.retry.clients.svc.maxattemptcap\n    Value:    3\n"
                        + "    Origin:   System Environment Property \"GRPC_RETRY_CLIENTS_SVC_MAXATTEMPTCAP\"",
                "did you mean `max-attempts-cap`?");
    }

    @Test
    void everyRelaxedSpellingAndEnvVariableIsAcceptedAndApplies() {
        Map<String, Object> env = Map.of(
                // Overrides the YAML's maxAttemptsCap: 2, so svc's 4 attempts are capped at 3.
                "GRPC_RETRY_CLIENTS_SVC_MAXATTEMPTSCAP", "3",
                "GRPC_RETRY_CLIENTS_ENVSVC_SERVICECONFIG_METHOD_0_RETRY_MAXATTEMPTS", "2",
                "GRPC_RETRY_CLIENTS_ENVSVC_SERVICECONFIG_METHOD_0_RETRY_INITIALBACKOFF", "1ms",
                "GRPC_RETRY_CLIENTS_ENVSVC_SERVICECONFIG_METHOD_0_RETRY_MAXBACKOFF", "2ms",
                "GRPC_RETRY_CLIENTS_ENVSVC_SERVICECONFIG_METHOD_0_RETRY_BACKOFFMULTIPLIER", "2",
                "GRPC_RETRY_CLIENTS_ENVSVC_SERVICECONFIG_METHOD_0_RETRY_RETRYABLESTATUSCODES_0_", "UNAVAILABLE",
                "SPRING_GRPC_CLIENT_CHANNEL_ENVSVC_TARGET", server.nettyTarget());
        try (GrpcClientContext client = GrpcClientContext.start(List.of(), env,
                "spring.config.location=classpath:/unknown/relaxed.yml",
                "spring.grpc.client.channel.svc.target=" + server.nettyTarget())) {
            ChannelRetryConfigs configs = client.bean(ChannelRetryConfigs.class);
            assertThat(configs.forChannel("svc").maxAttemptsCap()).isEqualTo(3);
            assertThat(configs.forChannel("svc").budget()).isNull();
            assertThat(arrivals(client, "svc", "relaxed-svc")).isEqualTo(3);
            assertThat(arrivals(client, "envsvc", "relaxed-envsvc")).isEqualTo(2);
        }
    }

    @Test
    void ignoreUnknownPropertiesLogsOneWarningPerKeyAndStarts(CapturedOutput output) {
        try (GrpcClientContext client = GrpcClientContext.start(List.of(),
                Map.of("GRPC_RETRY_CLIENTS_SVC_MAXATTEMPTCAP", "3"),
                "grpc.retry.ignore-unknown-properties=true", "grpc.retry.engin=native",
                "grpc.retry.clients.svc.budget.ration=0.1",
                "spring.grpc.client.channel.svc.target=" + server.nettyTarget(),
                "spring.grpc.client.channel.svc.service-config.retrythrottling.max-tokens=10",
                "spring.grpc.client.channel.svc.service-config.retrythrottling.token-ratio=0.1",
                "spring.grpc.client.channel.svc.service-config.retrythrottling.tokenratoi=0.2")) {
            assertThat(client.bean(ChannelRetryConfigs.class).forChannel("svc").maxAttemptsCap()).isEqualTo(5);
            assertThat(client.bean(ChannelRetryConfigs.class).forChannel("svc").budget()).isNull();
            assertThat(arrivals(client, "svc", "ignored")).isEqualTo(1);
        }
        String console = output.getOut() + output.getErr();
        assertThat(occurrences(console, "Ignored grpc.retry.clients.svc.maxattemptcap (System Environment Property "
                + "\"GRPC_RETRY_CLIENTS_SVC_MAXATTEMPTCAP\"): unknown key")).isEqualTo(1);
        assertThat(occurrences(console, "Ignored grpc.retry.engin")).isEqualTo(1);
        assertThat(occurrences(console, "Ignored grpc.retry.clients.svc.budget.ration")).isEqualTo(1);
        assertThat(occurrences(console, "Ignored spring.grpc.client.channel.svc.service-config.retrythrottling.tokenratoi"))
                .isEqualTo(1);
        assertThat(occurrences(console, "Ignored ")).isEqualTo(4);
    }

    @Test
    void aValueThatFailsValidationIsReportedWithItsOwnOrigin(CapturedOutput output) {
        assertThatThrownBy(() -> GrpcClientContext.start(List.of(), Map.of("GRPC_RETRY_CLIENTS_SVC_MAXATTEMPTSCAP", "0"),
                "spring.config.location=classpath:/unknown/relaxed.yml").close()).isNotNull();
        assertThat(output.getOut() + output.getErr()).contains("Property: grpc.retry.clients.svc.max-attempts-cap\n"
                + "    Value:    0\n    Origin:   System Environment Property \"GRPC_RETRY_CLIENTS_SVC_MAXATTEMPTSCAP\"");
    }

    @Test
    void aRequiredKeysTypoIsReportedAsATypoNotWithAnotherFilesOrigin(CapturedOutput output) {
        // The later file's list replaces the earlier one's whole: initial-backoff is not set at all.
        assertThatThrownBy(() -> GrpcClientContext.start("spring.config.location=classpath:/unknown/required-base.yml,"
                + "classpath:/unknown/required-override.yml").close()).isNotNull();
        String console = output.getOut() + output.getErr();
        assertThat(console).contains(
                "Property: grpc.retry.clients.svc.service-config.method[0].retry.initial-backof\n    Value:    1ms\n"
                        + "    Origin:   class path resource [unknown/required-override.yml] - 9:",
                "did you mean `initial-backoff`?",
                "Property: grpc.retry.clients.svc.service-config.method[0].retry.initial-backoff\n"
                        + "    Value:    (not set)\n    Replaced: the list entry grpc.retry.clients.svc.service-config.method[0]"
                        + " comes whole from the property source Config resource 'class path resource"
                        + " [unknown/required-override.yml]'",
                "this value, set in class path resource [unknown/required-base.yml] - 9:34, is not used\n    Reason:");
        // the base file's value is named as the one not used, never as the origin of a value
        assertThat(console).doesNotContain("Origin:   class path resource [unknown/required-base.yml]");
    }

    static int arrivals(GrpcClientContext client, String channel, String key) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> client.stub(channel).unaryRpc(request(key)));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        return service.count(key);
    }

}
