package io.github.grpcretry.attempt;

import io.github.grpcretry.budget.RetryBudget;
import io.github.grpcretry.throttle.RetryThrottle;
import io.grpc.ClientCall;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.Status;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/** Stateless helpers of the engine's calls (no objects of their own, so the success path allocates nothing more). */
final class CallSupport {

    private CallSupport() {
    }

    /** The arguments of {@link ClientCall#start}: both must be given. */
    static void checkStartArguments(Object responseListener, Metadata startHeaders) {
        if (responseListener == null || startHeaders == null) {
            throw new NullPointerException("listener and headers must not be null");
        }
    }

    /** Drops any attempt header of the application's: the engine owns it (SEMANTICS §1). */
    static void discardAttemptHeader(Metadata startHeaders) {
        if (startHeaders.containsKey(RetryingCall.PREVIOUS_ATTEMPTS)) {
            startHeaders.discardAll(RetryingCall.PREVIOUS_ATTEMPTS);
        }
    }

    /** Adds the {@code grpc-previous-rpc-attempts} header to the headers of attempt {@code number} (after the first). */
    static void putAttemptHeader(Metadata attemptHeaders, int number) {
        if (number > 1) {
            attemptHeaders.put(RetryingCall.PREVIOUS_ATTEMPTS, RetryingCall.previousAttemptsValue(number - 1));
        }
    }

    /** A call starts: counted by the channel's budget (if any) and reported. */
    static void callStarted(RetryingClientInterceptor engine, CallTarget target) {
        RetryBudget budget = engine.budget;
        if (budget != null) {
            budget.onCall();
        }
        engine.events.callStarted(target);
    }

    /** A call ended {@code ok}: the channel's throttle (if any) is told of the success. */
    static void succeeded(RetryingClientInterceptor engine, boolean ok) {
        if (ok) {
            RetryThrottle throttle = engine.throttle;
            if (throttle != null) {
                throttle.onSuccess();
            }
        }
    }

    /** The status of a call cancelled by the application. */
    static Status cancelStatus(String message, Throwable cause) {
        Status status = Status.CANCELLED.withDescription(message != null ? message : "Call cancelled without message");
        if (cause != null) {
            status = status.withCause(cause);
        }
        return status;
    }

    /** Asks {@code call} for {@code demand} more messages, in {@code int} steps. */
    static void request(ClientCall<?, ?> call, long demand) {
        while (demand > 0) {
            int n = (int) Math.min(demand, Integer.MAX_VALUE);
            call.request(n);
            demand -= n;
        }
    }

    /**
     * Runs {@code task} on {@code executor}, or on this thread when the executor refuses it (an
     * application's executor that was shut down): the task closes the application's listener, which
     * must happen either way. Used only where no other callback of the call can be running.
     */
    static void executeOrRunHere(Executor executor, Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /**
     * Demand that takes a stream's outstanding demand to at most {@code Integer.MAX_VALUE}, whatever
     * it delivered of the {@code demanded} it was asked for in all.
     */
    static int demandUpToMax(long demanded) {
        return (int) (Integer.MAX_VALUE - Math.min(Math.max(0, demanded), Integer.MAX_VALUE));
    }

    /** The earlier of two deadlines (null: none). */
    static Deadline earlier(Deadline a, Deadline b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return a.timeRemaining(TimeUnit.NANOSECONDS) <= b.timeRemaining(TimeUnit.NANOSECONDS) ? a : b;
    }
}
