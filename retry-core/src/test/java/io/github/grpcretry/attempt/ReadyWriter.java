package io.github.grpcretry.attempt;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A client-streaming application that uses flow control as grpc-java's stubs do: it writes from its
 * {@code onReady} handler only, only while {@code isReady()} is true, then half-closes after
 * {@code total} messages. It counts what it wrote and the {@code onReady} it heard, and counts down
 * {@link #blocked} the first time it finds the call not ready with messages left.
 */
final class ReadyWriter extends ClientCall.Listener<SimpleResponse> {

    final ContractListener<SimpleResponse> listener = new ContractListener<>(this);
    final AtomicInteger written = new AtomicInteger();
    final AtomicInteger readies = new AtomicInteger();
    final CountDownLatch blocked;
    private final ClientCall<SimpleRequest, SimpleResponse> call;
    private final int total;
    private final String payload;
    private boolean halfClosed;

    ReadyWriter(ClientCall<SimpleRequest, SimpleResponse> call, int total, int messageBytes) {
        this(call, total, messageBytes, new CountDownLatch(1));
    }

    ReadyWriter(ClientCall<SimpleRequest, SimpleResponse> call, int total, int messageBytes, CountDownLatch blocked) {
        this.call = call;
        this.blocked = blocked;
        this.total = total;
        this.payload = "x".repeat(messageBytes);
    }

    /** Starts the call; it writes from its first {@code onReady} on. */
    ReadyWriter start() {
        call.start(listener, new Metadata());
        call.request(1);
        return this;
    }

    @Override
    public void onReady() {
        readies.incrementAndGet();
        write();
    }

    private synchronized void write() {
        while (written.get() < total && call.isReady()) {
            call.sendMessage(SimpleRequest.newBuilder().setRequestMessage(payload).build());
            written.incrementAndGet();
        }
        if (written.get() == total && !halfClosed) {
            halfClosed = true;
            call.halfClose();
        } else if (written.get() < total) {
            blocked.countDown();
        }
    }
}
