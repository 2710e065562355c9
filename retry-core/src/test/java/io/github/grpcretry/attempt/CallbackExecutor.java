package io.github.grpcretry.attempt;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An executor for calls' callbacks ({@code CallOptions.withExecutor}) that knows when it is idle: every
 * task it was given has finished. Once the engine has nothing live (no attempt open, no timer
 * scheduled), an idle callback executor means no callback is queued or running, so a check made then
 * sees the final state: an event to wait for instead of "a late callback would show up within 50 ms".
 */
final class CallbackExecutor implements Executor, AutoCloseable {

    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "test-callbacks");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong submitted = new AtomicLong();
    private final AtomicLong finished = new AtomicLong();

    @Override
    public void execute(Runnable command) {
        submitted.incrementAndGet();
        try {
            pool.execute(() -> {
                try {
                    command.run();
                } finally {
                    finished.incrementAndGet();
                }
            });
        } catch (RuntimeException e) {
            finished.incrementAndGet();
            throw e;
        }
    }

    /** Whether every task given so far has finished. */
    boolean idle() {
        return finished.get() == submitted.get();
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
