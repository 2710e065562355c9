package io.github.grpcretry.internal.config;

import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServiceConfigJsonTest {

    private static final String FULL = """
            {
              "loadBalancingConfig": [{"round_robin": {}}],
              "healthCheckConfig": {"serviceName": "x"},
              "methodConfig": [
                {
                  "name": [{"service": "shop.Inventory", "method": "Reserve"}, {"service": "shop.Stock"}],
                  "waitForReady": true,
                  "timeout": "1.5s",
                  "maxRequestMessageBytes": 1024,
                  "maxResponseMessageBytes": "2048",
                  "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.1s",
                    "maxBackoff": "1s",
                    "backoffMultiplier": 1.5,
                    "retryableStatusCodes": ["UNAVAILABLE", "resource_exhausted", 4],
                    "perAttemptRecvTimeout": "0.25s"
                  }
                },
                {
                  "name": [{}],
                  "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.05s", "nonFatalStatusCodes": ["UNAVAILABLE"]}
                }
              ],
              "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
            }
            """;

    @Test
    void readsEveryFieldOfAStandardServiceConfig() {
        ServiceConfig sc = ServiceConfigJson.read(FULL, "classpath:sc.json");
        MethodConfig reserve = sc.find("shop.Inventory", "Reserve");
        assertThat(reserve.names()).containsExactly(MethodName.of("shop.Inventory", "Reserve"), MethodName.of("shop.Stock", null));
        assertThat(reserve.waitForReady()).isTrue();
        assertThat(reserve.timeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(reserve.maxRequestMessageBytes()).isEqualTo(1024L);
        assertThat(reserve.maxResponseMessageBytes()).isEqualTo(2048L);
        RetryPolicy r = reserve.retryPolicy();
        assertThat(r.maxAttempts()).isEqualTo(4);
        assertThat(r.initialBackoff()).isEqualTo(Duration.ofMillis(100));
        assertThat(r.maxBackoff()).isEqualTo(Duration.ofSeconds(1));
        assertThat(r.backoffMultiplier()).isEqualTo(1.5);
        assertThat(r.retryableStatusCodes()).containsExactlyInAnyOrder(Status.Code.UNAVAILABLE,
                Status.Code.RESOURCE_EXHAUSTED, Status.Code.DEADLINE_EXCEEDED);
        assertThat(r.perAttemptReceiveTimeout()).isEqualTo(Duration.ofMillis(250));
        HedgingPolicy h = sc.find("other.Service", "M").hedgingPolicy();
        assertThat(h.maxAttempts()).isEqualTo(3);
        assertThat(h.hedgingDelay()).isEqualTo(Duration.ofMillis(50));
        assertThat(h.nonFatalStatusCodes()).containsExactly(Status.Code.UNAVAILABLE);
        assertThat(sc.retryThrottling()).isEqualTo(new RetryThrottlingPolicy(10, 0.1));
    }

    @Test
    void renderedMapRoundTrips() {
        ServiceConfig sc = ServiceConfigJson.read(FULL, "sc.json");
        Map<String, Object> map = sc.toServiceConfigMap(true);
        String json = new com.google.gson.Gson().toJson(map);
        assertThat(ServiceConfigJson.read(json, "rendered")).isEqualTo(sc);
    }

    @Test
    void protobufDurations() {
        assertThat(ServiceConfigJson.parseDuration("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(ServiceConfigJson.parseDuration("0.000000001s")).isEqualTo(Duration.ofNanos(1));
        assertThat(ServiceConfigJson.parseDuration("-0.1s")).isEqualTo(Duration.ofMillis(-100));
        assertThat(ServiceConfigJson.parseDuration("3s")).isEqualTo(Duration.ofSeconds(3));
        assertThat(ServiceConfigJson.parseDuration("50ms")).isNull();
        assertThat(ServiceConfigJson.parseDuration("1.5")).isNull();
        assertThat(ServiceConfigJson.parseDuration("1.0000000001s")).isNull();
    }

    @Test
    void malformedJsonNamesTheFileAndPosition() {
        List<ConfigProblem> problems = new ArrayList<>();
        assertThat(ServiceConfigJson.parse("{\"methodConfig\": [ {\"name\": [}] }", "file:/etc/sc.json", problems)).isNull();
        assertThat(problems).hasSize(1);
        assertThat(problems.get(0).path()).startsWith("file:/etc/sc.json $.methodConfig[0].name");
        assertThat(problems.get(0).rule()).startsWith("malformed JSON");
    }

    @Test
    void lenientSyntaxIsRejected() {
        List<ConfigProblem> problems = new ArrayList<>();
        ServiceConfigJson.parse("{methodConfig: []}", "sc.json", problems);
        assertThat(problems).hasSize(1);
        problems.clear();
        ServiceConfigJson.parse("{\"methodConfig\": []} trailing", "sc.json", problems);
        assertThat(problems).hasSize(1);
    }

    @Test
    void everyBadValueIsReportedWithItsJsonPath() {
        String json = """
                {"methodConfig": [
                  {"name": [{"method": "NoService"}], "timeout": 5, "waitForReady": "yes",
                   "retryPolicy": {"maxAttempts": 2.5, "initialBackoff": "0s", "maxBackoff": "1s",
                                   "backoffMultiplier": "two", "retryableStatusCodes": []}},
                  {"hedgingPolicy": {"maxAttempts": 2}}
                 ],
                 "retryThrottling": {"maxTokens": 0}}
                """;
        assertThatThrownBy(() -> ServiceConfigJson.read(json, "sc.json"))
                .isInstanceOfSatisfying(InvalidRetryConfigurationException.class, e -> assertThat(e.getProblems())
                        .extracting(ConfigProblem::path)
                        .contains("sc.json $.methodConfig[0].timeout", "sc.json $.methodConfig[0].waitForReady",
                                "sc.json $.methodConfig[0].retryPolicy.maxAttempts",
                                "sc.json $.methodConfig[0].retryPolicy.backoffMultiplier",
                                "sc.json $.methodConfig[0].name[0]",
                                "sc.json $.methodConfig[0].retryPolicy.initialBackoff",
                                "sc.json $.methodConfig[0].retryPolicy.retryableStatusCodes",
                                "sc.json $.methodConfig[1].name",
                                "sc.json $.retryThrottling.maxTokens",
                                "sc.json $.retryThrottling.tokenRatio"));
    }

    @Test
    void emptyFileAndNonObjectAreProblems() {
        List<ConfigProblem> problems = new ArrayList<>();
        ServiceConfigJson.parse("  ", "a.json", problems);
        ServiceConfigJson.parse("[1, 2]", "b.json", problems);
        assertThat(problems).extracting(ConfigProblem::path).containsExactly("a.json $", "b.json $");
    }
}
