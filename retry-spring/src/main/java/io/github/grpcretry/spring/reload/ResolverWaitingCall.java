package io.github.grpcretry.spring.reload;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.grpc.Attributes;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A call of a channel whose name resolver has not answered yet (its first answer may carry a service config
 * with retry policies the engine is to run): it keeps what the application does with it until
 * {@link #release} is called, then makes the channel's call (the engine's, with the policies of that moment)
 * and replays it there in order; from then on everything passes through. grpc-java's own calls wait for
 * the resolver's first answer the same way. It is released by the resolver's first answer (or error, or the
 * resolver's shutdown), by the call's deadline (the call made then fails at once with DEADLINE_EXCEEDED), by
 * the cancellation of the application's context, or by {@link #cancel}.
 */
final class ResolverWaitingCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

    /** One daemon thread: releases the waiting calls (never on the resolver's thread) and fires their deadlines. */
    private static final class Timer {
        static final ScheduledExecutorService INSTANCE = create();

        private static ScheduledExecutorService create() {
            ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "grpc-retry-resolver-wait");
                t.setDaemon(true);
                return t;
            });
            timer.setRemoveOnCancelPolicy(true);
            return timer;
        }
    }

    private final Supplier<ClientCall<ReqT, RespT>> channelCall;
    private final Context context;
    private final @Nullable Deadline deadline;
    private final Object lock = new Object();
    @GuardedBy("lock")
    private List<Consumer<ClientCall<ReqT, RespT>>> pending = new ArrayList<>();
    @GuardedBy("lock")
    private boolean released;
    @GuardedBy("lock")
    private @Nullable ScheduledFuture<?> expiry;
    private volatile @Nullable ClientCall<ReqT, RespT> passThrough;
    private final Context.CancellationListener onCancelled = cancelled -> release();

    /**
     * @param channelCall makes the channel's call (called once, in the application's context)
     * @param deadline the call's deadline; absent = none
     */
    ResolverWaitingCall(Supplier<ClientCall<ReqT, RespT>> channelCall, @Nullable Deadline deadline) {
        this.channelCall = channelCall;
        this.context = Context.current();
        Deadline contextDeadline = context.getDeadline();
        this.deadline = deadline == null ? contextDeadline
                : contextDeadline == null ? deadline : deadline.minimum(contextDeadline);
    }

    /** Makes the channel's call and replays what was kept on it, on the wait thread (not the caller's). */
    void release() {
        synchronized (lock) {
            if (released) {
                return;
            }
            released = true;
            if (expiry != null) {
                expiry.cancel(false);
            }
        }
        context.removeListener(onCancelled);
        Timer.INSTANCE.execute(this::drain);
    }

    private void drain() {
        Context previous = context.attach();
        try {
            ClientCall<ReqT, RespT> call = channelCall.get();
            while (true) {
                List<Consumer<ClientCall<ReqT, RespT>>> ops;
                synchronized (lock) {
                    if (pending.isEmpty()) {
                        passThrough = call;
                        return;
                    }
                    ops = pending;
                    pending = new ArrayList<>();
                }
                for (Consumer<ClientCall<ReqT, RespT>> op : ops) {
                    op.accept(call);
                }
            }
        } finally {
            context.detach(previous);
        }
    }

    private void run(Consumer<ClientCall<ReqT, RespT>> op) {
        ClientCall<ReqT, RespT> call = passThrough;
        if (call == null) {
            synchronized (lock) {
                call = passThrough;
                if (call == null) {
                    pending.add(op);
                    return;
                }
            }
        }
        op.accept(call);
    }

    @Override
    public void start(Listener<RespT> listener, Metadata headers) {
        run(c -> c.start(listener, headers));
        if (deadline != null) {
            synchronized (lock) {
                if (!released) {
                    expiry = deadline.runOnExpiration(this::release, Timer.INSTANCE);
                }
            }
        }
        context.addListener(onCancelled, Runnable::run);
    }

    @Override
    public void request(int numMessages) {
        run(c -> c.request(numMessages));
    }

    @Override
    public void cancel(@Nullable String message, @Nullable Throwable cause) {
        run(c -> c.cancel(message, cause));
        release();
    }

    @Override
    public void halfClose() {
        run(ClientCall::halfClose);
    }

    @Override
    public void sendMessage(ReqT message) {
        run(c -> c.sendMessage(message));
    }

    @Override
    public void setMessageCompression(boolean enabled) {
        run(c -> c.setMessageCompression(enabled));
    }

    @Override
    public boolean isReady() {
        ClientCall<ReqT, RespT> call = passThrough;
        return call != null && call.isReady();
    }

    @Override
    public Attributes getAttributes() {
        ClientCall<ReqT, RespT> call = passThrough;
        return call == null ? Attributes.EMPTY : call.getAttributes();
    }
}
