package io.github.grpcretry.testing;

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
 * once and last, no two callbacks at the same time, and (when {@link #expect expected responses}
 * are given) that the responses are the ones the request should produce: all of them, in order,
 * when the call ends OK, and a prefix of them when it fails.
 */
public class ContractListener<T> extends ClientCall.Listener<T> {

    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<T> messages = new CopyOnWriteArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    private final AtomicInteger closes = new AtomicInteger();
    private final AtomicInteger headers = new AtomicInteger();
    private final AtomicInteger readies = new AtomicInteger();
    private volatile Status status;
    private volatile Metadata responseHeaders;
    private volatile Metadata trailers;
    private volatile long closedAtNanos;
    private volatile List<T> expected;
    private final ClientCall.Listener<T> delegate;

    public ContractListener() {
        this(null);
    }

    /** Checks the contract and passes every callback on to {@code delegate}. */
    public ContractListener(ClientCall.Listener<T> delegate) {
        this.delegate = delegate;
    }

    /**
     * The responses the request must produce: on OK exactly these in this order, on any other close
     * a prefix of them. Set before the call is started.
     */
    public ContractListener<T> expect(List<T> expectedResponses) {
        this.expected = List.copyOf(expectedResponses);
        return this;
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
            responseHeaders = h;
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
            List<T> e = expected;
            int index = messages.size();
            if (e != null && (index >= e.size() || !e.get(index).equals(message))) {
                violations.add("response #" + index + " does not match the request: got " + brief(message)
                        + ", expected " + (index < e.size() ? brief(e.get(index)) : "no more responses"));
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
            if (s == null) {
                violations.add("onClose with a null status");
            }
            List<T> e = expected;
            if (s != null && s.isOk() && e != null && messages.size() != e.size()) {
                violations.add("closed OK after " + messages.size() + " responses, expected " + e.size());
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

    private static String brief(Object o) {
        String s = String.valueOf(o).replace('\n', ' ');
        return s.length() > 60 ? s.substring(0, 57) + "..." : s;
    }

    /** Waits for the close; fails when it does not come in time. */
    public Status awaitClose(long timeout, TimeUnit unit) throws InterruptedException {
        if (!closedLatch.await(timeout, unit)) {
            throw new AssertionError("call did not close within " + timeout + " " + unit);
        }
        return status;
    }

    /** Waits for the close; false when it does not come in time. */
    public boolean tryAwaitClose(long timeout, TimeUnit unit) throws InterruptedException {
        return closedLatch.await(timeout, unit);
    }

    public boolean isClosed() {
        return closedLatch.getCount() == 0;
    }

    /** Throws when the contract was broken or the call is not closed exactly once. */
    public void assertContract() {
        List<String> all = contractProblems();
        if (!all.isEmpty()) {
            throw new AssertionError("call contract broken: " + all);
        }
    }

    /** Every broken rule so far, plus "closed n times" unless closed exactly once. */
    public List<String> contractProblems() {
        List<String> all = new ArrayList<>(violations);
        if (closes.get() != 1) {
            all.add("closed " + closes.get() + " times");
        }
        return all;
    }

    public List<String> violations() {
        return violations;
    }

    public int closeCount() {
        return closes.get();
    }

    public List<T> messages() {
        return messages;
    }

    public int headersCount() {
        return headers.get();
    }

    /** The response headers the application saw, or null. */
    public Metadata responseHeaders() {
        return responseHeaders;
    }

    public int readyCount() {
        return readies.get();
    }

    public Status status() {
        return status;
    }

    public Metadata trailers() {
        return trailers;
    }

    public long closedAtNanos() {
        return closedAtNanos;
    }
}
