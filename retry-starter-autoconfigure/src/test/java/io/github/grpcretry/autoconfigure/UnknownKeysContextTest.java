package io.github.grpcretry.autoconfigure;

import static io.github.grpcretry.testing.Texts.occurrences;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.OriginLookup;
import org.springframework.boot.origin.SystemEnvironmentOrigin;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Keys under {@code grpc.retry} that bind to nothing, on Spring Boot 3.5 (net.devh): each stops
 * start-up with its key, value, origin and the closest known key, however deep it lies; every relaxed
 * spelling and environment variable is accepted and takes effect;
 * {@code grpc.retry.ignore-unknown-properties=true} logs one WARN per key instead.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownKeysContextTest {

    @SpringBootConfiguration
    @ImportAutoConfiguration({GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class})
    static class App {
    }

    private ScriptedServer server;
    private String serverName;

    @BeforeEach
    void startServer() throws Exception {
        serverName = "unknown-keys-" + UUID.randomUUID();
        server = ScriptedServer.start(serverName).script(a -> ScriptedServer.Action.fail(Status.Code.UNAVAILABLE));
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    private ConfigurableApplicationContext start(Map<String, Object> environmentVariables, String... properties) {
        List<String> p = new ArrayList<>(List.of("spring.main.banner-mode=off",
                "grpc.client.inventory.address=in-process:" + serverName));
        p.addAll(List.of(properties));
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .initializers(c -> c.getEnvironment().getPropertySources().addBefore(
                        StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                        new EnvironmentVariables(environmentVariables)))
                .properties(p.toArray(String[]::new)).run();
    }

    static String origin(int line) {
        return "Origin:   class path resource [unknown/typos.yml] - " + line + ":";
    }

    @Test
    void eachTypoStopsStartUpWithItsKeyOriginAndTheClosestKnownKey(CapturedOutput output) {
        assertThatThrownBy(() -> start(Map.of("GRPC_RETRY_CLIENTS_INVENTORY_MAXATTEMPTCAP", "3"),
                "spring.config.location=classpath:/unknown/typos.yml").close()).isNotNull();
        String console = output.getOut() + output.getErr();
        assertThat(console).contains("APPLICATION FAILED TO START",
                "Property: grpc.retry.engin\n    Value:    native\n    " + origin(3), "did you mean `engine`?",
                "Property: grpc.retry.clientz.inventory.max-attempts-cap\n    Value:    3\n    " + origin(6),
                "did you mean `clients`?",
                "Property: grpc.retry.deadline.reserv\n    Value:    10ms\n    " + origin(8), "did you mean `reserve`?",
                "Property: grpc.retry.clients.inventory.max-attempt\n    Value:    3\n    " + origin(11),
                "did you mean `max-attempts-cap`?",
                "Property: grpc.retry.clients.inventory.service-config.method[0].name[0].methd\n"
                        + "    Value:    UnaryRpc\n    " + origin(16), "did you mean `method`?",
                "Property: grpc.retry.clients.inventory.service-config.method[0].retry.per-attempt-receive-timout\n"
                        + "    Value:    1s\n    " + origin(23), "did you mean `per-attempt-receive-timeout`?",
                "Property: grpc.retry.clients.inventory.maxattemptcap\n    Value:    3\n"
                        + "    Origin:   System Environment Property \"GRPC_RETRY_CLIENTS_INVENTORY_MAXATTEMPTCAP\"");
        assertThat(occurrences(console, "Reason:   unknown key")).isEqualTo(7);
    }

    @Test
    void everyRelaxedSpellingAndEnvVariableIsAcceptedAndApplies() {
        // The variable overrides the YAML's maxAttemptsCap: 2, so the 4 attempts are capped at 3.
        try (ConfigurableApplicationContext ctx = start(Map.of("GRPC_RETRY_CLIENTS_INVENTORY_MAXATTEMPTSCAP", "3"),
                "spring.config.location=classpath:/unknown/relaxed.yml")) {
            assertThat(ctx.getBean(ChannelRetryConfigs.class).forChannel("inventory").maxAttemptsCap()).isEqualTo(3);
            StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                    () -> SimpleServiceGrpc.newBlockingStub(ctx.getBean(GrpcChannelFactory.class).createChannel("inventory"))
                            .unaryRpc(SimpleRequest.getDefaultInstance()));
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.arrivalCount()).isEqualTo(3);
        }
    }

    @Test
    void ignoreUnknownPropertiesLogsOneWarningPerKeyAndStarts(CapturedOutput output) {
        try (ConfigurableApplicationContext ctx = start(Map.of("GRPC_RETRY_CLIENTS_INVENTORY_MAXATTEMPTCAP", "3"),
                "grpc.retry.ignore-unknown-properties=true", "grpc.retry.engin=native",
                "grpc.retry.clients.inventory.budget.ration=0.1")) {
            assertThat(ctx.getBean(ChannelRetryConfigs.class).forChannel("inventory").maxAttemptsCap()).isEqualTo(5);
        }
        String console = output.getOut() + output.getErr();
        assertThat(occurrences(console, "Ignored grpc.retry.clients.inventory.maxattemptcap (System Environment Property "
                + "\"GRPC_RETRY_CLIENTS_INVENTORY_MAXATTEMPTCAP\"): unknown key")).isEqualTo(1);
        assertThat(occurrences(console, "Ignored grpc.retry.engin")).isEqualTo(1);
        assertThat(occurrences(console, "Ignored grpc.retry.clients.inventory.budget.ration")).isEqualTo(1);
        assertThat(occurrences(console, "Ignored ")).isEqualTo(3);
    }

    @Test
    void aValueThatFailsValidationIsReportedWithItsOwnOrigin(CapturedOutput output) {
        assertThatThrownBy(() -> start(Map.of("GRPC_RETRY_CLIENTS_INVENTORY_MAXATTEMPTSCAP", "0"),
                "spring.config.location=classpath:/unknown/relaxed.yml").close()).isNotNull();
        assertThat(output.getOut() + output.getErr()).contains("Property: grpc.retry.clients.inventory.max-attempts-cap\n"
                + "    Value:    0\n    Origin:   System Environment Property \"GRPC_RETRY_CLIENTS_INVENTORY_MAXATTEMPTSCAP\"");
    }


    /** Environment variables as Spring Boot reads the process environment (relaxed names, origins). */
    static final class EnvironmentVariables extends SystemEnvironmentPropertySource implements OriginLookup<String> {

        EnvironmentVariables(Map<String, Object> variables) {
            super("test-" + StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables);
        }

        @Override
        public Origin getOrigin(String key) {
            return getSource().containsKey(key) ? new SystemEnvironmentOrigin(key) : null;
        }
    }
}
