package io.github.grpcretry.sample.server;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** What the flaky server saw: attempts per call key and in total. */
public final class ArrivalLog {

    private final Map<String, AtomicInteger> perKey = new ConcurrentHashMap<>();
    private final AtomicLong total = new AtomicLong();

    /** Records an arrival and returns its 1-based attempt number within its key. */
    public int record(String key, int previousAttempts) {
        total.incrementAndGet();
        return perKey.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    }

    public int attempts(String key) {
        AtomicInteger n = perKey.get(key);
        return n == null ? 0 : n.get();
    }

    public long total() {
        return total.get();
    }

    /** Forgets per-key counts (keeps the total); keys are per call, so long runs call this now and then. */
    public void forgetKeys() {
        perKey.clear();
    }
}
