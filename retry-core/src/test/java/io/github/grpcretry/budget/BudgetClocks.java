package io.github.grpcretry.budget;

import io.github.grpcretry.policy.RetryBudgetPolicy;
import java.util.function.LongSupplier;

/** Budgets on a clock a test moves, for tests outside this package (test sources only). */
public final class BudgetClocks {

    private BudgetClocks() {
    }

    /** A budget of {@code policy} that reads {@code nanoClock} instead of {@link System#nanoTime()}. */
    public static RetryBudget budget(RetryBudgetPolicy policy, LongSupplier nanoClock) {
        return new RetryBudget(policy, nanoClock);
    }
}
