package io.github.grpcretry.sample.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** What the flaky server saw: the arrivals of every call key (time and retry header) and the total. */
public final class ArrivalLog {

    /** One attempt as the server saw it: when it arrived and its {@code grpc-previous-rpc-attempts} (-1 = none). */
    public record Arrival(long nanoTime, int previousAttempts) {
    }

    private final Map<String, List<Arrival>> perKey = new ConcurrentHashMap<>();
    private final AtomicLong total = new AtomicLong();

    /** Records an arrival and returns its 1-based attempt number within its key. */
    public int record(String key, int previousAttempts) {
        total.incrementAndGet();
        List<Arrival> list = perKey.computeIfAbsent(key, k -> new ArrayList<>(4));
        synchronized (list) {
            list.add(new Arrival(System.nanoTime(), previousAttempts));
            return list.size();
        }
    }

    public int attempts(String key) {
        return arrivals(key).size();
    }

    /** The arrivals of {@code key} in order (a copy). */
    public List<Arrival> arrivals(String key) {
        List<Arrival> list = perKey.get(key);
        if (list == null) {
            return List.of();
        }
        synchronized (list) {
            return List.copyOf(list);
        }
    }

    public long total() {
        return total.get();
    }

    /** Forgets per-key records (keeps the total); keys are per call, so long runs call this now and then. */
    public void forgetKeys() {
        perKey.clear();
    }
}
