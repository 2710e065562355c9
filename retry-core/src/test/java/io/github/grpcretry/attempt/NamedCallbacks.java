package io.github.grpcretry.attempt;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.function.Consumer;

/** An application's listener that hands the name of each callback it hears ("onHeaders", ...) to one action. */
final class NamedCallbacks extends ClientCall.Listener<SimpleResponse> {

    private final Consumer<String> action;

    NamedCallbacks(Consumer<String> action) {
        this.action = action;
    }

    @Override
    public void onHeaders(Metadata headers) {
        action.accept("onHeaders");
    }

    @Override
    public void onMessage(SimpleResponse message) {
        action.accept("onMessage");
    }

    @Override
    public void onReady() {
        action.accept("onReady");
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
        action.accept("onClose");
    }
}
