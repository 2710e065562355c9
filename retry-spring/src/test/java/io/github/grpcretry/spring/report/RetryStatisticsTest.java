package io.github.grpcretry.spring.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.SuppressionReason;
import io.github.grpcretry.metrics.MicrometerRetryEventListener;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RetryStatisticsTest {

    private static final CallTarget A = new CallTarget("a", "pkg.S/M");
    private static final CallTarget B = new CallTarget("b", "pkg.S/M");

    @Test
    void countsPerChannelSinceStart() {
        RetryStatistics stats = new RetryStatistics();
        stats.callStarted(A);
        stats.attemptStarted(A, AttemptKind.INITIAL, 1);
        stats.retrySuppressed(A, SuppressionReason.THROTTLED, Status.Code.UNAVAILABLE);
        stats.callEnded(A, Status.Code.UNAVAILABLE, 0, 0, 0, 0);
        stats.callStarted(A);
        stats.attemptStarted(A, AttemptKind.INITIAL, 1);
        stats.attemptStarted(A, AttemptKind.RETRY, 2);
        stats.callEnded(A, Status.Code.OK, 1, 0, 0, 0);
        stats.callStarted(B);
        stats.attemptStarted(B, AttemptKind.INITIAL, 1);
        stats.attemptStarted(B, AttemptKind.HEDGE, 2);
        stats.attemptStarted(B, AttemptKind.HEDGE, 3);
        stats.retrySuppressed(B, SuppressionReason.BUDGET, Status.Code.UNAVAILABLE);
        stats.callEnded(B, Status.Code.OK, 0, 2, 0, 0);

        assertThat(stats.channels()).containsExactly("a", "b");
        RetryStatistics.ChannelCounts a = stats.counts("a");
        assertThat(a.calls()).isEqualTo(2);
        assertThat(a.failedCalls()).isEqualTo(1);
        assertThat(a.attempts()).isEqualTo(3);
        assertThat(a.retries()).isEqualTo(1);
        assertThat(a.hedges()).isZero();
        assertThat(a.suppressed(SuppressionReason.THROTTLED)).isEqualTo(1);
        assertThat(a.suppressed()).containsOnlyKeys("non_retryable_status", "max_attempts", "throttled", "budget",
                "max_extra_load", "pushback", "deadline", "committed", "buffer_limit", "resume_refused");
        RetryStatistics.ChannelCounts b = stats.counts("b");
        assertThat(b.attempts()).isEqualTo(3);
        assertThat(b.hedges()).isEqualTo(2);
        assertThat(b.suppressed(SuppressionReason.BUDGET)).isEqualTo(1);
        assertThat(stats.counts("unknown").calls()).isZero();
    }

    @Test
    void concurrentEventsAreAllCounted() throws Exception {
        RetryStatistics stats = new RetryStatistics();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch go = new CountDownLatch(1);
        List<java.util.concurrent.Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            futures.add(pool.submit(() -> {
                go.await();
                for (int i = 0; i < 10_000; i++) {
                    stats.callStarted(A);
                    stats.attemptStarted(A, AttemptKind.RETRY, 2);
                }
                return null;
            }));
        }
        go.countDown();
        for (var f : futures) {
            f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(stats.counts("a").calls()).isEqualTo(40_000);
        assertThat(stats.counts("a").retries()).isEqualTo(40_000);
    }

    @Test
    void compositeHandsEveryEventOnAndSurvivesAThrow() {
        RetryStatistics stats = new RetryStatistics();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RetryEventListener broken = new RetryEventListener() {
            @Override
            public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
                throw new IllegalStateException("boom");
            }
        };
        RetryEventListener composite = RetryEventListener.composite(Arrays.asList(broken, stats,
                new MicrometerRetryEventListener(registry), RetryEventListener.NOOP, null));

        composite.callStarted(A);
        composite.attemptStarted(A, AttemptKind.INITIAL, 1);
        composite.attemptEnded(A, AttemptKind.INITIAL, 1, Status.Code.OK);
        composite.callEnded(A, Status.Code.OK, 0, 0, 0, 0);

        assertThat(stats.counts("a").calls()).isEqualTo(1);
        assertThat(registry.get("grpc.client.retry.attempts").counter().count()).isEqualTo(1.0);
        // nested composites are taken apart: stats behind both is called twice, once per place
        RetryEventListener.composite(List.of(composite, stats)).callStarted(A);
        assertThat(stats.counts("a").calls()).isEqualTo(3);
    }
}
