package io.github.grpcretry.sample.demo;

/**
 * The strategies the demo can switch between. Each is one net.devh channel, configured only in
 * application.yml under grpc.retry.clients.&lt;channel&gt;; switching strategy switches the channel
 * the traffic generator calls.
 */
public enum DemoStrategy {
    NONE("none", "flaky-none", "no retry policy"),
    RETRY("retry", "flaky-retry", "retryPolicy: 3 attempts, exponential backoff, 500 ms per attempt"),
    THROTTLED("retry + throttling", "flaky-throttled", "retryPolicy + retryThrottling (max-tokens 10, token-ratio 0.1)"),
    BUDGET("retry + budget", "flaky-budget", "retryPolicy + retry budget (10 % of calls, floor 1 retry/s)"),
    HEDGING("hedging", "flaky-hedging", "hedgingPolicy: up to 3 attempts; adaptive delay, the p90 of recent latency (100 ms until 100 calls)");

    private final String label;
    private final String channel;
    private final String description;

    DemoStrategy(String label, String channel, String description) {
        this.label = label;
        this.channel = channel;
        this.description = description;
    }

    public String label() {
        return label;
    }

    public String channel() {
        return channel;
    }

    public String description() {
        return description;
    }
}
