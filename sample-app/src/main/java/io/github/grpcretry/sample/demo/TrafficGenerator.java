package io.github.grpcretry.sample.demo;

import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyReply;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.github.grpcretry.sample.proto.Script;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;

/**
 * Offers {@link DemoSettings#rate()} calls per second to the flaky backend through the channel of the
 * selected strategy, asynchronously (no thread waits for a reply), and records every logical call in
 * Micrometer: {@code sample.demo.calls} (counter; strategy, status) and {@code sample.demo.latency}
 * (timer with p50/p99 over the last seconds; strategy).
 */
public class TrafficGenerator implements ApplicationListener<ApplicationEvent> {

    static final String CALLS = "sample.demo.calls";
    static final String LATENCY = "sample.demo.latency";
    static final int MAX_IN_FLIGHT = 2000;

    @GrpcClient("flaky-none")
    private FlakyGrpc.FlakyStub none;
    @GrpcClient("flaky-retry")
    private FlakyGrpc.FlakyStub retry;
    @GrpcClient("flaky-throttled")
    private FlakyGrpc.FlakyStub throttled;
    @GrpcClient("flaky-budget")
    private FlakyGrpc.FlakyStub budget;
    @GrpcClient("flaky-hedging")
    private FlakyGrpc.FlakyStub hedging;

    private final AtomicReference<DemoSettings> settings;
    private final MeterRegistry registry;
    private final Duration deadline;
    private final Map<DemoStrategy, Timer> latency = new EnumMap<>(DemoStrategy.class);
    private final Map<String, Counter> calls = new ConcurrentHashMap<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong offered = new AtomicLong();
    private final List<Consumer<DemoStrategy>> strategyListeners = new CopyOnWriteArrayList<>();
    /** The current strategy's calls run in this context; a strategy change cancels it (calls and pending retries). */
    private volatile Context.CancellableContext callScope = Context.ROOT.withCancellation();
    private final DemoTicker ticker = new DemoTicker("demo-traffic", Duration.ofMillis(10), this::offer);
    // the ticker thread's own: the credit of calls not yet offered, and when it last offered
    private double credit;
    private long lastTick;
    private boolean offering;

    public TrafficGenerator(DemoSettings initial, MeterRegistry registry, Duration deadline) {
        this.settings = new AtomicReference<>(initial);
        this.registry = registry;
        this.deadline = deadline;
        for (DemoStrategy s : DemoStrategy.values()) {
            latency.put(s, Timer.builder(LATENCY).description("Latency of the demo's logical calls (all attempts)")
                    .tag("strategy", s.name().toLowerCase())
                    .publishPercentiles(0.5, 0.99)
                    .distributionStatisticExpiry(Duration.ofSeconds(3))
                    .distributionStatisticBufferLength(3)
                    .register(registry));
        }
    }

    public DemoSettings settings() {
        return settings.get();
    }

    public DemoSettings update(DemoSettings.Update update) {
        DemoSettings before = settings.get();
        DemoSettings after = settings.updateAndGet(s -> s.with(update));
        if (after.strategy() != before.strategy()) {
            // the old strategy's calls still in flight end now, so their retries do not land on the next one's backend
            Context.CancellableContext old = callScope;
            callScope = Context.ROOT.withCancellation();
            old.cancel(null);
            strategyListeners.forEach(l -> l.accept(after.strategy()));
        }
        return after;
    }

    /** Called with the new strategy whenever an update changes it (the demo resets the backend's queue). */
    public void onStrategyChange(Consumer<DemoStrategy> listener) {
        strategyListeners.add(listener);
    }

    /** Calls fired since start (the offered load, whatever became of them). */
    public long offered() {
        return offered.get();
    }

    public Timer latency(DemoStrategy strategy) {
        return latency.get(strategy);
    }

    public int inFlight() {
        return inFlight.get();
    }

    /** Calls not sent because {@value #MAX_IN_FLIGHT} were already waiting for an answer. */
    public long dropped() {
        return dropped.get();
    }

    private FlakyGrpc.FlakyStub stub(DemoStrategy s) {
        return switch (s) {
            case NONE -> none;
            case RETRY -> retry;
            case THROTTLED -> throttled;
            case BUDGET -> budget;
            case HEDGING -> hedging;
        };
    }

    private void offer() {
        long now = System.nanoTime();
        DemoSettings s = settings.get();
        long elapsed = offering ? now - lastTick : 0;
        offering = true;
        credit = Math.min(credit + s.rate() * elapsed / 1e9, Math.max(1, s.rate()));
        lastTick = now;
        while (credit >= 1) {
            credit -= 1;
            if (inFlight.get() >= MAX_IN_FLIGHT) {
                dropped.incrementAndGet();
                continue;
            }
            fire(s);
        }
    }

    private void fire(DemoSettings s) {
        DemoStrategy strategy = s.strategy();
        Script script = Script.newBuilder().setFailProbability(s.failureRate()).setSlowProbability(s.slowShare())
                .setSlowMs(s.slowMs()).build();
        FlakyRequest request = FlakyRequest.newBuilder().setKey("demo-" + sequence.incrementAndGet()).setScript(script).build();
        long start = System.nanoTime();
        offered.incrementAndGet();
        inFlight.incrementAndGet();
        Context.CancellableContext scope = callScope;
        Context previous = scope.attach();
        try {
            send(strategy, request, start);
        } finally {
            scope.detach(previous);
        }
    }

    private void send(DemoStrategy strategy, FlakyRequest request, long start) {
        stub(strategy).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS).call(request, new StreamObserver<>() {
            @Override
            public void onNext(FlakyReply value) {
            }

            @Override
            public void onError(Throwable t) {
                done(strategy, Status.fromThrowable(t).getCode(), start);
            }

            @Override
            public void onCompleted() {
                done(strategy, Status.Code.OK, start);
            }
        });
    }

    private void done(DemoStrategy strategy, Status.Code code, long start) {
        inFlight.decrementAndGet();
        latency.get(strategy).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        calls.computeIfAbsent(strategy.name() + '/' + code.name(), k -> Counter.builder(CALLS)
                .description("Logical calls of the demo's traffic generator, by how they ended")
                .tag("strategy", strategy.name().toLowerCase()).tag("status", code.name()).register(registry)).increment();
    }

    /** Offers calls from when the application is ready (the gRPC server is listening) until the context closes. */
    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        ticker.on(event);
    }
}
