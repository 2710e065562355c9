package io.github.grpcretry.attempt;

import io.github.grpcretry.internal.callback.CallbackFailures;
import io.grpc.Metadata;
import io.grpc.Status;
import org.jspecify.annotations.Nullable;

/**
 * An application's {@link AttemptObserver} as the engine holds it: a throw is logged once per kind of
 * callback and counted ({@link CallbackFailures}), and the call goes on unobserved from there
 * (docs/design.md §14). grpc-retry's own observer guards its handlers itself and is not wrapped.
 */
final class GuardedAttemptObserver implements AttemptObserver {

    private static final String ROLE = "AttemptObserver";
    private static final String OUTCOME = "the attempt is not observed, the call goes on";
    private static final Scope NO_SCOPE = () -> { };
    private static final Attempt NO_ATTEMPT = new Attempt() {
        @Override
        public Scope openScope() {
            return NO_SCOPE;
        }

        @Override
        public void ended(Status status, Metadata trailers, boolean committed, boolean cancelledByEngine) {
        }
    };

    private final AttemptObserver delegate;

    private GuardedAttemptObserver(AttemptObserver delegate) {
        this.delegate = delegate;
    }

    /** {@code observer} guarded, unless absent or grpc-retry's own. */
    static @Nullable AttemptObserver guard(@Nullable AttemptObserver observer) {
        if (observer == null || observer instanceof GuardedAttemptObserver
                || observer.getClass().getName().equals("io.github.grpcretry.observation.ObservationAttemptObserver")) {
            return observer;
        }
        return new GuardedAttemptObserver(observer);
    }

    private void failed(String kind, RuntimeException e) {
        CallbackFailures.SHARED.failed(ROLE, delegate, kind, e, OUTCOME);
    }

    @Override
    public @Nullable Call callStarted(CallTarget target) {
        Call call;
        try {
            call = delegate.callStarted(target);
        } catch (RuntimeException e) {
            failed("callStarted", e);
            return null;
        }
        return call == null ? null : new GuardedCall(call);
    }

    private final class GuardedCall implements Call {
        private final Call call;

        GuardedCall(Call call) {
            this.call = call;
        }

        @Override
        public Attempt attemptStarting(AttemptKind kind, int attemptNumber, long delayNanos, Metadata headers) {
            return attemptStarting(kind, attemptNumber, delayNanos, null, headers);
        }

        @Override
        public Attempt attemptStarting(AttemptKind kind, int attemptNumber, long delayNanos, @Nullable DelaySource source,
                Metadata headers) {
            try {
                Attempt a = source == null ? call.attemptStarting(kind, attemptNumber, delayNanos, headers)
                        : call.attemptStarting(kind, attemptNumber, delayNanos, source, headers);
                return a == null ? NO_ATTEMPT : new GuardedAttempt(a);
            } catch (RuntimeException e) {
                failed("attemptStarting", e);
                return NO_ATTEMPT;
            }
        }

        @Override
        public void retrySuppressed(SuppressionReason reason, Status.Code code) {
            try {
                call.retrySuppressed(reason, code);
            } catch (RuntimeException e) {
                failed("retrySuppressed", e);
            }
        }
    }

    private final class GuardedAttempt implements Attempt {
        private final Attempt attempt;

        GuardedAttempt(Attempt attempt) {
            this.attempt = attempt;
        }

        @Override
        public Scope openScope() {
            Scope scope;
            try {
                scope = attempt.openScope();
            } catch (RuntimeException e) {
                failed("openScope", e);
                return NO_SCOPE;
            }
            return scope == null ? NO_SCOPE : () -> {
                try {
                    scope.close();
                } catch (RuntimeException e) {
                    failed("closeScope", e);
                }
            };
        }

        @Override
        public void ended(Status status, Metadata trailers, boolean committed, boolean cancelledByEngine) {
            try {
                attempt.ended(status, trailers, committed, cancelledByEngine);
            } catch (RuntimeException e) {
                failed("ended", e);
            }
        }

        @Override
        public void transparentRetry() {
            try {
                attempt.transparentRetry();
            } catch (RuntimeException e) {
                failed("transparentRetry", e);
            }
        }

        @Override
        public void peer(java.net.SocketAddress address) {
            try {
                attempt.peer(address);
            } catch (RuntimeException e) {
                failed("peer", e);
            }
        }
    }
}
