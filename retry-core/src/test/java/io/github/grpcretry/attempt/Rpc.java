package io.github.grpcretry.attempt;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Drives calls of {@code grpc.testing.SimpleService} through the raw {@link ClientCall} API, with
 * a {@link ContractListener} on every call. Response demand is expressed one message at a time
 * (request(1) at start and after each message), so replay must honour the application's demand.
 */
final class Rpc {

    static final MethodDescriptor<SimpleRequest, SimpleResponse> UNARY = SimpleServiceGrpc.getUnaryRpcMethod();
    static final MethodDescriptor<SimpleRequest, SimpleResponse> CLIENT_STREAMING =
            SimpleServiceGrpc.getClientStreamingRpcMethod();
    static final MethodDescriptor<SimpleRequest, SimpleResponse> SERVER_STREAMING =
            SimpleServiceGrpc.getServerStreamingRpcMethod();
    static final MethodDescriptor<SimpleRequest, SimpleResponse> BIDI = SimpleServiceGrpc.getBidiStreamingRpcMethod();

    private Rpc() {
    }

    /** The outcome of one call as the application saw it. */
    record Outcome(Status status, List<String> responses, int headers, long elapsedMillis,
            ContractListener<SimpleResponse> listener) {

        Status.Code code() {
            return status.getCode();
        }
    }

    /** A started call. */
    static final class Handle {
        final ClientCall<SimpleRequest, SimpleResponse> call;
        final ContractListener<SimpleResponse> listener;
        final long startNanos = System.nanoTime();

        Handle(ClientCall<SimpleRequest, SimpleResponse> call, ContractListener<SimpleResponse> listener) {
            this.call = call;
            this.listener = listener;
        }

        Handle send(String... messages) {
            for (String m : messages) {
                call.sendMessage(request(m));
            }
            return this;
        }

        Handle sendBytes(int size) {
            call.sendMessage(SimpleRequest.newBuilder().setRequestMessage("x".repeat(size)).build());
            return this;
        }

        Handle halfClose() {
            call.halfClose();
            return this;
        }

        Outcome await() throws InterruptedException {
            return await(20, TimeUnit.SECONDS);
        }

        Outcome await(long timeout, TimeUnit unit) throws InterruptedException {
            Status s = listener.awaitClose(timeout, unit);
            listener.assertContract();
            List<String> responses = new ArrayList<>();
            for (SimpleResponse r : listener.messages()) {
                responses.add(r.getResponseMessage());
            }
            long elapsed = TimeUnit.NANOSECONDS.toMillis(listener.closedAtNanos() - startNanos);
            return new Outcome(s, responses, listener.headersCount(), elapsed, listener);
        }
    }

    static SimpleRequest request(String m) {
        return SimpleRequest.newBuilder().setRequestMessage(m).build();
    }

    /** Starts a call with one-at-a-time demand. */
    static Handle start(Channel channel, MethodDescriptor<SimpleRequest, SimpleResponse> method, CallOptions options) {
        return start(channel, method, options, new Metadata());
    }

    static Handle start(Channel channel, MethodDescriptor<SimpleRequest, SimpleResponse> method, CallOptions options,
            Metadata headers) {
        ClientCall<SimpleRequest, SimpleResponse> call = channel.newCall(method, options);
        ContractListener<SimpleResponse> listener = new ContractListener<>(new ClientCall.Listener<>() {
            @Override
            public void onMessage(SimpleResponse message) {
                call.request(1);
            }
        });
        call.start(listener, headers);
        call.request(1);
        return new Handle(call, listener);
    }

    static Outcome unary(Channel channel, CallOptions options, String message) throws InterruptedException {
        return start(channel, UNARY, options).send(message).halfClose().await();
    }

    static Outcome clientStreaming(Channel channel, CallOptions options, String... messages)
            throws InterruptedException {
        return start(channel, CLIENT_STREAMING, options).send(messages).halfClose().await();
    }

    static Outcome serverStreaming(Channel channel, CallOptions options, String message) throws InterruptedException {
        return start(channel, SERVER_STREAMING, options).send(message).halfClose().await();
    }

    static Outcome bidi(Channel channel, CallOptions options, String... messages) throws InterruptedException {
        return start(channel, BIDI, options).send(messages).halfClose().await();
    }
}
