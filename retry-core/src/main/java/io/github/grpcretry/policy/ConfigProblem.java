package io.github.grpcretry.policy;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One invalid configuration value.
 *
 * @param path where the value was set: a full property path
 *     ({@code grpc.retry.clients.inventory.service-config.method[0].retry.max-attempts}) or a file and
 *     its JSON path ({@code classpath:sc.json $.methodConfig[0].retryPolicy.maxAttempts})
 * @param value the value as given; absent when it is missing
 * @param rule what the value must satisfy
 * @param fix what to do about it
 */
public record ConfigProblem(String path, @Nullable String value, String rule, String fix) {

    public ConfigProblem {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(fix, "fix");
    }

    /** One line: {@code path = value: rule}. */
    public String describe() {
        return path + " = " + (value == null ? "(not set)" : value) + ": " + rule;
    }
}
