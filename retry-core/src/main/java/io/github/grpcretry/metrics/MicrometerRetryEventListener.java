package io.github.grpcretry.metrics;

import static io.github.grpcretry.metrics.RetryMeterNames.TAG_CLIENT;
import static io.github.grpcretry.metrics.RetryMeterNames.TAG_GRPC_METHOD;
import static io.github.grpcretry.metrics.RetryMeterNames.TAG_GRPC_TARGET;
import static io.github.grpcretry.metrics.RetryMeterNames.TAG_KIND;
import static io.github.grpcretry.metrics.RetryMeterNames.TAG_METHOD;
import static io.github.grpcretry.metrics.RetryMeterNames.TAG_REASON;
import static io.github.grpcretry.metrics.RetryMeterNames.TAG_SOURCE;
import static io.github.grpcretry.metrics.RetryMeterNames.TAG_STATUS;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.DelaySource;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.SuppressionReason;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardEventListener;
import io.github.grpcretry.internal.backends.TriedBackends;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * Records the engine's events as the per-call meters of docs/design.md §15:
 * {@value RetryMeterNames#ATTEMPTS}, {@value RetryMeterNames#SUPPRESSED} and {@value RetryMeterNames#RETRY_DELAYS}
 * (tags client, method, ...),
 * and gRFC A96's histograms {@value RetryMeterNames#CALL_RETRIES}, {@value RetryMeterNames#CALL_HEDGES},
 * {@value RetryMeterNames#CALL_TRANSPARENT_RETRIES} and {@value RetryMeterNames#CALL_RETRY_DELAY} with A96's
 * attributes {@value RetryMeterNames#TAG_GRPC_METHOD} ({@link CallTarget#grpcMethod()}) and
 * {@value RetryMeterNames#TAG_GRPC_TARGET} ({@link CallTarget#target()}).
 *
 * <p>As A96 says, the three counts are not recorded when they are 0, and {@code retry_delay} is recorded for
 * every call that ends (0 for a call of one attempt). The counts are distribution summaries without a base
 * unit (A96's units are annotations such as {@code {retry}}, which a Prometheus registry would append to the
 * name) and with A96's recommended buckets; {@code retry_delay} is a timer (seconds) with gRFC A66's latency
 * buckets.
 *
 * <p>Meters are registered on first use and cached per {@link CallTarget} in arrays indexed by
 * kind, status code and reason, so after warm-up an event costs one map lookup and an array read:
 * no tags are built and nothing is allocated. Tag values are bounded: the channel name, the
 * descriptor's full method name, the channel's target, enum names.
 */
public final class MicrometerRetryEventListener implements RetryEventListener {

    private static final Status.Code[] CODES = Status.Code.values();
    private static final AttemptKind[] KINDS = AttemptKind.values();
    private static final SuppressionReason[] REASONS = SuppressionReason.values();
    private static final DelaySource[] SOURCES = DelaySource.values();

    private final MeterRegistry registry;
    private final ConcurrentMap<CallTarget, TargetMeters> meters = new ConcurrentHashMap<>();

    public MicrometerRetryEventListener(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * The guard's counter {@value RetryMeterNames#SERVER_GUARD} (tag method) as a
     * {@link GuardEventListener}: give it to the {@code GuardServerInterceptor}.
     */
    public static GuardEventListener guardMeters(MeterRegistry registry) {
        return new GuardMeters(registry);
    }

    /**
     * The deadline meters {@value RetryMeterNames#DEADLINE_REMAINING} (timer) and
     * {@value RetryMeterNames#DEADLINE_FAST_FAIL} (counter), tags client and method, as a
     * {@link DeadlineEventListener}: give it to the {@code DeadlineClientInterceptor}.
     */
    public static DeadlineEventListener deadlineMeters(MeterRegistry registry) {
        return new DeadlineMeters(registry);
    }

    @Override
    public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
        meters(target).attempt(kind, code).increment();
    }

    @Override
    public void retryScheduled(CallTarget target, int nextAttemptNumber, long delayNanos, DelaySource source) {
        meters(target).delays(source).increment();
    }

    @Override
    public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
        meters(target).suppressed(reason).increment();
    }

    @Override
    public void backendReused(CallTarget target, AttemptKind kind, int attemptNumber, String reason) {
        meters(target).backendReused(reason).increment();
    }

    @Override
    public void callEnded(CallTarget target, Status.Code code, int retries, int hedges, int transparentRetries,
            long retryDelayNanos) {
        TargetMeters m = meters(target);
        if (retries > 0) {
            m.retries().record(retries);
        }
        if (hedges > 0) {
            m.hedges().record(hedges);
        }
        if (transparentRetries > 0) {
            m.transparentRetries().record(transparentRetries);
        }
        m.retryDelay().record(Math.max(0, retryDelayNanos), TimeUnit.NANOSECONDS);
    }

    private TargetMeters meters(CallTarget target) {
        TargetMeters m = meters.get(target);
        if (m == null) {
            m = meters.computeIfAbsent(target, TargetMeters::new);
        }
        return m;
    }

    /** A96's buckets of {@code retries} and {@code hedges}. */
    private static final double[] COUNT_BUCKETS = {1, 2, 3, 4, 5};
    /** A96's buckets of {@code transparent_retries}. */
    private static final double[] TRANSPARENT_BUCKETS = {1, 2, 3, 4, 5, 10};
    /**
     * gRFC A66's latency buckets (seconds), A96's advice for {@code retry_delay}, without the first, 0 (Micrometer
     * takes boundaries above 0; a call that never waited falls in the first bucket).
     */
    private static final Duration[] LATENCY_BUCKETS = latencyBuckets(0.00001, 0.00005, 0.0001, 0.0003, 0.0006,
            0.0008, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.013, 0.016, 0.02, 0.025, 0.03, 0.04,
            0.05, 0.065, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65, 0.8, 1, 2, 5, 10, 20, 50, 100);

    private static Duration[] latencyBuckets(double... seconds) {
        Duration[] d = new Duration[seconds.length];
        for (int i = 0; i < seconds.length; i++) {
            d[i] = Duration.ofNanos(Math.round(seconds[i] * 1e9));
        }
        return d;
    }

    /** The meters of one (channel, method); each registered on first use. */
    private final class TargetMeters {
        private final Tags tags;
        /** gRFC A96's attributes: grpc.method, grpc.target. */
        private final Tags a96;
        private final AtomicReferenceArray<Counter> attempts = new AtomicReferenceArray<>(KINDS.length * CODES.length);
        private final AtomicReferenceArray<Counter> suppressed = new AtomicReferenceArray<>(REASONS.length);
        private final AtomicReferenceArray<Counter> delays = new AtomicReferenceArray<>(SOURCES.length);
        private final AtomicReferenceArray<Counter> reused = new AtomicReferenceArray<>(2);
        private volatile @Nullable DistributionSummary retries;
        private volatile @Nullable DistributionSummary hedges;
        private volatile @Nullable DistributionSummary transparentRetries;
        private volatile @Nullable Timer retryDelay;

        TargetMeters(CallTarget target) {
            this.tags = Tags.of(TAG_CLIENT, target.channel(), TAG_METHOD, target.fullMethodName());
            this.a96 = Tags.of(TAG_GRPC_METHOD, target.grpcMethod(), TAG_GRPC_TARGET, target.target());
        }

        Counter attempt(AttemptKind kind, Status.Code code) {
            int idx = kind.ordinal() * CODES.length + code.ordinal();
            Counter c = attempts.get(idx);
            if (c == null) {
                // Registration is idempotent: a race registers the same meter twice and both get it.
                c = Counter.builder(RetryMeterNames.ATTEMPTS)
                        .description("Attempts the retry engine started, by kind and final status")
                        .baseUnit("attempts")
                        .tags(tags)
                        .tag(TAG_KIND, kind.tagValue())
                        .tag(TAG_STATUS, code.name())
                        .register(registry);
                attempts.set(idx, c);
            }
            return c;
        }

        Counter suppressed(SuppressionReason reason) {
            int idx = reason.ordinal();
            Counter c = suppressed.get(idx);
            if (c == null) {
                c = Counter.builder(RetryMeterNames.SUPPRESSED)
                        .description("Failed attempts that were not retried, by reason")
                        .tags(tags)
                        .tag(TAG_REASON, reason.tagValue())
                        .register(registry);
                suppressed.set(idx, c);
            }
            return c;
        }

        /** {@code reason}: {@code no_other_ready} or {@code picks_exhausted} (any other counts as the latter). */
        Counter backendReused(String reason) {
            int idx = reason.equals(TriedBackends.NO_OTHER_READY) ? 0 : 1;
            Counter c = reused.get(idx);
            if (c == null) {
                c = Counter.builder(RetryMeterNames.BACKEND_REUSED)
                        .description("Retries and hedges that went to a backend their call had already tried, by reason")
                        .tags(tags)
                        .tag(TAG_REASON, idx == 0 ? TriedBackends.NO_OTHER_READY : TriedBackends.PICKS_EXHAUSTED)
                        .register(registry);
                reused.set(idx, c);
            }
            return c;
        }

        Counter delays(DelaySource source) {
            int idx = source.ordinal();
            Counter c = delays.get(idx);
            if (c == null) {
                c = Counter.builder(RetryMeterNames.RETRY_DELAYS)
                        .description("Delays before retries, by where they came from")
                        .tags(tags)
                        .tag(TAG_SOURCE, source.tagValue())
                        .register(registry);
                delays.set(idx, c);
            }
            return c;
        }

        DistributionSummary retries() {
            DistributionSummary s = retries;
            if (s == null) {
                s = DistributionSummary.builder(RetryMeterNames.CALL_RETRIES)
                        .description("Number of retries during the client call. If there were no retries, 0 is not reported.")
                        .tags(a96)
                        .serviceLevelObjectives(COUNT_BUCKETS)
                        .register(registry);
                retries = s;
            }
            return s;
        }

        DistributionSummary hedges() {
            DistributionSummary s = hedges;
            if (s == null) {
                s = DistributionSummary.builder(RetryMeterNames.CALL_HEDGES)
                        .description("Number of hedges during the client call. If there were no hedges, 0 is not reported.")
                        .tags(a96)
                        .serviceLevelObjectives(COUNT_BUCKETS)
                        .register(registry);
                hedges = s;
            }
            return s;
        }

        DistributionSummary transparentRetries() {
            DistributionSummary s = transparentRetries;
            if (s == null) {
                s = DistributionSummary.builder(RetryMeterNames.CALL_TRANSPARENT_RETRIES)
                        .description("Number of transparent retries during the client call. "
                                + "If there were no transparent retries, 0 is not reported.")
                        .tags(a96)
                        .serviceLevelObjectives(TRANSPARENT_BUCKETS)
                        .register(registry);
                transparentRetries = s;
            }
            return s;
        }

        Timer retryDelay() {
            Timer t = retryDelay;
            if (t == null) {
                t = Timer.builder(RetryMeterNames.CALL_RETRY_DELAY)
                        .description("Total time of delay while there is no active attempt during the client call")
                        .tags(a96)
                        .serviceLevelObjectives(LATENCY_BUCKETS)
                        .register(registry);
                retryDelay = t;
            }
            return t;
        }
    }
}
