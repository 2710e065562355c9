package io.github.grpcretry.metrics;

import io.github.grpcretry.guard.GuardEventListener;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * {@value RetryMeterNames#SERVER_GUARD} (counter; method): responses the server-side amplification
 * guard marked "do not retry". The method must come from the server call's descriptor. A
 * {@link GuardEventListener}: give it to the {@code GuardServerInterceptor}. Made by
 * {@link MicrometerRetryEventListener#guardMeters}.
 */
final class GuardMeters implements GuardEventListener {

    private final MeterRegistry registry;
    private final ConcurrentMap<String, Counter> counters = new ConcurrentHashMap<>();

    GuardMeters(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /** The guard added {@code grpc-retry-pushback-ms: -1} to a response of {@code fullMethodName}. */
    public void marked(String fullMethodName) {
        Counter c = counters.get(fullMethodName);
        if (c == null) {
            c = counters.computeIfAbsent(fullMethodName, m -> Counter.builder(RetryMeterNames.SERVER_GUARD)
                    .description("Responses the retry amplification guard marked \"do not retry\"")
                    .tag(RetryMeterNames.TAG_METHOD, m)
                    .register(registry));
        }
        c.increment();
    }

    @Override
    public void responseGuarded(String fullMethodName, Status.Code code) {
        marked(fullMethodName);
    }
}
