package io.github.grpcretry.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.internal.config.RetryPolicyField;
import io.github.grpcretry.policy.RetryPolicy;
import io.grpc.Status;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One valid value, different from any default, for every retry-policy field, as a property value to
 * bind ({@code 150ms}) and as the value the policy must then have: the round trips of both Spring Boot
 * lines and of retry-core set every field of the field table through these. A new field needs a sample
 * here (the check below fails until it has one).
 */
public final class RetryPolicySamples {

    /** Property name, the text a property source gives, the value the bound properties hold. */
    public record Sample(String property, String text, Object bound) {
    }

    private static final List<Sample> SAMPLES = List.of(
            new Sample("max-attempts", "4", 4),
            new Sample("initial-backoff", "150ms", Duration.ofMillis(150)),
            new Sample("max-backoff", "2500ms", Duration.ofMillis(2500)),
            new Sample("backoff-multiplier", "1.5", 1.5),
            new Sample("retryable-status-codes", "unavailable,RESOURCE_EXHAUSTED", List.of("unavailable", "RESOURCE_EXHAUSTED")),
            new Sample("per-attempt-receive-timeout", "750ms", Duration.ofMillis(750)));

    private RetryPolicySamples() {
    }

    /** A sample of every field of the table, in the table's order. */
    public static List<Sample> all() {
        assertThat(SAMPLES).extracting(Sample::property).as("a sample for every retry-policy field, in table order")
                .containsExactly(propertyNames());
        return SAMPLES;
    }

    /** Every field's property name, in the table's order. */
    public static String[] propertyNames() {
        RetryPolicyField[] fields = RetryPolicyField.values();
        String[] names = new String[fields.length];
        for (int i = 0; i < fields.length; i++) {
            names[i] = fields[i].propertyName();
        }
        return names;
    }

    /** Every sample as bound values, by property name. */
    public static Map<String, Object> bound() {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Sample s : all()) {
            out.put(s.property(), s.bound());
        }
        return out;
    }

    /** Every sample as properties under {@code prefix} ({@code ...method[0].retry}). */
    public static Map<String, String> properties(String prefix) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Sample s : all()) {
            out.put(prefix + "." + s.property(), s.text());
        }
        return out;
    }

    /** The policy the samples make. */
    public static RetryPolicy expected() {
        return new RetryPolicy(4, Duration.ofMillis(150), Duration.ofMillis(2500), 1.5,
                EnumSet.of(Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED), Duration.ofMillis(750));
    }

    /**
     * Checks that {@code policy} has the sample's value of each field whose Java name is in
     * {@code javaNames} and no value for the others (optional fields a framework's type lacks).
     */
    public static void assertHasSamplesOf(RetryPolicy policy, java.util.Set<String> javaNames) {
        RetryPolicy expected = expected();
        for (RetryPolicyField f : RetryPolicyField.values()) {
            if (javaNames.contains(f.javaName())) {
                assertThat(f.value(policy)).as(f.propertyName()).isNotNull().isEqualTo(f.value(expected));
            } else {
                assertThat(f.value(policy)).as(f.propertyName() + " (not in the bound type)").isNull();
            }
        }
    }

    /** The Java name of the field with this property name. */
    public static String javaName(String property) {
        return RetryPolicyField.byPropertyName(property).javaName();
    }

    /** Checks that {@code policy} has every sample's value, field by field (each field named on failure). */
    public static void assertHasEverySample(RetryPolicy policy) {
        RetryPolicy expected = expected();
        for (RetryPolicyField f : RetryPolicyField.values()) {
            assertThat(f.value(policy)).as(f.propertyName()).isNotNull().isEqualTo(f.value(expected));
        }
        assertThat(policy).isEqualTo(expected);
    }
}
