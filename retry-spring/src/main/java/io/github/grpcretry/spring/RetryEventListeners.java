package io.github.grpcretry.spring;

import org.jspecify.annotations.Nullable;
import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardEventListener;
import io.grpc.Status;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * One listener for several, for the deadline interceptor and the guard on both lines (the engine's is
 * {@code RetryEventListener.composite}). A listener that throws is logged once per listener and event
 * (WARN, with the exception), then skipped for that event; the call and the other listeners go on.
 */
public final class RetryEventListeners {

    private static final Log log = LogFactory.getLog(RetryEventListeners.class);
    private static final Set<String> warned = ConcurrentHashMap.newKeySet();

    private RetryEventListeners() {
    }

    private static <L> void each(List<L> listeners, String event, Consumer<L> call) {
        for (L l : listeners) {
            try {
                call.accept(l);
            } catch (RuntimeException e) {
                if (warned.add(l.getClass().getName() + "#" + event)) {
                    log.warn("Event listener " + l + " failed in " + event + " (further failures of it there are not logged)", e);
                }
            }
        }
    }

    /** The deadline interceptor's listener (null for none). */
    public static @Nullable DeadlineEventListener deadlines(List<DeadlineEventListener> listeners) {
        if (listeners.isEmpty()) {
            return null;
        }
        return new DeadlineEventListener() {
            @Override
            public void deadlineRemaining(CallTarget target, long remainingNanos) {
                each(listeners, "deadlineRemaining", l -> l.deadlineRemaining(target, remainingNanos));
            }

            @Override
            public void fastFail(CallTarget target) {
                each(listeners, "fastFail", l -> l.fastFail(target));
            }
        };
    }

    /** The guard's listener. */
    public static GuardEventListener guard(List<GuardEventListener> listeners) {
        if (listeners.isEmpty()) {
            return GuardEventListener.NOOP;
        }
        return new GuardEventListener() {
            @Override
            public void inboundMarked(String inboundMethod, String downstreamMethod, Status.Code code) {
                each(listeners, "inboundMarked", l -> l.inboundMarked(inboundMethod, downstreamMethod, code));
            }

            @Override
            public void responseGuarded(String fullMethodName, Status.Code code) {
                each(listeners, "responseGuarded", l -> l.responseGuarded(fullMethodName, code));
            }
        };
    }
}
