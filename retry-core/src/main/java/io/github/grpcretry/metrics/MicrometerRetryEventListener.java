package io.github.grpcretry.metrics;

import static io.github.grpcretry.metrics.RetryMeterNames.TAG_CLIENT;
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
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * Records the engine's events as the per-call meters of docs/design.md §15:
 * {@value RetryMeterNames#ATTEMPTS}, {@value RetryMeterNames#CALL_RETRIES},
 * {@value RetryMeterNames#CALL_HEDGES}, {@value RetryMeterNames#CALL_RETRY_DELAY},
 * {@value RetryMeterNames#SUPPRESSED} and {@value RetryMeterNames#RETRY_DELAYS}.
 *
 * <p>Meters are registered on first use and cached per {@link CallTarget} in arrays indexed by
 * kind, status code and reason, so after warm-up an event costs one map lookup and an array read:
 * no tags are built and nothing is allocated. Tag values are bounded: the channel name, the
 * descriptor's full method name, enum names.
 *
 * <p>{@code retry_delay} is recorded for calls that had at least one retry or hedge (a call of one
 * attempt never waited between attempts); like the two summaries it is not recorded for the others.
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
    public void callEnded(CallTarget target, Status.Code code, int retries, int hedges, long retryDelayNanos) {
        if (retries <= 0 && hedges <= 0) {
            return;
        }
        TargetMeters m = meters(target);
        if (retries > 0) {
            m.retries().record(retries);
        }
        if (hedges > 0) {
            m.hedges().record(hedges);
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

    /** The meters of one (channel, method); each registered on first use. */
    private final class TargetMeters {
        private final Tags tags;
        private final AtomicReferenceArray<Counter> attempts = new AtomicReferenceArray<>(KINDS.length * CODES.length);
        private final AtomicReferenceArray<Counter> suppressed = new AtomicReferenceArray<>(REASONS.length);
        private final AtomicReferenceArray<Counter> delays = new AtomicReferenceArray<>(SOURCES.length);
        private volatile @Nullable DistributionSummary retries;
        private volatile @Nullable DistributionSummary hedges;
        private volatile @Nullable Timer retryDelay;

        TargetMeters(CallTarget target) {
            this.tags = Tags.of(TAG_CLIENT, target.channel(), TAG_METHOD, target.fullMethodName());
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
                        .description("Retry attempts per call (calls without retries are not recorded)")
                        .baseUnit("retries")
                        .tags(tags)
                        .register(registry);
                retries = s;
            }
            return s;
        }

        DistributionSummary hedges() {
            DistributionSummary s = hedges;
            if (s == null) {
                s = DistributionSummary.builder(RetryMeterNames.CALL_HEDGES)
                        .description("Hedged attempts per call (calls without hedges are not recorded)")
                        .baseUnit("hedges")
                        .tags(tags)
                        .register(registry);
                hedges = s;
            }
            return s;
        }

        Timer retryDelay() {
            Timer t = retryDelay;
            if (t == null) {
                t = Timer.builder(RetryMeterNames.CALL_RETRY_DELAY)
                        .description("Time a call spent waiting between attempts")
                        .tags(tags)
                        .register(registry);
                retryDelay = t;
            }
            return t;
        }
    }
}
