package io.github.grpcretry.sample.demo;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.event.ContextClosedEvent;

/**
 * Runs a demo component's task on a daemon thread at a fixed rate while the application runs: from
 * {@link ApplicationReadyEvent} (the gRPC server is listening) until the context closes. A run that throws
 * is logged and the next one runs as scheduled.
 */
final class DemoTicker {

    private static final Logger log = LoggerFactory.getLogger(DemoTicker.class);

    private final String name;
    private final Duration period;
    private final Runnable task;
    private ScheduledExecutorService executor;

    /**
     * @param name the thread's name, also used in the log when a run fails
     * @param period the time from one run's start to the next, and before the first
     */
    DemoTicker(String name, Duration period, Runnable task) {
        this.name = name;
        this.period = period;
        this.task = task;
    }

    /** Starts on {@link ApplicationReadyEvent}, stops on {@link ContextClosedEvent}; other events change nothing. */
    void on(ApplicationEvent event) {
        if (event instanceof ApplicationReadyEvent) {
            start();
        } else if (event instanceof ContextClosedEvent) {
            stop();
        }
    }

    private synchronized void start() {
        if (executor != null) {
            return;
        }
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        long nanos = period.toNanos();
        executor.scheduleAtFixedRate(this::runOnce, nanos, nanos, TimeUnit.NANOSECONDS);
    }

    private void runOnce() {
        try {
            task.run();
        } catch (RuntimeException e) {
            log.warn("{} failed", name, e);
        }
    }

    private synchronized void stop() {
        if (executor != null) {
            executor.shutdownNow();
            executor = null;
        }
    }
}
