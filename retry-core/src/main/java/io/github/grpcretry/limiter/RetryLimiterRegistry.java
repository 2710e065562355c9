package io.github.grpcretry.limiter;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.internal.callback.CallbackFailures;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryThrottlingPolicy;
import io.github.grpcretry.throttle.RetryThrottle;
import java.util.Collections;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * The per-channel retry limiters: one A6 throttle and one budget per channel, each where the
 * channel's configuration asks for it. The engine takes its limiters from here; meters, health and
 * the Actuator endpoint read them.
 */
public final class RetryLimiterRegistry {

    private final ConcurrentMap<String, RetryThrottle> throttles = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, RetryBudget> budgets = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<LimiterListener> listeners = new CopyOnWriteArrayList<>();

    /**
     * Told when a channel's throttle or budget is created (limiters are created lazily, when the
     * channel is built), so gauges can be bound for it. Called once per limiter on the thread that
     * created it, outside any lock; must be fast and must not throw.
     */
    public interface LimiterListener {

        default void throttleCreated(String channel, RetryThrottle throttle) {
        }

        default void budgetCreated(String channel, RetryBudget budget) {
        }
    }

    /**
     * Registers {@code listener} and replays the limiters that exist already. A limiter created while
     * the listener is being added may be reported twice; listeners must be idempotent.
     */
    public void addListener(LimiterListener listener) {
        listeners.add(listener);
        throttles.forEach(listener::throttleCreated);
        budgets.forEach(listener::budgetCreated);
    }

    public void removeListener(LimiterListener listener) {
        listeners.remove(listener);
    }

    /** The throttle of {@code channel}, created on first request from {@code policy}; none without a policy. */
    public Optional<RetryThrottle> throttle(String channel, @Nullable RetryThrottlingPolicy policy) {
        RetryThrottle existing = throttles.get(channel);
        if (existing != null || policy == null) {
            return Optional.ofNullable(existing);
        }
        RetryThrottle created = new RetryThrottle(policy);
        RetryThrottle raced = throttles.putIfAbsent(channel, created);
        if (raced != null) {
            return Optional.of(raced);
        }
        for (LimiterListener l : listeners) {
            try {
                l.throttleCreated(channel, created);
            } catch (RuntimeException e) {
                // a listener must never break the call that created the limiter (docs/design.md §14)
                CallbackFailures.SHARED.failed("LimiterListener", l, "throttleCreated", e, "the channel goes on");
            }
        }
        return Optional.of(created);
    }

    /** The budget of {@code channel}, created on first request from {@code policy}; none without a policy. */
    public Optional<RetryBudget> budget(String channel, @Nullable RetryBudgetPolicy policy) {
        RetryBudget existing = budgets.get(channel);
        if (existing != null || policy == null) {
            return Optional.ofNullable(existing);
        }
        RetryBudget created = new RetryBudget(policy);
        RetryBudget raced = budgets.putIfAbsent(channel, created);
        if (raced != null) {
            return Optional.of(raced);
        }
        for (LimiterListener l : listeners) {
            try {
                l.budgetCreated(channel, created);
            } catch (RuntimeException e) {
                // a listener must never break the call that created the limiter (docs/design.md §14)
                CallbackFailures.SHARED.failed("LimiterListener", l, "budgetCreated", e, "the channel goes on");
            }
        }
        return Optional.of(created);
    }

    /**
     * For a channel whose configuration changed at run time: keeps its throttle when {@code policy} has
     * the same max tokens and token ratio (its token level carries over), puts a new, full one in its place
     * when they differ (listeners are told, as for a created one), and drops it when {@code policy} is
     * absent. Calls already running keep the throttle they started with.
     *
     * @return the channel's throttle now; none without a policy
     */
    public Optional<RetryThrottle> replaceThrottle(String channel, @Nullable RetryThrottlingPolicy policy) {
        RetryThrottle existing = throttles.get(channel);
        if (policy == null) {
            throttles.remove(channel);
            return Optional.empty();
        }
        if (existing != null && existing.maxTokens() == policy.maxTokensMilli() / 1000.0
                && existing.tokenRatio() == policy.tokenRatioMilli() / 1000.0) {
            return Optional.of(existing);
        }
        throttles.remove(channel);
        return throttle(channel, policy);
    }

    /**
     * For a channel whose configuration changed at run time: keeps its budget when {@code policy} equals
     * the one it was made from (its window carries over), puts a new one in its place when it differs
     * (listeners are told) and drops it when {@code policy} is absent.
     *
     * @return the channel's budget now; none without a policy
     */
    public Optional<RetryBudget> replaceBudget(String channel, @Nullable RetryBudgetPolicy policy) {
        RetryBudget existing = budgets.get(channel);
        if (policy == null) {
            budgets.remove(channel);
            return Optional.empty();
        }
        if (existing != null && existing.policy().equals(policy)) {
            return Optional.of(existing);
        }
        budgets.remove(channel);
        return budget(channel, policy);
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
