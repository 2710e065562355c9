package io.github.grpcretry.attempt;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link ClientCall.Listener} that records what the application sees and checks the call
 * contract: headers at most once and before any message, messages only before close, close exactly
 * once and last, and no two callbacks at the same time.
 */
final class ContractListener<T> extends ClientCall.Listener<T> {

    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<T> messages = new CopyOnWriteArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    private final AtomicInteger closes = new AtomicInteger();
    private final AtomicInteger headers = new AtomicInteger();
    private final AtomicInteger readies = new AtomicInteger();
    private volatile Status status;
    private volatile Metadata trailers;
    private volatile long closedAtNanos;
    private final ClientCall.Listener<T> delegate;

    ContractListener() {
        this(null);
    }

    /** Checks the contract and passes every callback on to {@code delegate}. */
    ContractListener(ClientCall.Listener<T> delegate) {
        this.delegate = delegate;
    }

    private void enter(String what) {
        if (inFlight.incrementAndGet() != 1) {
            violations.add(what + " overlapped another callback");
        }
        if (closes.get() > 0) {
            violations.add(what + " after close");
        }
    }

    private void exit() {
        inFlight.decrementAndGet();
    }

    @Override
    public void onHeaders(Metadata h) {
        enter("onHeaders");
        try {
            if (headers.incrementAndGet() > 1) {
                violations.add("onHeaders more than once");
            }
            if (!messages.isEmpty()) {
                violations.add("onHeaders after a message");
            }
            if (delegate != null) {
                delegate.onHeaders(h);
            }
        } finally {
            exit();
        }
    }

    @Override
    public void onMessage(T message) {
        enter("onMessage");
        try {
            if (headers.get() == 0) {
                violations.add("onMessage before onHeaders");
            }
            messages.add(message);
            if (delegate != null) {
                delegate.onMessage(message);
            }
        } finally {
            exit();
        }
    }

    @Override
    public void onReady() {
        enter("onReady");
        try {
            readies.incrementAndGet();
            if (delegate != null) {
                delegate.onReady();
            }
        } finally {
            exit();
        }
    }

    @Override
    public void onClose(Status s, Metadata t) {
        enter("onClose");
        try {
            if (closes.incrementAndGet() > 1) {
                violations.add("onClose more than once");
            }
            status = s;
            trailers = t;
            closedAtNanos = System.nanoTime();
            if (delegate != null) {
                delegate.onClose(s, t);
            }
        } finally {
            inFlight.decrementAndGet();
            closedLatch.countDown();
        }
    }

    /** Waits for the close; fails when it does not come in time. */
    Status awaitClose(long timeout, TimeUnit unit) throws InterruptedException {
        if (!closedLatch.await(timeout, unit)) {
            throw new AssertionError("call did not close within " + timeout + " " + unit);
        }
        return status;
    }

    boolean isClosed() {
        return closedLatch.getCount() == 0;
    }

    /** Throws when the contract was broken or the call is not closed exactly once. */
    void assertContract() {
        List<String> all = new ArrayList<>(violations);
        if (closes.get() != 1) {
            all.add("closed " + closes.get() + " times");
        }
        if (!all.isEmpty()) {
            throw new AssertionError("call contract broken: " + all);
        }
    }

    List<String> violations() {
        return violations;
    }

    int closeCount() {
        return closes.get();
    }

    List<T> messages() {
        return messages;
    }

    int headersCount() {
        return headers.get();
    }

    int readyCount() {
        return readies.get();
    }

    Status status() {
        return status;
    }

    Metadata trailers() {
        return trailers;
    }

    long closedAtNanos() {
        return closedAtNanos;
    }
}
