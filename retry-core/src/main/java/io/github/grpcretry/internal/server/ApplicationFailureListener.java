package io.github.grpcretry.internal.server;

import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.ServerCall;

/**
 * A server call listener that hands what the application's {@code onMessage}, {@code onHalfClose}
 * and {@code onReady} throw to {@link #failed}, which closes the call with a status of its choosing or
 * rethrows (grpc-java then closes the call with UNKNOWN). Shared by the server interceptors that must
 * decide the status of a call the application's code failed.
 */
public abstract class ApplicationFailureListener<ReqT> extends SimpleForwardingServerCallListener<ReqT> {

    protected ApplicationFailureListener(ServerCall.Listener<ReqT> delegate) {
        super(delegate);
    }

    /** The application's callback threw {@code e}: close the call, or rethrow {@code e}. */
    protected abstract void failed(RuntimeException e);

    @Override
    public void onMessage(ReqT message) {
        try {
            super.onMessage(message);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    @Override
    public void onHalfClose() {
        try {
            super.onHalfClose();
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    @Override
    public void onReady() {
        try {
            super.onReady();
        } catch (RuntimeException e) {
            failed(e);
        }
    }
}
