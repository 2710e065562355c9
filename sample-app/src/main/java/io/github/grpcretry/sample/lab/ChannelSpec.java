package io.github.grpcretry.sample.lab;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One net.devh client channel of a lab experiment, written out as the Spring properties a user would
 * put in application.yml ({@code grpc.client.<name>.*} and {@code grpc.retry.clients.<name>.*}).
 * Nothing else configures the engine: every experiment goes through the starter's public properties.
 */
public final class ChannelSpec {

    private final String name;
    private final Map<String, String> props = new LinkedHashMap<>();
    private int methodIndex = -1;

    private ChannelSpec(String name, String address) {
        this.name = name;
        props.put("grpc.client." + name + ".address", address);
        props.put("grpc.client." + name + ".negotiation-type", "plaintext");
    }

    public static ChannelSpec channel(String name, String address) {
        return new ChannelSpec(name, address);
    }

    public String name() {
        return name;
    }

    private String retryPrefix() {
        return "grpc.retry.clients." + name + ".";
    }

    private String method() {
        if (methodIndex < 0) {
            methodIndex = 0;
            props.put(retryPrefix() + "service-config.method[0].name[0].service", "sample.flaky.Flaky");
        }
        return retryPrefix() + "service-config.method[0].";
    }

    /** A retry policy on every method of sample.flaky.Flaky, retrying UNAVAILABLE. */
    public ChannelSpec retry(int maxAttempts, String initialBackoff, String maxBackoff, double multiplier) {
        String m = method() + "retry.";
        props.put(m + "max-attempts", Integer.toString(maxAttempts));
        props.put(m + "initial-backoff", initialBackoff);
        props.put(m + "max-backoff", maxBackoff);
        props.put(m + "backoff-multiplier", Double.toString(multiplier));
        props.put(m + "retryable-status-codes[0]", "UNAVAILABLE");
        return this;
    }

    /** A hedging policy on every method of sample.flaky.Flaky, UNAVAILABLE non-fatal. */
    public ChannelSpec hedging(int maxAttempts, String delay) {
        String m = method() + "hedging.";
        props.put(m + "max-attempts", Integer.toString(maxAttempts));
        props.put(m + "delay", delay);
        props.put(m + "non-fatal-status-codes[0]", "UNAVAILABLE");
        return this;
    }

    public ChannelSpec throttling(String maxTokens, String tokenRatio) {
        props.put(retryPrefix() + "service-config.retrythrottling.max-tokens", maxTokens);
        props.put(retryPrefix() + "service-config.retrythrottling.token-ratio", tokenRatio);
        return this;
    }

    /** A retry budget; {@code minRetriesPerSecond} null keeps the starter's default floor. */
    public ChannelSpec budget(double ratio, Double minRetriesPerSecond) {
        props.put(retryPrefix() + "budget.ratio", Double.toString(ratio));
        if (minRetriesPerSecond != null) {
            props.put(retryPrefix() + "budget.min-retries-per-second", Double.toString(minRetriesPerSecond));
        }
        return this;
    }

    public ChannelSpec perRpcBufferLimit(String size) {
        props.put(retryPrefix() + "per-rpc-buffer-limit", size);
        return this;
    }

    public ChannelSpec property(String retrySuffix, String value) {
        props.put(retryPrefix() + retrySuffix, value);
        return this;
    }

    public Map<String, String> properties() {
        return Map.copyOf(props);
    }
}
