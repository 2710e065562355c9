package io.github.grpcretry.archfixture.app;

import io.github.grpcretry.throttle.RetryThrottle;

/** A good class for ArchitectureRulesTest: application code using an API type only. */
public final class UsesApi {

    public static double tokens(RetryThrottle throttle) {
        return throttle.tokens();
    }

    private UsesApi() {
    }
}
