package io.github.grpcretry.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What grpc-java's channel gets when the interceptor engine does the retrying. */
class ServiceConfigWithoutRetryTest {

    private static final RetryPolicy RETRY = new RetryPolicy(3, Duration.ofMillis(50), Duration.ofSeconds(1), 2,
            Set.of(Status.Code.UNAVAILABLE), null);

    private static MethodConfig entry(MethodName name, Duration timeout, RetryPolicy retry) {
        return new MethodConfig(List.of(name), null, timeout, null, null, retry, null);
    }

    @Test
    void namesOnlyEntriesAreDroppedWhenNothingBroaderHasSettings() {
        ServiceConfig sc = new ServiceConfig(List.of(entry(MethodName.of("shop.Inventory", null), null, RETRY)),
                new RetryThrottlingPolicy(10, 0.1));
        ServiceConfig stripped = sc.withoutRetry();
        assertThat(stripped.methodConfigs()).isEmpty();
        assertThat(stripped.retryThrottling()).isNull();
        assertThat(stripped.toServiceConfigMap(false)).isEmpty();
    }

    @Test
    void namesOnlyEntryIsKeptWhereABroaderEntryWouldTakeItsCalls() {
        MethodConfig exact = entry(MethodName.of("shop.Inventory", "Reserve"), null, RETRY);
        MethodConfig fallback = entry(MethodName.DEFAULT, Duration.ofSeconds(5), null);
        ServiceConfig stripped = new ServiceConfig(List.of(exact, fallback), null).withoutRetry();
        // Reserve keeps "no timeout"; every other method keeps the default's 5 s
        assertThat(stripped.find("shop.Inventory", "Reserve").timeout()).isNull();
        assertThat(stripped.find("shop.Inventory", "List").timeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(stripped.methodConfigs()).hasSize(2);
    }

    @Test
    void settingsOtherThanRetryAreKept() {
        MethodConfig withTimeout = entry(MethodName.of("shop.Inventory", null), Duration.ofSeconds(2), RETRY);
        ServiceConfig stripped = new ServiceConfig(List.of(withTimeout), null).withoutRetry();
        assertThat(stripped.methodConfigs()).hasSize(1);
        assertThat(stripped.methodConfigs().get(0).retryPolicy()).isNull();
        assertThat(stripped.methodConfigs().get(0).timeout()).isEqualTo(Duration.ofSeconds(2));
    }
}
