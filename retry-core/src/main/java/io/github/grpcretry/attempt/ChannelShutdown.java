package io.github.grpcretry.attempt;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The shut-down of the channel below the engine, which is no failure of the server (docs/design.md §18): an
 * attempt the channel itself closed because it is shut down ends the call with that status, and, where the
 * engine knows the {@link ManagedChannel} (handed it by {@code ClientInterceptors.intercept(channel, engine)}, or
 * told of it by {@link RetryingClientInterceptor#watchShutdown}), a call waiting for a timer ends as soon as the
 * channel shuts down. One watch per channel keeps one state
 * listener registered while calls wait, so nothing piles up on a channel whose state does not change.
 */
final class ChannelShutdown {

    private static final String SHUTDOWN_TEXT = "Channel shutdown invoked";
    private static final String SHUTDOWN_NOW_TEXT = "Channel shutdownNow invoked";
    /** grpc-java's status for a call on a shut-down channel (and of a call that waited for a timer then). */
    static final Status SHUTDOWN = Status.UNAVAILABLE.withDescription(SHUTDOWN_TEXT);

    private final ManagedChannel channel;
    /** What each call waiting for a timer does when the channel shuts down. */
    private final Set<Runnable> waiting = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean armed = new AtomicBoolean();

    ChannelShutdown(ManagedChannel channel) {
        this.channel = channel;
    }

    ManagedChannel channel() {
        return channel;
    }

    /**
     * Whether {@code status} is grpc-java's own close of an attempt because the channel below is shut down
     * ({@code shutdown()}: a new stream fails; {@code shutdownNow()}: the streams open are closed):
     * its text, on a channel that really is shut down when the engine knows it ({@code watch} not null), and never a
     * status the server sent ({@code serverSent}: the attempt's stream received trailers; a server, or a service that
     * passes on the status of its own call below while its channel shuts down, may send the same text).
     */
    static boolean closedByShutdown(Status status, boolean serverSent, @Nullable ChannelShutdown watch) {
        if (serverSent || status.getCode() != Status.Code.UNAVAILABLE) {
            return false;
        }
        String d = status.getDescription();
        boolean text = SHUTDOWN_TEXT.equals(d) || SHUTDOWN_NOW_TEXT.equals(d);
        return text && (watch == null || watch.channel.isShutdown());
    }

    /** {@code onShutdown} runs (on {@code executor}) when the channel shuts down, unless removed first. */
    void add(Runnable onShutdown, Executor executor) {
        waiting.add(onShutdown);
        if (channel.isShutdown()) {
            fire(onShutdown, executor);
        } else {
            arm();
        }
    }

    void remove(Runnable onShutdown) {
        waiting.remove(onShutdown);
    }

    /** One listener at a time, while calls wait: a state change re-arms it until the channel shuts down. */
    private void arm() {
        if (!armed.compareAndSet(false, true)) {
            return;
        }
        ConnectivityState state = channel.getState(false);
        if (state == ConnectivityState.SHUTDOWN) {
            changed(); // no change follows SHUTDOWN
        } else {
            channel.notifyWhenStateChanged(state, this::changed); // at once when it changed meanwhile
        }
    }

    private void changed() {
        armed.set(false);
        if (channel.isShutdown()) {
            for (Runnable r : waiting) {
                if (waiting.remove(r)) {
                    r.run(); // on the channel's executor: the call ends on its own executor
                }
            }
        } else if (!waiting.isEmpty()) {
            arm();
        }
    }

    private void fire(Runnable onShutdown, Executor executor) {
        if (!waiting.remove(onShutdown)) {
            return;
        }
        try {
            executor.execute(onShutdown);
        } catch (RejectedExecutionException e) {
            onShutdown.run();
        }
    }
}
