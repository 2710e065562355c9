package io.github.grpcretry.sample.springgrpc;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A deterministic flaky service: a request whose message is {@code <channel>#<n>} fails with
 * UNAVAILABLE the first time it arrives when {@code n} is a multiple of 4, and succeeds otherwise. It
 * counts every arrival per channel.
 */
public class FlakyService extends SimpleServiceGrpc.SimpleServiceImplBase {

    private final Map<String, AtomicInteger> arrivalsPerRequest = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> arrivalsPerChannel = new ConcurrentHashMap<>();

    @Override
    public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
        String message = request.getRequestMessage();
        int hash = message.lastIndexOf('#');
        String channel = hash < 0 ? message : message.substring(0, hash);
        int n = hash < 0 ? 1 : Integer.parseInt(message.substring(hash + 1));
        arrivalsPerChannel.computeIfAbsent(channel, k -> new AtomicInteger()).incrementAndGet();
        int arrival = arrivalsPerRequest.computeIfAbsent(message, k -> new AtomicInteger()).incrementAndGet();
        if (n % 4 == 0 && arrival == 1) {
            observer.onError(Status.UNAVAILABLE.withDescription("flaky: first arrival of " + message).asRuntimeException());
            return;
        }
        observer.onNext(SimpleResponse.newBuilder().setResponseMessage("ok " + message).build());
        observer.onCompleted();
    }

    /** Arrivals of the requests sent over {@code channel}. */
    public int arrivals(String channel) {
        AtomicInteger a = arrivalsPerChannel.get(channel);
        return a == null ? 0 : a.get();
    }
}
