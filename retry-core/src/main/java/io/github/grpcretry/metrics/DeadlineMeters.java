package io.github.grpcretry.metrics;

import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

/**
 * The deadline meters of docs/design.md §15, for the deadline rules to call:
 * {@value RetryMeterNames#DEADLINE_REMAINING} (timer; client, method) and
 * {@value RetryMeterNames#DEADLINE_FAST_FAIL} (counter; client, method). Meters are cached per
 * (channel, method); the method must come from the call's descriptor. Made by
 * {@link MicrometerRetryEventListener#deadlineMeters}.
 */
final class DeadlineMeters implements DeadlineEventListener {

    private final MeterRegistry registry;
    private final ConcurrentMap<CallTarget, Meters> meters = new ConcurrentHashMap<>();

    DeadlineMeters(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void deadlineRemaining(CallTarget target, long remainingNanos) {
        recordRemaining(target, remainingNanos);
    }

    /** A call with a deadline starts with {@code remainingNanos} left (negative values record 0). */
    public void recordRemaining(CallTarget target, long remainingNanos) {
        meters(target).remaining.record(Math.max(0, remainingNanos), TimeUnit.NANOSECONDS);
    }

    public void recordRemaining(String channel, String fullMethodName, long remainingNanos) {
        recordRemaining(new CallTarget(channel, fullMethodName), remainingNanos);
    }

    /** A call was refused by {@code min-remaining} and never sent. */
    @Override
    public void fastFail(CallTarget target) {
        meters(target).fastFail.increment();
    }

    public void fastFail(String channel, String fullMethodName) {
        fastFail(new CallTarget(channel, fullMethodName));
    }

    private Meters meters(CallTarget target) {
        Meters m = meters.get(target);
        if (m == null) {
            m = meters.computeIfAbsent(target, t -> new Meters(registry, t));
        }
        return m;
    }

    private static final class Meters {
        final Timer remaining;
        final Counter fastFail;

        Meters(MeterRegistry registry, CallTarget target) {
            Tags tags = Tags.of(RetryMeterNames.TAG_CLIENT, target.channel(), RetryMeterNames.TAG_METHOD,
                    target.fullMethodName());
            remaining = Timer.builder(RetryMeterNames.DEADLINE_REMAINING)
                    .description("Time left when a call with a deadline starts")
                    .tags(tags)
                    .register(registry);
            fastFail = Counter.builder(RetryMeterNames.DEADLINE_FAST_FAIL)
                    .description("Calls refused by grpc.retry.deadline.min-remaining")
                    .tags(tags)
                    .register(registry);
        }
    }
}
