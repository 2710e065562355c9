package io.github.grpcretry.internal.config;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A {@code retryPolicy} as configured, not yet validated: every field ({@link RetryPolicyField}) may be
 * missing.
 *
 * @param path the path of the policy object ({@code ...method[0].retry} or {@code ... $.methodConfig[0].retryPolicy})
 * @param values the fields that are set, each with where it was set
 */
public record RetryPolicyDraft(String path, ConfigNaming naming, Map<RetryPolicyField, Sourced<?>> values) {

    public RetryPolicyDraft {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(naming, "naming");
        EnumMap<RetryPolicyField, Sourced<?>> copy = new EnumMap<>(RetryPolicyField.class);
        copy.putAll(values);
        values = Collections.unmodifiableMap(copy);
    }

    /** The value of {@code field} and where it was set; null when it is not set. */
    @SuppressWarnings("unchecked")
    public <T> @Nullable Sourced<T> get(RetryPolicyField field) {
        return (Sourced<T>) values.get(field);
    }

    public @Nullable Sourced<Integer> maxAttempts() {
        return get(RetryPolicyField.MAX_ATTEMPTS);
    }

    /** Whether no field is set. */
    public boolean isEmpty() {
        return values.isEmpty();
    }

    /** This draft's fields where set, {@code under}'s elsewhere; this draft's path and naming. */
    public RetryPolicyDraft overlay(@Nullable RetryPolicyDraft under) {
        if (under == null) {
            return this;
        }
        Map<RetryPolicyField, Sourced<?>> merged = new EnumMap<>(RetryPolicyField.class);
        merged.putAll(under.values);
        merged.putAll(values);
        return new RetryPolicyDraft(path, naming, merged);
    }

    String field(String jsonName) {
        return naming.child(path, jsonName);
    }
}
