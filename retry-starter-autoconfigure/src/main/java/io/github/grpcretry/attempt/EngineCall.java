package io.github.grpcretry.attempt;

import io.grpc.ClientCall;
import io.grpc.Status;

/**
 * What {@link RetryingCall} and {@link HedgingCall} share as calls: the pass-through to the committed
 * attempt once it has caught up, and the entry points that only forward to it or to the engine.
 * No state beyond the pass-through field, so a call allocates nothing more.
 *
 * @param <A> the call's attempt type
 */
abstract class EngineCall<ReqT, RespT, A extends EngineCall.EngineAttempt<ReqT, RespT>>
        extends ClientCall<ReqT, RespT> {

    /** One attempt: a listener on the channel's call it made (set when it starts). */
    abstract static class EngineAttempt<ReqT, RespT> extends ClientCall.Listener<RespT> {
        ClientCall<ReqT, RespT> call;
    }

    /** The committed attempt once it has caught up: every call goes straight to it. */
    volatile A passThrough;

    @Override
    public final void sendMessage(ReqT message) {
        A p = passThrough;
        if (p != null) {
            p.call.sendMessage(message);
            return;
        }
        sendMessageUncommitted(message);
    }

    @Override
    public final void cancel(String message, Throwable cause) {
        A p = passThrough;
        if (p != null) {
            p.call.cancel(message, cause);
            return;
        }
        cancelWith(CallSupport.cancelStatus(message, cause), message, cause);
    }

    /** Sends {@code message} while no attempt passes through. */
    abstract void sendMessageUncommitted(ReqT message);

    /** Cancels the call (application or Context) while no attempt passes through (checked again under lock). */
    abstract void cancelWith(Status status, String message, Throwable cause);
}
