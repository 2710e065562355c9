package io.github.grpcretry.internal.config;

import java.util.HashMap;
import java.util.Map;

/**
 * How a field is spelled where it was configured: the gRPC service-config JSON
 * ({@code retryPolicy.maxAttempts}) or the Spring properties ({@code retry.max-attempts}).
 */
public enum ConfigNaming {
    JSON,
    PROPERTIES;

    /** JSON name to property name: the retry-policy fields come from {@link RetryPolicyField}. */
    private static final Map<String, String> PROPERTY_NAMES = propertyNames(Map.ofEntries(
            Map.entry("name", "name"),
            Map.entry("service", "service"),
            Map.entry("method", "method"),
            Map.entry("waitForReady", "wait-for-ready"),
            Map.entry("timeout", "timeout"),
            Map.entry("maxRequestMessageBytes", "max-request-message"),
            Map.entry("maxResponseMessageBytes", "max-response-message"),
            Map.entry("retryPolicy", "retry"),
            Map.entry("hedgingPolicy", "hedging"),
            Map.entry("retryThrottling", "retrythrottling"),
            Map.entry("maxAttempts", "max-attempts"),
            Map.entry("hedgingDelay", "delay"),
            Map.entry("nonFatalStatusCodes", "non-fatal-status-codes"),
            Map.entry("maxTokens", "max-tokens"),
            Map.entry("tokenRatio", "token-ratio")));

    private static Map<String, String> propertyNames(Map<String, String> others) {
        Map<String, String> all = new HashMap<>(others);
        for (RetryPolicyField f : RetryPolicyField.values()) {
            String previous = all.put(f.jsonName(), f.propertyName());
            if (previous != null && !previous.equals(f.propertyName())) {
                throw new IllegalStateException(f.jsonName() + " has two property names: " + previous + ", " + f.propertyName());
            }
        }
        return Map.copyOf(all);
    }

    /** The name of the field called {@code jsonName} in the JSON service config, in this naming. */
    public String name(String jsonName) {
        if (this == JSON) {
            return jsonName;
        }
        String n = PROPERTY_NAMES.get(jsonName);
        if (n == null) {
            throw new IllegalArgumentException("no property name for " + jsonName);
        }
        return n;
    }

    /** {@code parentPath.<name of jsonName>}. */
    public String child(String parentPath, String jsonName) {
        return parentPath + "." + name(jsonName);
    }
}
