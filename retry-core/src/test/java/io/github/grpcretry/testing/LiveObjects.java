package io.github.grpcretry.testing;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Weak references to the objects a retry engine makes for each call, to check after a run that
 * none of them is still reachable: a call, an attempt, a listener or a timer kept alive after its
 * call ended is a leak that a heap-size check hides until it is large.
 *
 * <p>The objects are seen from outside the engine, with no hook in it:
 * <ul>
 *   <li>{@link #above()}, installed above the engine, tracks the {@link ClientCall} the engine
 *       returns for each logical call (the interceptor engine's call object; with the native
 *       engine, the call {@code NativeAttemptInterceptor} returns);</li>
 *   <li>{@link #below()}, installed below the engine, tracks each attempt's {@link ClientCall}
 *       (the channel's call) and the listener the engine starts it with (the engine's attempt), and
 *       every {@link ClientStreamTracer.Factory} of the starter's own in the call options (the
 *       native path's per-call attempt tracker);</li>
 *   <li>{@link #timers}, given to the engine's scheduler, tracks every task scheduled on it and its
 *       future.</li>
 * </ul>
 * {@link #survivorsAfterGc} runs the collector until every tracked object is cleared (each clearing
 * arrives on a {@link ReferenceQueue}) or a bounded wait passes, and lists what is left.
 */
public final class LiveObjects {

    private final ReferenceQueue<Object> queue = new ReferenceQueue<>();
    private final Set<Tracked> alive = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicLong> trackedByKind = new ConcurrentHashMap<>();

    private static final class Tracked extends WeakReference<Object> {
        final String kind;
        final String label;

        Tracked(Object referent, ReferenceQueue<Object> queue, String kind, String label) {
            super(referent, queue);
            this.kind = kind;
            this.label = label;
        }
    }

    /** Tracks {@code o} as one of {@code kind}; {@code label} names it in the list of survivors. */
    public void track(String kind, Object o, String label) {
        if (o == null) {
            return;
        }
        alive.add(new Tracked(o, queue, kind, label + " " + o.getClass().getName()));
        trackedByKind.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
        drain();
    }

    /** How many objects of each kind were tracked so far. */
    public Map<String, Long> tracked() {
        Map<String, Long> out = new TreeMap<>();
        trackedByKind.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    /** Tracked objects not cleared yet (without running the collector). */
    public int aliveNow() {
        drain();
        return alive.size();
    }

    private void drain() {
        Reference<?> r;
        while ((r = queue.poll()) != null) {
            alive.remove(r);
        }
    }

    /**
     * Runs the collector until every tracked object has been cleared, waiting for each clearing on
     * the reference queue (a collection is asked for again when none arrives within 200 ms), for at
     * most {@code timeoutMillis}. Returns the survivors by kind and class, with up to 20 labels;
     * empty when none is left.
     */
    public List<String> survivorsAfterGc(long timeoutMillis) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        drain();
        while (!alive.isEmpty() && System.nanoTime() < end) {
            System.gc();
            Reference<?> r = queue.remove(200);
            if (r != null) {
                alive.remove(r);
                drain();
            }
        }
        Map<String, Integer> byClass = new TreeMap<>();
        List<String> labels = new ArrayList<>();
        for (Tracked t : alive) {
            Object o = t.get();
            if (o == null) {
                continue; // cleared, not yet enqueued
            }
            byClass.merge(t.kind + ": " + o.getClass().getName(), 1, Integer::sum);
            if (labels.size() < 20) {
                labels.add(t.kind + " " + t.label);
            }
        }
        List<String> out = new ArrayList<>();
        byClass.forEach((k, n) -> out.add(n + " x " + k));
        if (!labels.isEmpty()) {
            out.add("first survivors: " + labels);
        }
        return out;
    }

    /** The interceptor to install above the engine: tracks the call the engine returns ("engine call"). */
    public ClientInterceptor above() {
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                    CallOptions callOptions, Channel next) {
                ClientCall<ReqT, RespT> call = next.newCall(method, callOptions);
                return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        track("engine call", call, label(method, headers));
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    /**
     * The interceptor to install below the engine: tracks each call the engine makes there ("call
     * below the engine": with the interceptor engine one per attempt), the listener the engine starts
     * it with ("listener below the engine": the interceptor engine's attempt) and the starter's stream
     * tracer factories in its call options ("stream tracer factory").
     */
    public ClientInterceptor below() {
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                    CallOptions callOptions, Channel next) {
                ClientCall<ReqT, RespT> call = next.newCall(method, callOptions);
                return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        String label = label(method, headers);
                        track("call below the engine", call, label);
                        track("listener below the engine", listener, label);
                        for (ClientStreamTracer.Factory f : callOptions.getStreamTracerFactories()) {
                            if (f.getClass().getName().startsWith("io.github.grpcretry.")) {
                                track("stream tracer factory", f, label);
                            }
                        }
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    private static String label(MethodDescriptor<?, ?> method, Metadata headers) {
        String id = headers.get(SimpleCalls.CALL_ID);
        return (id == null ? "?" : id) + " " + method.getBareMethodName();
    }

    /**
     * A timer pool, set up as the engine's own ({@code RetryScheduler.create}: daemon threads,
     * cancelled tasks removed at once, none run after shutdown), that tracks every task scheduled on
     * it and its future ("scheduled task"). Pass it to {@code RetryScheduler.of}; shut it down after.
     */
    public ScheduledThreadPoolExecutor timers(int threads, String namePrefix) {
        AtomicInteger n = new AtomicInteger();
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(threads, r -> {
            Thread t = new Thread(r, namePrefix + "-timer-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        }) {
            @Override
            protected <V> RunnableScheduledFuture<V> decorateTask(Runnable runnable, RunnableScheduledFuture<V> task) {
                track("scheduled task", runnable, "timer");
                track("scheduled task", task, "timer's future");
                return task;
            }
        };
        timers.setRemoveOnCancelPolicy(true);
        timers.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        return timers;
    }
}
