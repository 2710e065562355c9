package io.github.grpcretry.metrics;

/** The meter names and tag keys of docs/design.md §15: the public interface of the starter's metrics. */
public final class RetryMeterNames {

    /** Counter; client, method, kind, status: every attempt the engine started, by how it ended. */
    public static final String ATTEMPTS = "grpc.client.retry.attempts";
    /** gRFC A96 histogram (distribution summary); grpc.method, grpc.target: retries per call (0 is not recorded). */
    public static final String CALL_RETRIES = "grpc.client.call.retries";
    /** gRFC A96 histogram (distribution summary); grpc.method, grpc.target: hedges per call (0 is not recorded). */
    public static final String CALL_HEDGES = "grpc.client.call.hedges";
    /**
     * gRFC A96 histogram (distribution summary); grpc.method, grpc.target: streams grpc-java sent again
     * transparently per call (0 is not recorded).
     */
    public static final String CALL_TRANSPARENT_RETRIES = "grpc.client.call.transparent_retries";
    /** gRFC A96 histogram (timer, seconds); grpc.method, grpc.target: time a call had no attempt in flight. */
    public static final String CALL_RETRY_DELAY = "grpc.client.call.retry_delay";
    /** Counter; client, method, reason: a failed attempt that was not retried, by why. */
    public static final String SUPPRESSED = "grpc.client.retry.suppressed";
    /**
     * Counter; client, method, reason ({@code no_other_ready}, {@code picks_exhausted}): retries and hedges that went
     * to a backend their call had already tried.
     */
    public static final String BACKEND_REUSED = "grpc.client.retry.backend.reused";
    /** Gauge; client: current tokens of the channel's throttle. */
    public static final String TOKENS = "grpc.client.retry.tokens";
    /** Gauge; client: capacity of the channel's throttle. */
    public static final String TOKENS_MAX = "grpc.client.retry.tokens.max";
    /** Gauge; client: retries the budget permits now. */
    public static final String BUDGET_BALANCE = "grpc.client.retry.budget.balance";
    /** Timer; client, method: time left when a call with a deadline starts. */
    public static final String DEADLINE_REMAINING = "grpc.client.deadline.remaining";
    /** Counter; client, method: calls refused by {@code min-remaining}. */
    public static final String DEADLINE_FAST_FAIL = "grpc.client.deadline.fast_fail";
    /** Counter; method: responses the server-side guard marked "do not retry". */
    public static final String SERVER_GUARD = "grpc.server.retry.guard";
    /** Gauge; client, state: 1 for the channel's current connectivity state, 0 for the others. */
    public static final String CHANNEL_STATE = "grpc.client.channel.state";
    /** Counter; client, method, source: the delays before retries, by where they came from (policy, pushback, retry_info). */
    public static final String RETRY_DELAYS = "grpc.client.retry.delays";
    /** Gauge; client, method: the current adaptive hedging delay, in seconds. */
    public static final String HEDGING_DELAY = "grpc.client.hedging.delay";
    /** Counter; client, outcome (applied, rejected, restart_required): run-time changes of a channel's configuration. */
    public static final String CONFIG_RELOADS = "grpc.client.retry.config.reloads";

    public static final String TAG_CLIENT = "client";
    public static final String TAG_METHOD = "method";
    public static final String TAG_KIND = "kind";
    public static final String TAG_STATUS = "status";
    public static final String TAG_REASON = "reason";
    public static final String TAG_STATE = "state";
    public static final String TAG_SOURCE = "source";
    public static final String TAG_OUTCOME = "outcome";
    /** gRFC A66's method attribute of the A96 meters: the full method name, {@code other} for a non-generated one. */
    public static final String TAG_GRPC_METHOD = "grpc.method";
    /** gRFC A66's target attribute of the A96 meters: the channel's canonical target URI. */
    public static final String TAG_GRPC_TARGET = "grpc.target";

    private RetryMeterNames() {
    }
}
