package io.github.grpcretry.limiter;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.throttle.RetryThrottle;
import java.util.Collections;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The per-channel retry limiters: one A6 throttle and one budget per channel, each where the
 * channel's configuration asks for it. The engine takes its limiters from here; meters, health and
 * the Actuator endpoint read them.
 */
public final class RetryLimiterRegistry {

    private final ConcurrentMap<String, RetryThrottle> throttles = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, RetryBudget> budgets = new ConcurrentHashMap<>();

    /** The throttle of {@code channel}, created on first request from {@code policy}; none when policy is null. */
    public Optional<RetryThrottle> throttle(String channel, RetryThrottlingPolicy policy) {
        if (policy == null) {
            return Optional.ofNullable(throttles.get(channel));
        }
        return Optional.of(throttles.computeIfAbsent(channel, c -> new RetryThrottle(policy)));
    }

    /** The budget of {@code channel}, created on first request from {@code policy}; none when policy is null. */
    public Optional<RetryBudget> budget(String channel, RetryBudgetPolicy policy) {
        if (policy == null) {
            return Optional.ofNullable(budgets.get(channel));
        }
        return Optional.of(budgets.computeIfAbsent(channel, c -> new RetryBudget(policy)));
    }

    /** The throttle of {@code channel}, if it has one. */
    public Optional<RetryThrottle> throttle(String channel) {
        return Optional.ofNullable(throttles.get(channel));
    }

    /** The budget of {@code channel}, if it has one. */
    public Optional<RetryBudget> budget(String channel) {
        return Optional.ofNullable(budgets.get(channel));
    }

    /** Channels with a throttle or a budget, sorted. */
    public Set<String> channels() {
        Set<String> names = new TreeSet<>(throttles.keySet());
        names.addAll(budgets.keySet());
        return Collections.unmodifiableSet(names);
    }

    /** Whether any channel is refusing retries because of its throttle now. */
    public boolean isAnyThrottling() {
        for (RetryThrottle t : throttles.values()) {
            if (t.isThrottling()) {
                return true;
            }
        }
        return false;
    }
}
