package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import io.github.grpcretry.testing.RetryPolicySamples;
import org.junit.jupiter.api.Test;

/** The configuration metadata (processor output merged with the additional file) documents every property. */
class RetryConfigurationMetadataTest {

    @Test
    void everyPropertyHasADescriptionAndTheDocumentedDefaults() throws Exception {
        JsonObject root;
        try (Reader r = new InputStreamReader(getClass().getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json"), StandardCharsets.UTF_8)) {
            root = JsonParser.parseReader(r).getAsJsonObject();
        }
        Map<String, JsonObject> props = new HashMap<>();
        for (JsonElement e : root.getAsJsonArray("properties")) {
            props.put(e.getAsJsonObject().get("name").getAsString(), e.getAsJsonObject());
        }
        String g = "grpc.retry.clients.GLOBAL.";
        String m = g + "service-config.method[0].";
        String[] names = {"grpc.retry.enabled", "grpc.retry.engine", "grpc.retry.clients", "grpc.retry.guard.enabled",
                "grpc.retry.health.status-when-throttled", g + "service-config-file", g + "budget.ratio",
                g + "budget.min-retries-per-second", g + "budget.ttl", g + "max-attempts-cap", g + "per-rpc-buffer-limit",
                g + "retry-buffer-size", g + "connect-timeout", g + "resilience4j-retry",
                g + "service-config.retrythrottling.max-tokens", g + "service-config.retrythrottling.token-ratio",
                m + "name[0].service", m + "name[0].method", m + "wait-for-ready", m + "timeout", m + "max-request-message",
                m + "max-response-message", m + "retry.max-attempts", m + "retry.initial-backoff", m + "retry.max-backoff",
                m + "retry.backoff-multiplier", m + "retry.retryable-status-codes", m + "retry.per-attempt-receive-timeout",
                m + "hedging.max-attempts", m + "hedging.delay", m + "hedging.non-fatal-status-codes"};
        for (String name : names) {
            assertThat(props).as(name).containsKey(name);
            assertThat(props.get(name).has("description")).as(name + " description").isTrue();
        }
        for (String field : RetryPolicySamples.propertyNames()) {
            // every field of retry-core's retry-policy table has its GLOBAL entry
            assertThat(props).as(m + "retry." + field).containsKey(m + "retry." + field);
            assertThat(props.get(m + "retry." + field).has("description")).as(field + " description").isTrue();
        }
        assertThat(props.get("grpc.retry.enabled").get("defaultValue").getAsBoolean()).isTrue();
        assertThat(props.get("grpc.retry.engine").get("defaultValue").getAsString()).isEqualTo("interceptor");
        assertThat(props.get(g + "max-attempts-cap").get("defaultValue").getAsInt()).isEqualTo(5);
        assertThat(props.get(g + "per-rpc-buffer-limit").get("defaultValue").getAsString()).isEqualTo("1MB");
        assertThat(props.get(g + "retry-buffer-size").get("defaultValue").getAsString()).isEqualTo("16MB");
        assertThat(props.get(g + "budget.ttl").get("defaultValue").getAsString()).isEqualTo("10s");
        assertThat(props.get(g + "budget.min-retries-per-second").get("defaultValue").getAsInt()).isEqualTo(10);
        assertThat(props.get("grpc.retry.health.status-when-throttled").get("defaultValue").getAsString()).isEqualTo("UP");
        Map<String, JsonObject> hints = new HashMap<>();
        for (JsonElement e : root.getAsJsonArray("hints")) {
            hints.put(e.getAsJsonObject().get("name").getAsString(), e.getAsJsonObject());
        }
        assertThat(hints).containsKeys("grpc.retry.engine", "grpc.retry.clients.keys", m + "retry.retryable-status-codes");
        assertThat(hints.get(m + "retry.retryable-status-codes").toString()).contains("UNAVAILABLE").doesNotContain("\"OK\"");
    }
}
