package io.github.grpcretry.internal.callback;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Failures of application code called by retry-core (docs/design.md §14): the first failure of each
 * callback object and kind of call is logged at WARNING with its stack trace; every failure is counted.
 * The call that was being served goes on; what the failed callback would have decided is replaced by the
 * caller's safe default.
 */
public final class CallbackFailures {

    /** The process-wide record that the engine, the composite listener and the resolver report to. */
    public static final CallbackFailures SHARED = new CallbackFailures();

    private static final System.Logger LOG = System.getLogger("io.github.grpcretry.callbacks");

    private final ConcurrentHashMap<String, AtomicLong> counts = new ConcurrentHashMap<>();

    /**
     * Records that {@code callback} threw {@code failure} from {@code kind}.
     *
     * @param role what the callback is to the caller ({@code RetryEventListener}, {@code RetryDecider}, ...)
     * @param kind the method that threw ({@code attemptEnded}, {@code onFailure}, ...)
     * @param outcome what happens instead ("the event is skipped", "counts as not retryable")
     */
    public void failed(String role, Object callback, String kind, Throwable failure, String outcome) {
        String key = key(callback, kind);
        AtomicLong count = counts.computeIfAbsent(key, k -> new AtomicLong());
        if (count.getAndIncrement() == 0) {
            LOG.log(System.Logger.Level.WARNING, role + " " + callback + " threw from " + kind + ": " + outcome
                    + ". Logged once for this " + role + " and " + kind + "; later failures are only counted.", failure);
        }
    }

    /** How often {@code callback} threw from {@code kind}. */
    public long count(Object callback, String kind) {
        AtomicLong c = counts.get(key(callback, kind));
        return c == null ? 0 : c.get();
    }

    /** Every count, keyed {@code <class>@<identity>#<kind>}, sorted. */
    public Map<String, Long> counts() {
        Map<String, Long> out = new TreeMap<>();
        counts.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    private static String key(Object callback, String kind) {
        return callback.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(callback)) + "#" + kind;
    }
}
