package io.github.grpcretry.attempt;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The timers of a grpc-java channel (its transport's scheduled executor, which its retry engine
 * schedules backoffs on), counting the delays scheduled between {@code minNanos} and
 * {@code maxNanos} (a backoff's jitter range; the channel's own timers, such as its 30-minute idle
 * timer, fall outside it): the event "grpc-java has scheduled a backoff", which its API does not
 * expose. In-process channels take a
 * {@link ScheduledExecutorService}, Netty channels an {@link EventLoopGroup}; both are closed with
 * this object.
 */
final class NativeTimers implements AutoCloseable {

    private final long minNanos;
    private final long maxNanos;
    private final AtomicInteger scheduled = new AtomicInteger();
    private ScheduledThreadPoolExecutor inProcess;
    private NioEventLoopGroup netty;

    NativeTimers(long minNanos, long maxNanos) {
        this.minNanos = minNanos;
        this.maxNanos = maxNanos;
    }

    private void record(long delay, TimeUnit unit) {
        long nanos = unit.toNanos(delay);
        if (nanos >= minNanos && nanos <= maxNanos) {
            scheduled.incrementAndGet();
        }
    }

    /** Delays in the range scheduled so far. */
    int scheduled() {
        return scheduled.get();
    }

    synchronized ScheduledExecutorService forInProcess() {
        if (inProcess == null) {
            inProcess = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "native-timers");
                t.setDaemon(true);
                return t;
            }) {
                @Override
                public java.util.concurrent.ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
                    record(delay, unit);
                    return super.schedule(command, delay, unit);
                }
            };
        }
        return inProcess;
    }

    synchronized EventLoopGroup forNetty() {
        if (netty == null) {
            netty = new NioEventLoopGroup(1) {
                @Override
                public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
                    record(delay, unit);
                    return super.schedule(command, delay, unit);
                }
            };
        }
        return netty;
    }

    @Override
    public synchronized void close() {
        if (inProcess != null) {
            inProcess.shutdownNow();
        }
        if (netty != null) {
            netty.shutdownGracefully(0, 5, TimeUnit.SECONDS);
        }
    }
}
