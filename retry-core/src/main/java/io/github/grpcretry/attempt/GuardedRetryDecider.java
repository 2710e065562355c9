package io.github.grpcretry.attempt;

import io.github.grpcretry.internal.callback.CallbackFailures;
import io.grpc.Metadata;
import io.grpc.Status;

/**
 * An application's {@link RetryDecider} as the engine holds it: a throw is logged once per kind of call
 * and counted ({@link CallbackFailures}), and the engine takes the safe answer (docs/design.md §14):
 * one attempt only, not retryable.
 */
final class GuardedRetryDecider implements RetryDecider {

    private static final String ROLE = "RetryDecider";

    private final RetryDecider delegate;

    private GuardedRetryDecider(RetryDecider delegate) {
        this.delegate = delegate;
    }

    static RetryDecider guard(RetryDecider decider) {
        return decider instanceof GuardedRetryDecider ? decider : new GuardedRetryDecider(decider);
    }

    @Override
    public int maxAttempts() {
        try {
            return delegate.maxAttempts();
        } catch (RuntimeException e) {
            CallbackFailures.SHARED.failed(ROLE, delegate, "maxAttempts", e, "the call makes one attempt only");
            return 1;
        }
    }

    @Override
    public boolean isRetryable(Status status, Metadata trailers) {
        try {
            return delegate.isRetryable(status, trailers);
        } catch (RuntimeException e) {
            CallbackFailures.SHARED.failed(ROLE, delegate, "isRetryable", e, "counts as not retryable");
            return false;
        }
    }

    @Override
    public Call newCall(CallTarget target) {
        Call call;
        try {
            call = delegate.newCall(target);
        } catch (RuntimeException e) {
            CallbackFailures.SHARED.failed(ROLE, delegate, "newCall", e, "the call is not retried");
            return NOT_RETRYABLE_CALL;
        }
        return new GuardedCall(call);
    }

    @Override
    public String toString() {
        return delegate.toString();
    }

    private static final Call NOT_RETRYABLE_CALL = new Call() {
        @Override
        public Decision onFailure(int attemptNumber, Status status, Metadata trailers) {
            return Decision.notRetryable();
        }

        @Override
        public void onClose(Status status, int attempts) {
        }
    };

    private final class GuardedCall implements Call {

        private final Call call;

        GuardedCall(Call call) {
            this.call = call;
        }

        @Override
        public Decision onFailure(int attemptNumber, Status status, Metadata trailers) {
            try {
                Decision d = call.onFailure(attemptNumber, status, trailers);
                return d == null ? Decision.notRetryable() : d;
            } catch (RuntimeException e) {
                CallbackFailures.SHARED.failed(ROLE, delegate, "onFailure", e, "counts as not retryable");
                return Decision.notRetryable();
            }
        }

        @Override
        public void onClose(Status status, int attempts) {
            try {
                call.onClose(status, attempts);
            } catch (RuntimeException e) {
                CallbackFailures.SHARED.failed(ROLE, delegate, "onClose", e, "ignored, the call has ended");
            }
        }
    }
}
