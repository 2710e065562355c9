package io.github.grpcretry.attempt;

import io.grpc.Attributes;
import io.grpc.ClientCall;
import io.grpc.Status;

/**
 * What {@link RetryingCall} and {@link HedgingCall} share as calls: the pass-through to the committed
 * attempt once it has caught up, and every entry point's fast path to it (a volatile read and a
 * direct call); the engines implement the rest, for a call no attempt passes through yet.
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

    @Override
    public final void request(int numMessages) {
        A p = passThrough;
        if (p != null) {
            p.call.request(numMessages);
            return;
        }
        requestUncommitted(numMessages);
    }

    @Override
    public final void halfClose() {
        A p = passThrough;
        if (p != null) {
            p.call.halfClose();
            return;
        }
        halfCloseUncommitted();
    }

    @Override
    public final boolean isReady() {
        A p = passThrough;
        return p != null ? p.call.isReady() : isReadyUncommitted();
    }

    @Override
    public final void setMessageCompression(boolean enabled) {
        A p = passThrough;
        if (p != null) {
            p.call.setMessageCompression(enabled);
            return;
        }
        setMessageCompressionUncommitted(enabled);
    }

    @Override
    public final Attributes getAttributes() {
        A p = passThrough;
        return p != null ? p.call.getAttributes() : getAttributesUncommitted();
    }

    /** Sends {@code message} while no attempt passes through. */
    abstract void sendMessageUncommitted(ReqT message);

    /**
     * The rest of {@link #request}, {@link #halfClose}, {@link #isReady}, {@link #setMessageCompression}
     * and {@link #getAttributes} while no attempt passes through (each checks the pass-through again
     * under the call's lock).
     */
    abstract void requestUncommitted(int numMessages);

    abstract void halfCloseUncommitted();

    abstract boolean isReadyUncommitted();

    abstract void setMessageCompressionUncommitted(boolean enabled);

    abstract Attributes getAttributesUncommitted();

    /** Cancels the call (application or Context) while no attempt passes through (checked again under lock). */
    abstract void cancelWith(Status status, String message, Throwable cause);
}
