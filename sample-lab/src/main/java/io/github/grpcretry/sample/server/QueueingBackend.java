package io.github.grpcretry.sample.server;

import io.grpc.Deadline;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A server's capacity: {@code workers} workers, each serving one call at a time for a fixed service
 * time, behind one FIFO queue of at most {@code queueLimit} calls (a call that finds it full is
 * rejected at once with RESOURCE_EXHAUSTED). Capacity is μ = workers ÷ service time calls per second.
 *
 * <p>No thread sleeps for a service: when a worker takes a call it schedules the call's completion on
 * a timer. Each worker keeps its own clock of when it is free, and a call starts at the later of that
 * and its arrival, so a timer that fires late (a loaded machine) delays answers but never lowers the
 * capacity: the next call still starts when the previous one was due to end.
 *
 * <p>A stall ({@link #stall}, {@link #stallBetween}) is capacity 0: no call starts inside it (calls in
 * service finish), arrivals queue up, and the workers start again when it ends.
 *
 * <p>With {@code dropExpired}, a worker that takes a call off the queue first checks the call's
 * deadline (the gRPC {@code Context} deadline the client's deadline propagation carried in, as it
 * stands when the call would start) and skips a call whose deadline has passed, at no cost: nobody
 * waits for its answer. Without it, the worker serves the call anyway; a service that ends after the
 * caller gave up (cancelled, or its deadline passed) is counted as wasted work.
 */
public final class QueueingBackend implements AutoCloseable {

    /**
     * @param workers calls served at the same time (1–1000)
     * @param serviceTime how long a worker takes per call (&gt; 0)
     * @param queueLimit calls that may wait (1–1,000,000); beyond it an arrival is rejected
     * @param dropExpired skip a call whose deadline has passed when a worker takes it
     */
    public record Settings(int workers, Duration serviceTime, int queueLimit, boolean dropExpired) {

        public Settings {
            if (workers < 1 || workers > 1000) {
                throw new IllegalArgumentException("workers must be in [1, 1000], was " + workers);
            }
            if (serviceTime == null || serviceTime.isNegative() || serviceTime.isZero()) {
                throw new IllegalArgumentException("serviceTime must be > 0, was " + serviceTime);
            }
            if (queueLimit < 1 || queueLimit > 1_000_000) {
                throw new IllegalArgumentException("queueLimit must be in [1, 1000000], was " + queueLimit);
            }
        }

        /** Calls per second the workers serve: workers ÷ service time. */
        public double capacityPerSecond() {
            return workers * 1e9 / serviceTime.toNanos();
        }
    }

    /** One call waiting for a worker; each job is completed or abandoned exactly once. */
    public interface Job {

        /** The call's deadline as the server knows it (its gRPC Context's); null when it has none. */
        Deadline deadline();

        /** Whether the caller has gone (the call was cancelled, by the client or by its deadline). */
        boolean cancelled();

        /** The service is over: answer (on a timer thread; nothing to send when the caller is gone). */
        void complete();

        /** The call is not served (dropped as expired, or the queue was reset): end it with {@code status}. */
        void abandon(Status status);
    }

    /**
     * What happened, with the time it happened at (System.nanoTime), for a caller that buckets it (the
     * lab). Called under the backend's lock: keep it to counting.
     */
    public interface Events {

        /** A call joined the queue, which now holds {@code queueLength} calls. */
        default void arrived(long nanos, int queueLength) {
        }

        /** A call found the queue full. */
        default void rejected(long nanos) {
        }

        /** A worker finished a call at {@code endNanos}; {@code wasted}: its caller had given up. */
        default void served(long endNanos, boolean wasted) {
        }

        /** A worker skipped an expired call at {@code nanos}. */
        default void dropped(long nanos) {
        }
    }

    /** The counters since start (or the last {@link #reset}, which keeps them), and the queue now. */
    public record Snapshot(long arrivals, long rejected, long served, long wasted, long dropped, int queueLength,
            int maxQueueLength, boolean stalled, boolean dropExpired) {
    }

    private static final Events NO_EVENTS = new Events() {
    };

    private record Queued(Job job, long arrivedAt) {
    }

    private static final class Worker {
        /** When this worker is (or was) free, by its own clock: the end of its last service. */
        long freeAt;
        boolean busy;
        /** Waiting for a stall to end (a timer will resume it). */
        boolean waiting;
    }

    private final Settings settings;
    private final long serviceNanos;
    private final Events events;
    private final ScheduledExecutorService timers;
    private final ArrayDeque<Queued> queue = new ArrayDeque<>();
    private final Worker[] workers;
    private volatile boolean dropExpired;
    private long stallFrom;
    private long stallUntil;
    private boolean closed;
    private long arrivals;
    private long rejected;
    private long served;
    private long wasted;
    private long dropped;
    private int maxQueueLength;

    public QueueingBackend(Settings settings) {
        this(settings, NO_EVENTS);
    }

    public QueueingBackend(Settings settings, Events events) {
        this.settings = settings;
        this.serviceNanos = settings.serviceTime().toNanos();
        this.events = events;
        this.dropExpired = settings.dropExpired();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "queueing-backend");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        this.timers = timer;
        this.workers = new Worker[settings.workers()];
        long now = System.nanoTime();
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker();
            workers[i].freeAt = now;
        }
        this.stallFrom = now;
        this.stallUntil = now;
    }

    public Settings settings() {
        return settings;
    }

    public double capacityPerSecond() {
        return settings.capacityPerSecond();
    }

    /** Whether workers skip expired calls (starts as {@link Settings#dropExpired()}; switchable while running). */
    public boolean dropExpired() {
        return dropExpired;
    }

    public void setDropExpired(boolean drop) {
        this.dropExpired = drop;
    }

    /**
     * Queues {@code job}; returns null when queued, or the status to answer at once (RESOURCE_EXHAUSTED
     * when the queue is full, UNAVAILABLE once closed).
     */
    public Status submit(Job job) {
        long now = System.nanoTime();
        List<Runnable> after = new ArrayList<>(0);
        synchronized (this) {
            if (closed) {
                return Status.UNAVAILABLE.withDescription("the backend is closed");
            }
            if (queue.size() >= settings.queueLimit()) {
                rejected++;
                events.rejected(now);
                return Status.RESOURCE_EXHAUSTED.withDescription("queue full (" + settings.queueLimit() + " calls)");
            }
            queue.addLast(new Queued(job, now));
            arrivals++;
            maxQueueLength = Math.max(maxQueueLength, queue.size());
            events.arrived(now, queue.size());
            for (Worker w : workers) {
                if (!w.busy && !w.waiting) {
                    dispatch(w, now, after);
                    break;
                }
            }
        }
        after.forEach(Runnable::run);
        return null;
    }

    /** Capacity 0 for {@code length} from now (replaces a stall not yet over). */
    public void stall(Duration length) {
        long now = System.nanoTime();
        stallBetween(now, now + length.toNanos());
    }

    /** Capacity 0 from {@code fromNanos} until {@code untilNanos} (System.nanoTime readings; may lie ahead). */
    public synchronized void stallBetween(long fromNanos, long untilNanos) {
        if (untilNanos - fromNanos < 0) {
            throw new IllegalArgumentException("a stall must not end before it starts");
        }
        stallFrom = fromNanos;
        stallUntil = untilNanos;
    }

    /** Whether the server is stalled now. */
    public synchronized boolean stalled() {
        return inStall(System.nanoTime());
    }

    /**
     * Empties the queue: every waiting call is abandoned with {@code status} (calls in service finish)
     * and a stall in progress ends. The counters are kept.
     */
    public void reset(Status status) {
        List<Queued> waiting;
        synchronized (this) {
            waiting = new ArrayList<>(queue);
            queue.clear();
            long now = System.nanoTime();
            stallFrom = now;
            stallUntil = now;
            for (Worker w : workers) {
                if (w.waiting) {
                    w.waiting = false; // its resume timer finds it idle and does nothing
                    w.freeAt = now;
                }
            }
        }
        for (Queued q : waiting) {
            abandon(q.job(), status);
        }
    }

    public synchronized int queueLength() {
        return queue.size();
    }

    /** The counters and the queue now; {@code maxQueueLength} is the longest queue since the previous snapshot. */
    public synchronized Snapshot snapshot() {
        Snapshot s = new Snapshot(arrivals, rejected, served, wasted, dropped, queue.size(), maxQueueLength,
                inStall(System.nanoTime()), dropExpired);
        maxQueueLength = queue.size();
        return s;
    }

    @Override
    public void close() {
        List<Queued> waiting;
        synchronized (this) {
            closed = true;
            waiting = new ArrayList<>(queue);
            queue.clear();
        }
        timers.shutdownNow();
        for (Queued q : waiting) {
            abandon(q.job(), Status.UNAVAILABLE.withDescription("the backend is closed"));
        }
    }

    private boolean inStall(long t) {
        return t - stallFrom >= 0 && t - stallUntil < 0;
    }

    /**
     * Worker {@code w} is free: it takes the next call (under the lock). Skipped calls are abandoned by
     * {@code after}, outside the lock.
     */
    private void dispatch(Worker w, long now, List<Runnable> after) {
        while (!closed) {
            Queued q = queue.peekFirst();
            if (q == null) {
                return; // idle until the next arrival
            }
            long start = Math.max(w.freeAt, q.arrivedAt());
            if (inStall(start)) {
                w.waiting = true;
                w.freeAt = stallUntil;
                schedule(() -> resume(w), stallUntil - now);
                return;
            }
            queue.pollFirst();
            if (dropExpired && expiredAt(q.job(), start, now)) {
                dropped++;
                events.dropped(start);
                after.add(() -> abandon(q.job(), Status.DEADLINE_EXCEEDED.withDescription(
                        "dropped: the deadline had passed when a worker took the call")));
                continue;
            }
            long end = start + serviceNanos;
            w.busy = true;
            w.freeAt = end;
            schedule(() -> complete(w, q, end), end - now);
            return;
        }
    }

    private void schedule(Runnable r, long delayNanos) {
        try {
            timers.schedule(r, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // closed: nothing runs any more
        }
    }

    /** Whether {@code job}'s deadline has passed at {@code at} (a worker's clock), read at {@code now}. */
    private static boolean expiredAt(Job job, long at, long now) {
        Deadline d = job.deadline();
        return d != null && d.timeRemaining(TimeUnit.NANOSECONDS) - (at - now) <= 0;
    }

    private void resume(Worker w) {
        List<Runnable> after = new ArrayList<>(0);
        synchronized (this) {
            w.waiting = false;
            if (!w.busy) {
                dispatch(w, System.nanoTime(), after);
            }
        }
        after.forEach(Runnable::run);
    }

    private void complete(Worker w, Queued q, long end) {
        long now = System.nanoTime();
        boolean gone = q.job().cancelled() || expiredAt(q.job(), end, now);
        synchronized (this) {
            served++;
            if (gone) {
                wasted++;
            }
            events.served(end, gone);
        }
        try {
            if (!gone) {
                q.job().complete();
            } else if (!q.job().cancelled()) {
                q.job().abandon(Status.DEADLINE_EXCEEDED.withDescription("served after the deadline"));
            }
        } catch (RuntimeException e) {
            // the call ended meanwhile: nothing to answer
        }
        List<Runnable> after = new ArrayList<>(0);
        synchronized (this) {
            w.busy = false;
            if (!w.waiting) {
                dispatch(w, System.nanoTime(), after);
            }
        }
        after.forEach(Runnable::run);
    }

    private static void abandon(Job job, Status status) {
        try {
            if (!job.cancelled()) {
                job.abandon(status);
            }
        } catch (RuntimeException e) {
            // the call ended meanwhile
        }
    }
}
