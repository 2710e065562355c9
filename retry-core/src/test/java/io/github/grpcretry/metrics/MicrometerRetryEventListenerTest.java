package io.github.grpcretry.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.DelaySource;
import io.github.grpcretry.attempt.SuppressionReason;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The per-call meters of docs/design.md §15: exact names, types, tag keys and values. */
class MicrometerRetryEventListenerTest {

    private static final String TARGET = "dns:///inventory.shop:443";
    private static final CallTarget INV = new CallTarget("inventory", "shop.Inventory/Reserve", TARGET, true);
    private static final CallTarget INV_LIST = new CallTarget("inventory", "shop.Inventory/List", TARGET, true);

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MicrometerRetryEventListener listener = new MicrometerRetryEventListener(registry);

    /** A call of three attempts (two UNAVAILABLE, then OK), as the engine reports it. */
    private void retriedCall(CallTarget t, long delayNanos) {
        listener.callStarted(t);
        listener.attemptStarted(t, AttemptKind.INITIAL, 1);
        listener.attemptEnded(t, AttemptKind.INITIAL, 1, Status.Code.UNAVAILABLE);
        listener.retryScheduled(t, 2, delayNanos / 2, DelaySource.POLICY);
        listener.attemptStarted(t, AttemptKind.RETRY, 2);
        listener.attemptEnded(t, AttemptKind.RETRY, 2, Status.Code.UNAVAILABLE);
        listener.retryScheduled(t, 3, delayNanos / 2, DelaySource.POLICY);
        listener.attemptStarted(t, AttemptKind.RETRY, 3);
        listener.committed(t, 3);
        listener.attemptEnded(t, AttemptKind.RETRY, 3, Status.Code.OK);
        listener.callEnded(t, Status.Code.OK, 2, 0, 0, delayNanos);
    }

    @Test
    void attemptsCountedByKindAndFinalStatusWithContractTags() {
        retriedCall(INV, 300_000_000L);
        retriedCall(INV, 100_000_000L);

        Collection<Meter> attempts = registry.find("grpc.client.retry.attempts").meters();
        assertThat(attempts).hasSize(3).allMatch(m -> m instanceof Counter);
        for (Meter m : attempts) {
            assertThat(tagKeys(m)).containsExactly("client", "kind", "method", "status");
        }
        assertThat(counter("grpc.client.retry.attempts", "client", "inventory", "method", "shop.Inventory/Reserve",
                "kind", "initial", "status", "UNAVAILABLE")).isEqualTo(2.0);
        assertThat(counter("grpc.client.retry.attempts", "client", "inventory", "method", "shop.Inventory/Reserve",
                "kind", "retry", "status", "UNAVAILABLE")).isEqualTo(2.0);
        assertThat(counter("grpc.client.retry.attempts", "client", "inventory", "method", "shop.Inventory/Reserve",
                "kind", "retry", "status", "OK")).isEqualTo(2.0);
        assertThat(registry.get("grpc.client.retry.attempts").meter().getId().getBaseUnit()).isEqualTo("attempts");
    }

    @Test
    void retriesPerCallAndRetryDelayAreRecordedOncePerRetriedCall() {
        retriedCall(INV, 300_000_000L);
        retriedCall(INV, 100_000_000L);

        DistributionSummary retries = registry.get("grpc.client.call.retries")
                .tags("grpc.method", "shop.Inventory/Reserve", "grpc.target", TARGET).summary();
        assertThat(tagKeys(retries)).containsExactly("grpc.method", "grpc.target");
        assertThat(retries.count()).isEqualTo(2);
        assertThat(retries.totalAmount()).isEqualTo(4.0);
        assertThat(retries.max()).isEqualTo(2.0);

        Timer delay = registry.get("grpc.client.call.retry_delay")
                .tags("grpc.method", "shop.Inventory/Reserve", "grpc.target", TARGET).timer();
        assertThat(tagKeys(delay)).containsExactly("grpc.method", "grpc.target");
        assertThat(delay.count()).isEqualTo(2);
        assertThat(delay.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(400.0);
        assertThat(registry.find("grpc.client.call.hedges").meters()).isEmpty();
    }

    @Test
    void callsWithoutRetriesRecordNoZeroCountsButTheirDelay() {
        for (int i = 0; i < 5; i++) {
            listener.callStarted(INV_LIST);
            listener.attemptStarted(INV_LIST, AttemptKind.INITIAL, 1);
            listener.attemptEnded(INV_LIST, AttemptKind.INITIAL, 1, Status.Code.OK);
            listener.callEnded(INV_LIST, Status.Code.OK, 0, 0, 0, 0);
        }
        assertThat(counter("grpc.client.retry.attempts", "client", "inventory", "method", "shop.Inventory/List",
                "kind", "initial", "status", "OK")).isEqualTo(5.0);
        assertThat(registry.find("grpc.client.call.retries").meters()).isEmpty();
        assertThat(registry.find("grpc.client.call.hedges").meters()).isEmpty();
        assertThat(registry.find("grpc.client.call.transparent_retries").meters()).isEmpty();
        Timer delay = registry.get("grpc.client.call.retry_delay").timer();
        assertThat(delay.count()).isEqualTo(5);
        assertThat(delay.totalTime(TimeUnit.NANOSECONDS)).isZero();
    }

    @Test
    void transparentRetriesPerCallAreRecordedWhenThereWereAny() {
        listener.callEnded(INV, Status.Code.OK, 0, 0, 2, 0);
        listener.callEnded(INV, Status.Code.OK, 1, 0, 1, 5_000_000L);
        listener.callEnded(INV, Status.Code.OK, 0, 0, 0, 0);

        DistributionSummary transparent = registry.get("grpc.client.call.transparent_retries")
                .tags("grpc.method", "shop.Inventory/Reserve", "grpc.target", TARGET).summary();
        assertThat(transparent.count()).isEqualTo(2);
        assertThat(transparent.totalAmount()).isEqualTo(3.0);
        assertThat(registry.get("grpc.client.call.retries").summary().count()).isEqualTo(1);
        assertThat(registry.get("grpc.client.call.retry_delay").timer().count()).isEqualTo(3);
    }

    @Test
    void methodsNotFromGeneratedCodeAreRecordedAsOther() {
        listener.callEnded(new CallTarget("inventory", "shop.Inventory/Dynamic1", TARGET, false), Status.Code.OK, 1, 0, 0, 0);
        listener.callEnded(new CallTarget("inventory", "shop.Inventory/Dynamic2", TARGET, false), Status.Code.OK, 2, 0, 0, 0);

        DistributionSummary retries = registry.get("grpc.client.call.retries").summary();
        assertThat(registry.find("grpc.client.call.retries").meters()).hasSize(1);
        assertThat(retries.getId().getTag("grpc.method")).isEqualTo("other");
        assertThat(retries.count()).isEqualTo(2);
        assertThat(retries.totalAmount()).isEqualTo(3.0);
    }

    @Test
    void hedgesPerCallAreASummaryOfHedgedAttempts() {
        listener.callStarted(INV);
        listener.attemptStarted(INV, AttemptKind.INITIAL, 1);
        listener.attemptStarted(INV, AttemptKind.HEDGE, 2);
        listener.attemptStarted(INV, AttemptKind.HEDGE, 3);
        listener.attemptEnded(INV, AttemptKind.HEDGE, 3, Status.Code.OK);
        listener.attemptEnded(INV, AttemptKind.INITIAL, 1, Status.Code.CANCELLED);
        listener.attemptEnded(INV, AttemptKind.HEDGE, 2, Status.Code.CANCELLED);
        listener.callEnded(INV, Status.Code.OK, 0, 2, 0, 0);

        DistributionSummary hedges = registry.get("grpc.client.call.hedges")
                .tags("grpc.method", "shop.Inventory/Reserve", "grpc.target", TARGET).summary();
        assertThat(tagKeys(hedges)).containsExactly("grpc.method", "grpc.target");
        assertThat(hedges.count()).isEqualTo(1);
        assertThat(hedges.totalAmount()).isEqualTo(2.0);
        assertThat(counter("grpc.client.retry.attempts", "client", "inventory", "method", "shop.Inventory/Reserve",
                "kind", "hedge", "status", "CANCELLED")).isEqualTo(1.0);
        assertThat(counter("grpc.client.retry.attempts", "client", "inventory", "method", "shop.Inventory/Reserve",
                "kind", "hedge", "status", "OK")).isEqualTo(1.0);
        assertThat(registry.find("grpc.client.call.retries").meters()).isEmpty();
        // hedged calls record their delay too (here: never without an open attempt)
        assertThat(registry.get("grpc.client.call.retry_delay").timer().count()).isEqualTo(1);
    }

    @Test
    void everySuppressionReasonHasItsContractTagValue() {
        SuppressionReason[] reasons = SuppressionReason.values();
        for (int i = 0; i < reasons.length; i++) {
            for (int n = 0; n <= i; n++) {
                listener.retrySuppressed(INV, reasons[i], Status.Code.UNAVAILABLE);
            }
        }
        Set<String> tagValues = registry.find("grpc.client.retry.suppressed").counters().stream()
                .map(c -> c.getId().getTag("reason")).collect(Collectors.toCollection(TreeSet::new));
        assertThat(tagValues).containsExactlyInAnyOrder("non_retryable_status", "max_attempts", "throttled", "budget",
                "max_extra_load", "pushback", "deadline", "committed", "buffer_limit", "resume_refused");
        for (Counter c : registry.find("grpc.client.retry.suppressed").counters()) {
            assertThat(tagKeys(c)).containsExactly("client", "method", "reason");
        }
        for (int i = 0; i < reasons.length; i++) {
            assertThat(counter("grpc.client.retry.suppressed", "client", "inventory", "method",
                    "shop.Inventory/Reserve", "reason", reasons[i].tagValue())).isEqualTo(i + 1.0);
        }
    }

    @Test
    void retriesAndHedgesSentToATriedBackendAreCountedByReason() {
        listener.backendReused(INV, AttemptKind.RETRY, 2, "no_other_ready");
        listener.backendReused(INV, AttemptKind.HEDGE, 3, "no_other_ready");
        listener.backendReused(INV, AttemptKind.RETRY, 3, "picks_exhausted");

        assertThat(counter("grpc.client.retry.backend.reused", "client", "inventory", "method", "shop.Inventory/Reserve",
                "reason", "no_other_ready")).isEqualTo(2.0);
        assertThat(counter("grpc.client.retry.backend.reused", "client", "inventory", "method", "shop.Inventory/Reserve",
                "reason", "picks_exhausted")).isEqualTo(1.0);
        for (Counter c : registry.find(RetryMeterNames.BACKEND_REUSED).counters()) {
            assertThat(tagKeys(c)).containsExactly("client", "method", "reason");
        }
    }

    @Test
    void metersAreRegisteredOnceAndReusedOnTheHotPath() {
        retriedCall(INV, 1_000_000L);
        int meters = registry.getMeters().size();
        Counter first = registry.get("grpc.client.retry.attempts").tags("kind", "retry", "status", "OK").counter();
        for (int i = 0; i < 100; i++) {
            // an equal but distinct target still hits the cache
            retriedCall(new CallTarget("inventory", "shop.Inventory/Reserve", TARGET, true), 1_000_000L);
        }
        assertThat(registry.getMeters()).hasSize(meters);
        assertThat(registry.get("grpc.client.retry.attempts").tags("kind", "retry", "status", "OK").counter())
                .isSameAs(first);
        assertThat(first.count()).isEqualTo(101.0);
    }

    @Test
    void deadlineAndGuardMetersHaveTheContractNamesAndTags() {
        DeadlineMeters deadlines = new DeadlineMeters(registry);
        GuardMeters guard = new GuardMeters(registry);
        deadlines.recordRemaining(INV, 250_000_000L);
        deadlines.recordRemaining("inventory", "shop.Inventory/Reserve", 750_000_000L);
        deadlines.fastFail(INV);
        deadlines.fastFail("inventory", "shop.Inventory/Reserve");
        deadlines.fastFail("inventory", "shop.Inventory/List");
        guard.marked("shop.Orders/Place");
        guard.marked("shop.Orders/Place");

        Timer remaining = registry.get("grpc.client.deadline.remaining")
                .tags("client", "inventory", "method", "shop.Inventory/Reserve").timer();
        assertThat(tagKeys(remaining)).containsExactly("client", "method");
        assertThat(remaining.count()).isEqualTo(2);
        assertThat(remaining.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(1000.0);
        assertThat(remaining.max(TimeUnit.MILLISECONDS)).isEqualTo(750.0);

        assertThat(counter("grpc.client.deadline.fast_fail", "client", "inventory", "method",
                "shop.Inventory/Reserve")).isEqualTo(2.0);
        assertThat(counter("grpc.client.deadline.fast_fail", "client", "inventory", "method",
                "shop.Inventory/List")).isEqualTo(1.0);
        Counter marked = registry.get("grpc.server.retry.guard").counter();
        assertThat(tagKeys(marked)).containsExactly("method");
        assertThat(marked.getId().getTag("method")).isEqualTo("shop.Orders/Place");
        assertThat(marked.count()).isEqualTo(2.0);
    }

    private double counter(String name, String... tags) {
        return registry.get(name).tags(tags).counter().count();
    }

    private static Set<String> tagKeys(Meter m) {
        return m.getId().getTags().stream().map(Tag::getKey).collect(Collectors.toCollection(TreeSet::new));
    }
}
