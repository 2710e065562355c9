package io.github.grpcretry.spring.report;

import io.github.grpcretry.attempt.AttemptKind;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.SuppressionReason;
import io.grpc.Status;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts since start, per channel, of what the engine did: calls, failed calls, attempts, retries,
 * hedges and suppressed retries by reason. Lock-free ({@link LongAdder}s, one map lookup per
 * event); read by the Actuator endpoint. Needs no Micrometer.
 */
public final class RetryStatistics implements RetryEventListener {

    private static final SuppressionReason[] REASONS = SuppressionReason.values();

    private final ConcurrentMap<String, Counters> channels = new ConcurrentHashMap<>();

    @Override
    public void callStarted(CallTarget target) {
        counters(target.channel()).calls.increment();
    }

    @Override
    public void attemptStarted(CallTarget target, AttemptKind kind, int attemptNumber) {
        Counters c = counters(target.channel());
        c.attempts.increment();
        if (kind == AttemptKind.RETRY) {
            c.retries.increment();
        } else if (kind == AttemptKind.HEDGE) {
            c.hedges.increment();
        }
    }

    @Override
    public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
        counters(target.channel()).suppressed[reason.ordinal()].increment();
    }

    @Override
    public void callEnded(CallTarget target, Status.Code code, int retries, int hedges, int transparentRetries,
            long retryDelayNanos) {
        if (code != Status.Code.OK) {
            counters(target.channel()).failedCalls.increment();
        }
    }

    /** Channels that saw at least one event, sorted. */
    public Set<String> channels() {
        return Collections.unmodifiableSet(new TreeSet<>(channels.keySet()));
    }

    /** The counts of {@code channel} now (all zero when it saw no event). */
    public ChannelCounts counts(String channel) {
        Counters c = channels.get(channel);
        return c == null ? ChannelCounts.ZERO : c.snapshot();
    }

    private Counters counters(String channel) {
        Counters c = channels.get(channel);
        if (c == null) {
            c = channels.computeIfAbsent(channel, k -> new Counters());
        }
        return c;
    }

    /**
     * A snapshot of one channel's counts.
     *
     * @param suppressed by reason tag value ({@code non_retryable_status}, ...), every reason present, in enum order
     */
    public record ChannelCounts(long calls, long failedCalls, long attempts, long retries, long hedges,
            Map<String, Long> suppressed) {

        static final ChannelCounts ZERO = new Counters().snapshot();

        public ChannelCounts {
            suppressed = Collections.unmodifiableMap(new LinkedHashMap<>(suppressed));
        }

        public long suppressed(SuppressionReason reason) {
            return suppressed.getOrDefault(reason.tagValue(), 0L);
        }
    }

    private static final class Counters {
        final LongAdder calls = new LongAdder();
        final LongAdder failedCalls = new LongAdder();
        final LongAdder attempts = new LongAdder();
        final LongAdder retries = new LongAdder();
        final LongAdder hedges = new LongAdder();
        final LongAdder[] suppressed = new LongAdder[REASONS.length];

        Counters() {
            for (int i = 0; i < suppressed.length; i++) {
                suppressed[i] = new LongAdder();
            }
        }

        ChannelCounts snapshot() {
            Map<String, Long> byReason = new LinkedHashMap<>();
            for (SuppressionReason r : REASONS) {
                byReason.put(r.tagValue(), suppressed[r.ordinal()].sum());
            }
            return new ChannelCounts(calls.sum(), failedCalls.sum(), attempts.sum(), retries.sum(), hedges.sum(),
                    byReason);
        }
    }
}
