package io.github.grpcretry.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.internal.time.Durations;
import io.grpc.Status;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The policy records check their own invariants, whoever builds them; the shared duration rules. */
class PolicyInvariantsTest {

    private static final Duration MS = Duration.ofMillis(1);
    private static final Set<Status.Code> UNAVAILABLE = Set.of(Status.Code.UNAVAILABLE);

    @Test
    void retryPolicyRejectsWhatNoConfigurationCouldMean() {
        assertThatThrownBy(() -> new RetryPolicy(0, MS, MS, 2, UNAVAILABLE, null)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> new RetryPolicy(3, Duration.ZERO, MS, 2, UNAVAILABLE, null)).hasMessageContaining("initialBackoff");
        assertThatThrownBy(() -> new RetryPolicy(3, MS, MS.negated(), 2, UNAVAILABLE, null)).hasMessageContaining("maxBackoff");
        assertThatThrownBy(() -> new RetryPolicy(3, MS, MS, 0, UNAVAILABLE, null)).hasMessageContaining("backoffMultiplier");
        assertThatThrownBy(() -> new RetryPolicy(3, MS, MS, 2, Set.of(), null)).hasMessageContaining("retryableStatusCodes");
        assertThatThrownBy(() -> new RetryPolicy(3, MS, MS, 2, Set.of(Status.Code.OK), null)).hasMessageContaining("OK");
        assertThatThrownBy(() -> new RetryPolicy(3, MS, MS, 2, UNAVAILABLE, Duration.ZERO)).hasMessageContaining("perAttemptReceiveTimeout");
        // one attempt is a valid record: what a channel cap of 1 makes of any policy
        assertThat(new RetryPolicy(3, MS, MS, 2, UNAVAILABLE, null).capped(1).maxAttempts()).isEqualTo(1);
    }

    @Test
    void hedgingPolicyAndThrottlingRejectTheirInvalidValues() {
        assertThatThrownBy(() -> new HedgingPolicy(0, MS, UNAVAILABLE)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> new HedgingPolicy(2, MS.negated(), UNAVAILABLE)).hasMessageContaining("hedgingDelay");
        assertThatThrownBy(() -> new HedgingPolicy(2, MS, Set.of(Status.Code.OK))).hasMessageContaining("OK");
        assertThat(new HedgingPolicy(2, Duration.ZERO, Set.of()).hedgingDelay()).isZero();
        assertThatThrownBy(() -> new RetryThrottlingPolicy(0, 0.1)).hasMessageContaining("maxTokens");
        assertThatThrownBy(() -> new RetryThrottlingPolicy(1001, 0.1)).hasMessageContaining("maxTokens");
        assertThatThrownBy(() -> new RetryThrottlingPolicy(10, 0.0004)).hasMessageContaining("tokenRatio");
        assertThat(new RetryThrottlingPolicy(1000, 0.001).maxTokensMilli()).isEqualTo(1_000_000);
    }

    @Test
    void durationsHaveOneRuleAndOneFormat() {
        assertThat(Durations.fitsInNanos(Durations.MAX)).isTrue();
        assertThat(Durations.fitsInNanos(Durations.MAX.plusNanos(1))).isFalse();
        assertThat(Durations.fitsInNanos(Durations.MAX.negated().minusNanos(1))).isFalse();
        assertThat(Durations.saturatedNanos(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
        assertThat(Durations.saturatedNanos(Duration.ofSeconds(Long.MIN_VALUE))).isEqualTo(Long.MIN_VALUE);
        assertThat(Durations.toJson(Duration.ofMillis(50))).isEqualTo("0.05s");
        assertThat(Durations.toJson(Duration.ofMillis(-1500))).isEqualTo("-1.5s");
        assertThat(Durations.toJson(Durations.MAX)).isEqualTo("9223372036.854775807s");
    }
}
