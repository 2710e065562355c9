package io.github.grpcretry.springgrpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.util.concurrent.TimeUnit;

/**
 * What the channel's stack sees below it: the chain below {@link GrpcRetryClientInterceptor} (calls go there)
 * as the {@link ManagedChannel} Spring gRPC built (its shut-down and state are asked there). The engine, handed a
 * {@code ManagedChannel}, follows that channel's shut-down (docs/design.md §18): an attempt the channel closed
 * because it is shut down is not retried, and a call waiting for a backoff ends at once when the channel shuts
 * down. One view per built channel, made once.
 */
final class BuiltChannelView extends ManagedChannel {

    private final Channel next;
    private final ManagedChannel built;

    BuiltChannelView(Channel next, ManagedChannel built) {
        this.next = next;
        this.built = built;
    }

    Channel next() {
        return next;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
        return next.newCall(method, options);
    }

    @Override
    public String authority() {
        return next.authority();
    }

    @Override
    public ManagedChannel shutdown() {
        built.shutdown();
        return this;
    }

    @Override
    public boolean isShutdown() {
        return built.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return built.isTerminated();
    }

    @Override
    public ManagedChannel shutdownNow() {
        built.shutdownNow();
        return this;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return built.awaitTermination(timeout, unit);
    }

    @Override
    public ConnectivityState getState(boolean requestConnection) {
        return built.getState(requestConnection);
    }

    @Override
    public void notifyWhenStateChanged(ConnectivityState source, Runnable callback) {
        built.notifyWhenStateChanged(source, callback);
    }

    @Override
    public void resetConnectBackoff() {
        built.resetConnectBackoff();
    }

    @Override
    public void enterIdle() {
        built.enterIdle();
    }

    @Override
    public String toString() {
        return "BuiltChannelView[" + built + "]";
    }
}
