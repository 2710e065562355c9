package io.github.grpcretry.springgrpc.testing;

import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * A middle layer's service: relays each call to the Spring gRPC channel named {@code next}, in the
 * inbound call's Context (so its deadline and the guard's marker go along), and answers with the
 * downstream status only, as most services do.
 */
public class Relay extends SimpleServiceGrpc.SimpleServiceImplBase {

    private final ObjectProvider<GrpcChannelFactory> channels;
    private final boolean throwing;
    private volatile SimpleServiceGrpc.SimpleServiceBlockingStub next;
    public final AtomicInteger handled = new AtomicInteger();

    /** With {@code relay.throw=true} the downstream's exception escapes the handler (Spring gRPC's exception handling closes the call). */
    public Relay(ObjectProvider<GrpcChannelFactory> channels, org.springframework.core.env.Environment environment) {
        this.channels = channels;
        this.throwing = environment.getProperty("relay.throw", Boolean.class, false);
    }

    private SimpleServiceGrpc.SimpleServiceBlockingStub next() {
        if (next == null) {
            synchronized (this) {
                if (next == null) {
                    next = SimpleServiceGrpc.newBlockingStub(channels.getObject().createChannel("next"));
                }
            }
        }
        return next;
    }

    @Override
    public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
        handled.incrementAndGet();
        try {
            observer.onNext(next().unaryRpc(request));
            observer.onCompleted();
        } catch (StatusRuntimeException e) {
            if (throwing) {
                throw e;
            }
            observer.onError(e.getStatus().asRuntimeException());
        }
    }
}
