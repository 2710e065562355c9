package io.github.grpcretry.sample.demo;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.sample.server.ArrivalLog;
import io.github.grpcretry.sample.server.QueueingBackend;
import io.github.grpcretry.throttle.RetryThrottle;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;

/**
 * Once a second, turns the cumulative meters into one point of the dashboard's time series and keeps
 * the last {@value #KEEP} points. Sources: the Micrometer registry (the generator's
 * {@code sample.demo.calls} and {@code sample.demo.latency}, the backend's {@code sample.flaky.arrivals},
 * the starter's {@code grpc.client.retry.attempts} and {@code grpc.client.retry.suppressed} when the
 * engine publishes them) and the starter's {@link RetryLimiterRegistry} (token level, budget balance).
 */
public class DemoSampler implements ApplicationListener<ApplicationEvent> {

    static final int KEEP = 300;
    static final String ARRIVALS = "sample.flaky.arrivals";

    /**
     * One second of the demo.
     *
     * @param t end of the second (epoch ms)
     * @param calls logical calls that ended in this second
     * @param ok of which succeeded
     * @param attempts attempts that reached the backend in this second
     * @param clientAttempts attempts the engine reported ({@code grpc.client.retry.attempts}), null when not published
     * @param amplification attempts ÷ calls, null without calls
     * @param successRate ok ÷ calls in percent, null without calls
     * @param tokens token level of the throttled channel's bucket, null when the engine exposes none
     * @param threshold its threshold (max-tokens / 2): at or below it retries stop
     * @param maxTokens its capacity
     * @param budgetBalance retries the budget channel's budget permits now, null when none
     * @param suppressed retries not made in this second, by reason
     * @param p50Ms median latency of the current strategy's calls over the last seconds
     * @param p99Ms 99th percentile
     * @param strategy the strategy in use
     * @param queue the backend's queue in this second (the stall control's chart)
     */
    public record Point(long t, double calls, double ok, double attempts, Double clientAttempts, Double amplification,
            Double successRate, Double tokens, Double threshold, Double maxTokens, Double budgetBalance,
            Map<String, Double> suppressed, Double p50Ms, Double p99Ms, String strategy, QueuePoint queue) {
    }

    /**
     * The backend's queue in one second of the demo.
     *
     * @param offered calls the generator fired in this second
     * @param goodput calls that ended OK in this second
     * @param length calls waiting at the end of the second
     * @param maxLength the longest the queue was in the second
     * @param stalled whether the backend was stalled at the end of the second
     * @param wasted services in this second whose caller had given up
     * @param dropped expired calls skipped in this second
     * @param rejected arrivals in this second that found the queue full
     * @param capacity calls per second the backend's workers serve
     */
    public record QueuePoint(double offered, double goodput, int length, int maxLength, boolean stalled, double wasted,
            double dropped, double rejected, double capacity) {
    }

    private final MeterRegistry registry;
    private final RetryLimiterRegistry limiters;
    private final TrafficGenerator generator;
    private final ArrivalLog arrivals;
    private final QueueingBackend backend;
    private final Deque<Point> points = new ArrayDeque<>();
    private final DemoTicker ticker = new DemoTicker("demo-sampler", Duration.ofSeconds(1), this::sample);
    private double lastCalls;
    private double lastOk;
    private double lastArrivals;
    private double lastClientAttempts;
    private Map<String, Double> lastSuppressed = Map.of();
    private double lastOffered;
    private QueueingBackend.Snapshot lastQueue;

    public DemoSampler(MeterRegistry registry, RetryLimiterRegistry limiters, TrafficGenerator generator, ArrivalLog arrivals,
            QueueingBackend backend) {
        this.registry = registry;
        this.limiters = limiters;
        this.generator = generator;
        this.arrivals = arrivals;
        this.backend = backend;
        this.lastQueue = backend.snapshot();
        FunctionCounter.builder(ARRIVALS, arrivals, ArrivalLog::total)
                .description("Attempts that reached the sample's flaky backend").register(registry);
    }

    /** Points newer than {@code since} (epoch ms), oldest first. */
    public List<Point> since(long since) {
        synchronized (points) {
            List<Point> out = new ArrayList<>();
            for (Point p : points) {
                if (p.t() > since) {
                    out.add(p);
                }
            }
            return out;
        }
    }

    synchronized void sample() {
        double calls = 0;
        double ok = 0;
        for (Counter c : registry.find(TrafficGenerator.CALLS).counters()) {
            calls += c.count();
            if ("OK".equals(c.getId().getTag("status"))) {
                ok += c.count();
            }
        }
        FunctionCounter arrivalCounter = registry.find(ARRIVALS).functionCounter();
        double arrived = arrivalCounter == null ? arrivals.total() : arrivalCounter.count();
        List<Counter> engineAttempts = new ArrayList<>(registry.find("grpc.client.retry.attempts").counters());
        double clientAttempts = engineAttempts.stream().mapToDouble(Counter::count).sum();
        Map<String, Double> suppressed = new TreeMap<>();
        for (Counter c : registry.find("grpc.client.retry.suppressed").counters()) {
            suppressed.merge(String.valueOf(c.getId().getTag("reason")), c.count(), Double::sum);
        }

        double dCalls = calls - lastCalls;
        double dOk = ok - lastOk;
        double dArrivals = arrived - lastArrivals;
        Map<String, Double> dSuppressed = new TreeMap<>();
        suppressed.forEach((reason, v) -> dSuppressed.put(reason, v - lastSuppressed.getOrDefault(reason, 0.0)));
        Double dClient = engineAttempts.isEmpty() ? null : clientAttempts - lastClientAttempts;
        lastCalls = calls;
        lastOk = ok;
        lastArrivals = arrived;
        lastClientAttempts = clientAttempts;
        lastSuppressed = suppressed;

        DemoStrategy strategy = generator.settings().strategy();
        Double p50 = null;
        Double p99 = null;
        if (dCalls > 0 && generator.latency(strategy).count() > 0) {
            for (ValueAtPercentile v : generator.latency(strategy).takeSnapshot().percentileValues()) {
                if (v.percentile() == 0.5) {
                    p50 = v.value(TimeUnit.MILLISECONDS);
                } else if (v.percentile() == 0.99) {
                    p99 = v.value(TimeUnit.MILLISECONDS);
                }
            }
        }
        RetryThrottle throttle = limiters.throttle(DemoStrategy.THROTTLED.channel()).orElse(null);
        RetryBudget budget = limiters.budget(DemoStrategy.BUDGET.channel()).orElse(null);
        Point p = new Point(System.currentTimeMillis(), dCalls, dOk, dArrivals, dClient,
                dCalls > 0 ? dArrivals / dCalls : null, dCalls > 0 ? 100.0 * dOk / dCalls : null,
                throttle == null ? null : throttle.tokens(), throttle == null ? null : throttle.threshold(),
                throttle == null ? null : throttle.maxTokens(), budget == null ? null : budget.balance(),
                dSuppressed, p50, p99, strategy.name(), queuePoint(dOk));
        synchronized (points) {
            points.addLast(p);
            while (points.size() > KEEP) {
                points.removeFirst();
            }
        }
        arrivals.forgetKeys();
    }

    /** This second of the backend's queue (offered from the generator, goodput = calls that ended OK). */
    private QueuePoint queuePoint(double goodput) {
        double offered = generator.offered();
        double dOffered = offered - lastOffered;
        lastOffered = offered;
        QueueingBackend.Snapshot q = backend.snapshot();
        QueueingBackend.Snapshot before = lastQueue;
        lastQueue = q;
        return new QueuePoint(dOffered, goodput, q.queueLength(), q.maxQueueLength(), q.stalled(), q.wasted() - before.wasted(),
                q.dropped() - before.dropped(), q.rejected() - before.rejected(), backend.capacityPerSecond());
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        ticker.on(event);
    }
}
