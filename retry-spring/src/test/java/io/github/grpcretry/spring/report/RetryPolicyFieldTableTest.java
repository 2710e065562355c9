package io.github.grpcretry.spring.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.Gson;
import io.github.grpcretry.config.RetryConfigResolver.ClientProperties;
import io.github.grpcretry.config.RetryConfigResolver.MethodProperties;
import io.github.grpcretry.config.RetryConfigResolver.NameProperties;
import io.github.grpcretry.config.RetryConfigResolver.RetryProperties;
import io.github.grpcretry.config.RetryConfigResolver.ServiceConfigProperties;
import io.github.grpcretry.config.RetryConfigResolver;
import io.github.grpcretry.internal.config.ConfigNaming;
import io.github.grpcretry.internal.config.RetryPolicyField;
import io.github.grpcretry.internal.config.ServiceConfigJson;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.spring.GrpcRetryClientProperties;
import io.github.grpcretry.spring.SpringBoundValues;
import io.github.grpcretry.testing.RetryPolicySamples;
import io.grpc.Status;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The retry-policy field table: it matches the {@link RetryPolicy} record, and every field goes through
 * every path the table drives (bound properties, validation, the JSON a channel gets, the JSON reader, the
 * endpoint, the problem report) without a line per field elsewhere.
 */
class RetryPolicyFieldTableTest {

    static final String CHANNEL = "grpc.retry.clients.inventory";
    static final String RETRY = CHANNEL + ".service-config.method[0].retry";

    /** An invalid value of each field, as bound properties and as JSON. */
    static final Map<String, Object> INVALID = Map.of(
            "max-attempts", 1,
            "initial-backoff", Duration.ZERO,
            "max-backoff", Duration.ofSeconds(-1),
            "backoff-multiplier", 0.0,
            "retryable-status-codes", List.of("OK"),
            "per-attempt-receive-timeout", Duration.ZERO);
    static final Map<String, Object> INVALID_JSON = Map.of(
            "maxAttempts", 1,
            "initialBackoff", "0s",
            "maxBackoff", "-1s",
            "backoffMultiplier", 0,
            "retryableStatusCodes", List.of("OK"),
            "perAttemptRecvTimeout", "0s");

    static ChannelRetryConfig resolve(Map<String, Object> retry) {
        MethodProperties method = new MethodProperties(null, null, null, null, null, retryProperties(retry), null);
        return RetryConfigResolver.create()
                .client("inventory", new ClientProperties(new ServiceConfigProperties(List.of(method), null), null, null,
                        null, null, null, null, null, null, null, null, null, null, null))
                .resolve().forChannel("inventory");
    }

    /**
     * The typed retry properties of values keyed by property name: each value given to the record component whose
     * name is the field's Java name (in the kind's type), the others unset.
     */
    static RetryProperties retryProperties(Map<String, Object> byPropertyName) {
        RecordComponent[] components = RetryProperties.class.getRecordComponents();
        Object[] args = new Object[components.length];
        Class<?>[] types = new Class<?>[components.length];
        for (int i = 0; i < components.length; i++) {
            types[i] = components[i].getType();
            for (Map.Entry<String, Object> e : byPropertyName.entrySet()) {
                RetryPolicyField f = RetryPolicyField.byPropertyName(e.getKey());
                if (f != null && f.javaName().equals(components[i].getName())) {
                    args[i] = f.kind().fromProperty(e.getValue());
                }
            }
        }
        try {
            return RetryProperties.class.getDeclaredConstructor(types).newInstance(args);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    static List<ConfigProblem> problems(Map<String, Object> retry) {
        try {
            resolve(retry);
        } catch (InvalidRetryConfigurationException e) {
            return e.getProblems();
        }
        return List.of();
    }

    /** The policy record and the bound record of the resolver: one component per field, in the table's order. */
    @Test
    void theTableListsTheRecordsComponentsInOrder() {
        List<String> components = new ArrayList<>();
        for (RecordComponent c : RetryPolicy.class.getRecordComponents()) {
            components.add(c.getName());
        }
        List<String> bound = new ArrayList<>();
        for (RecordComponent c : RetryProperties.class.getRecordComponents()) {
            bound.add(c.getName());
        }
        assertThat(bound).isEqualTo(components);
        List<String> javaNames = new ArrayList<>();
        for (RetryPolicyField f : RetryPolicyField.values()) {
            javaNames.add(f.javaName());
            assertThat(ConfigNaming.PROPERTIES.name(f.jsonName())).isEqualTo(f.propertyName());
            assertThat(RetryPolicyField.byPropertyName(f.propertyName())).isSameAs(f);
        }
        assertThat(javaNames).isEqualTo(components);
    }

    @Test
    void everyFieldRoundTripsThroughPolicyAndJson() {
        ChannelRetryConfig config = resolve(RetryPolicySamples.bound());
        RetryPolicy policy = config.serviceConfig().methodConfigs().get(0).retryPolicy();
        RetryPolicySamples.assertHasEverySample(policy);

        Map<String, Object> rendered = policy.toServiceConfigMap();
        assertThat(rendered.keySet()).as("the JSON names of the table, in order")
                .containsExactly(jsonNames().toArray(String[]::new));
        String json = new Gson().toJson(config.serviceConfig().toServiceConfigMap(true));
        ServiceConfig read = ServiceConfigJson.read(json, "rendered");
        assertThat(read).isEqualTo(config.serviceConfig());
        assertThat(read.methodConfigs().get(0).retryPolicy()).isEqualTo(policy);
    }

    @Test
    void theEndpointShowsEveryFieldByItsJavaName() {
        Map<String, Object> shown = RetryReport.config(resolve(RetryPolicySamples.bound()));
        @SuppressWarnings("unchecked")
        Map<String, Object> retry = (Map<String, Object>) ((Map<String, Object>) ((List<?>) shown.get("methods")).get(0)).get("retry");
        List<String> javaNames = new ArrayList<>();
        for (RetryPolicyField f : RetryPolicyField.values()) {
            javaNames.add(f.javaName());
        }
        assertThat(retry.keySet()).containsExactlyElementsOf(javaNames);
        assertThat(retry).containsEntry("initialBackoff", "150ms").containsEntry("maxAttempts", 4)
                .containsEntry("retryableStatusCodes", List.of("RESOURCE_EXHAUSTED", "UNAVAILABLE"));
    }

    @Test
    void anInvalidValueOfEachFieldIsReportedAtItsPropertyPath() {
        for (RetryPolicyField f : RetryPolicyField.values()) {
            Map<String, Object> retry = new LinkedHashMap<>(RetryPolicySamples.bound());
            retry.put(f.propertyName(), INVALID.get(f.propertyName()));
            assertThat(problems(retry)).as(f.propertyName()).extracting(ConfigProblem::path)
                    .containsExactly(RETRY + "." + f.propertyName());
        }
    }

    @Test
    void anInvalidValueOfEachFieldIsReportedAtItsJsonPath() {
        for (RetryPolicyField f : RetryPolicyField.values()) {
            Map<String, Object> retry = new LinkedHashMap<>();
            for (RetryPolicyField g : RetryPolicyField.values()) {
                retry.put(g.jsonName(), g.kind().toReport(g.value(RetryPolicySamples.expected())));
            }
            retry.put("initialBackoff", "0.15s");
            retry.put("maxBackoff", "2.5s");
            retry.put("perAttemptRecvTimeout", "0.75s");
            retry.put(f.jsonName(), INVALID_JSON.get(f.jsonName()));
            String json = new Gson().toJson(Map.of("methodConfig", List.of(Map.of("name", List.of(Map.of()), "retryPolicy", retry))));
            assertThatThrownBy(() -> ServiceConfigJson.read(json, "sc.json")).as(f.jsonName())
                    .isInstanceOfSatisfying(InvalidRetryConfigurationException.class, e -> assertThat(e.getProblems())
                            .extracting(ConfigProblem::path)
                            .containsExactly("sc.json $.methodConfig[0].retryPolicy." + f.jsonName()));
        }
    }

    @Test
    void aMissingFieldIsReportedAtItsPathUnlessItIsOptional() {
        for (RetryPolicyField f : RetryPolicyField.values()) {
            Map<String, Object> retry = new LinkedHashMap<>(RetryPolicySamples.bound());
            retry.remove(f.propertyName());
            List<ConfigProblem> problems = problems(retry);
            if (f == RetryPolicyField.PER_ATTEMPT_RECEIVE_TIMEOUT) {
                assertThat(problems).as(f.propertyName()).isEmpty();
            } else {
                assertThat(problems).as(f.propertyName()).singleElement().satisfies(p -> {
                    assertThat(p.path()).isEqualTo(RETRY + "." + f.propertyName());
                    assertThat(p.rule()).startsWith("required: ");
                });
            }
        }
    }

    // ------------------------------------------------------------------ the typed mapping of bound properties

    /** A bound channel whose one method entry has {@code retry}. */
    static GrpcRetryClientProperties boundClient(GrpcRetryClientProperties.Retry retry) {
        GrpcRetryClientProperties.Method method = new GrpcRetryClientProperties.Method(
                List.of(new GrpcRetryClientProperties.Name("shop.Inventory", null)), null, null, null, null, retry, null);
        return new GrpcRetryClientProperties(new GrpcRetryClientProperties.ServiceConfig(List.of(method), null), null,
                null, null, null, null, null, null, null, null, null, null, null, null);
    }

    @Test
    void aBoundChannelAndBootsOwnShapeMapToTheSamePolicy() {
        RetryPolicy fromBound = policyOf(SpringBoundValues.client(boundClient(new GrpcRetryClientProperties.Retry(4,
                Duration.ofMillis(150), Duration.ofMillis(2500), 1.5,
                List.of(Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED), Duration.ofMillis(750)))));
        // Spring Boot 4's own service config: a Float multiplier and the codes as a set
        RetryProperties bootShape = RetryProperties.of(4, Duration.ofMillis(150), Duration.ofMillis(2500), 1.5f,
                Set.of(Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED), Duration.ofMillis(750));
        MethodProperties method = SpringBoundValues.method(List.of(new NameProperties("shop.Inventory", null)), null,
                null, null, null, bootShape, null);
        RetryPolicy fromBootShape = policyOf(new ClientProperties(new ServiceConfigProperties(List.of(method), null),
                null, null, null, null, null, null, null, null, null, null, null, null, null));
        RetryPolicySamples.assertHasEverySample(fromBound);
        assertThat(fromBootShape).isEqualTo(fromBound);
    }

    @Test
    void aBoundRetryPolicyMapsOnlyTheFieldsItSets() {
        ClientProperties mapped = SpringBoundValues.client(boundClient(
                new GrpcRetryClientProperties.Retry(3, null, null, null, null, null)));
        assertThat(mapped.serviceConfig().method().get(0).retry()).isEqualTo(new RetryProperties(3, null, null, null, null, null));
    }

    private static RetryPolicy policyOf(ClientProperties client) {
        return RetryConfigResolver.create().client("inventory", client).resolve().forChannel("inventory")
                .serviceConfig().methodConfigs().get(0).retryPolicy();
    }

    private static List<String> jsonNames() {
        List<String> out = new ArrayList<>();
        for (RetryPolicyField f : RetryPolicyField.values()) {
            out.add(f.jsonName());
        }
        return out;
    }
}
