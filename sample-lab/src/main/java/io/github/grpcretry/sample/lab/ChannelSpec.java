package io.github.grpcretry.sample.lab;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One client channel of a lab experiment: its address, its service config (retry, hedging, throttling)
 * and its other {@code grpc.retry.clients.<name>.*} settings, written out as the Spring properties a user
 * would put in application.yml. Which property names that takes is the Spring line's ({@link ChannelNaming}):
 * net.devh's {@code grpc.client.<name>.address} or Spring gRPC's {@code spring.grpc.client.channel.<name>.target},
 * and the service config under {@code grpc.retry.clients.<name>.service-config} or Spring Boot's own
 * {@code spring.grpc.client.channel.<name>.service-config}. Nothing else configures the engine: every
 * experiment goes through the starter's public properties.
 */
public final class ChannelSpec {

    private final String name;
    private final String address;
    private final Map<String, String> serviceConfig = new LinkedHashMap<>();
    private final Map<String, String> client = new LinkedHashMap<>();
    private boolean method;

    private ChannelSpec(String name, String address) {
        this.name = name;
        this.address = address;
    }

    public static ChannelSpec channel(String name, String address) {
        return new ChannelSpec(name, address);
    }

    public String name() {
        return name;
    }

    public String address() {
        return address;
    }

    private String method() {
        if (!method) {
            method = true;
            serviceConfig.put("method[0].name[0].service", "sample.flaky.Flaky");
        }
        return "method[0].";
    }

    /** A retry policy on every method of sample.flaky.Flaky, retrying UNAVAILABLE. */
    public ChannelSpec retry(int maxAttempts, String initialBackoff, String maxBackoff, double multiplier) {
        String m = method() + "retry.";
        serviceConfig.put(m + "max-attempts", Integer.toString(maxAttempts));
        serviceConfig.put(m + "initial-backoff", initialBackoff);
        serviceConfig.put(m + "max-backoff", maxBackoff);
        serviceConfig.put(m + "backoff-multiplier", Double.toString(multiplier));
        serviceConfig.put(m + "retryable-status-codes[0]", "UNAVAILABLE");
        return this;
    }

    /** A hedging policy on every method of sample.flaky.Flaky, UNAVAILABLE non-fatal. */
    public ChannelSpec hedging(int maxAttempts, String delay) {
        String m = method() + "hedging.";
        serviceConfig.put(m + "max-attempts", Integer.toString(maxAttempts));
        serviceConfig.put(m + "delay", delay);
        serviceConfig.put(m + "non-fatal-status-codes[0]", "UNAVAILABLE");
        return this;
    }

    public ChannelSpec throttling(String maxTokens, String tokenRatio) {
        serviceConfig.put("retrythrottling.max-tokens", maxTokens);
        serviceConfig.put("retrythrottling.token-ratio", tokenRatio);
        return this;
    }

    /** A retry budget; {@code minRetriesPerSecond} null keeps the starter's default floor. */
    public ChannelSpec budget(double ratio, Double minRetriesPerSecond) {
        client.put("budget.ratio", Double.toString(ratio));
        if (minRetriesPerSecond != null) {
            client.put("budget.min-retries-per-second", Double.toString(minRetriesPerSecond));
        }
        return this;
    }

    /** The budget's window ({@code budget.ttl}, e.g. {@code 60s}). */
    public ChannelSpec budgetTtl(String ttl) {
        client.put("budget.ttl", ttl);
        return this;
    }

    public ChannelSpec perRpcBufferLimit(String size) {
        client.put("per-rpc-buffer-limit", size);
        return this;
    }

    /** Any other {@code grpc.retry.clients.<name>.<retrySuffix>} setting. */
    public ChannelSpec property(String retrySuffix, String value) {
        client.put(retrySuffix, value);
        return this;
    }

    /** The property path of a service-config setting of this channel ({@code suffix} e.g. {@code method[0].retry.max-attempts}). */
    public String serviceConfigPath(ChannelNaming naming, String suffix) {
        return naming.serviceConfigPrefix(this) + suffix;
    }

    /** This channel as the Spring properties of the given line and route. */
    public Map<String, String> properties(ChannelNaming naming) {
        Map<String, String> props = new LinkedHashMap<>(naming.channel(this));
        serviceConfig.forEach((k, v) -> props.put(naming.serviceConfigPrefix(this) + k, v));
        client.forEach((k, v) -> props.put(naming.clientPrefix(this) + k, v));
        return Map.copyOf(props);
    }
}
