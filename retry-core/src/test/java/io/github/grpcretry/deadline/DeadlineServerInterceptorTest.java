package io.github.grpcretry.deadline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Context;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The server side: expired calls never reach the handler; deadline-caused failures say so. */
class DeadlineServerInterceptorTest {

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final Recorder recorder = new Recorder();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    private Hop hop(String name, ServerInterceptor... interceptors) throws Exception {
        Hop h = new Hop(name, interceptors);
        closeables.add(h);
        return h;
    }

    private SimpleServiceGrpc.SimpleServiceBlockingStub stub(Hop h) {
        ManagedChannel ch = h.channel();
        closeables.add(ch::shutdownNow);
        var stub = SimpleServiceGrpc.newBlockingStub(ch);
        return stub;
    }

    /**
     * Outermost: records the status each call is closed with, and each call's end as grpc-java reports
     * it to the call's listener (completed or cancelled): after that no callback of the call can reach
     * anything inside, the handler included.
     */
    static final class Recorder implements ServerInterceptor {
        final LinkedBlockingQueue<Status> closed = new LinkedBlockingQueue<>();
        final LinkedBlockingQueue<String> ended = new LinkedBlockingQueue<>();

        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                ServerCallHandler<ReqT, RespT> next) {
            ServerCall.Listener<ReqT> inner = next.startCall(new SimpleForwardingServerCall<>(call) {
                @Override
                public void close(Status status, Metadata trailers) {
                    closed.add(status);
                    super.close(status, trailers);
                }
            }, headers);
            return new io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener<>(inner) {
                @Override
                public void onComplete() {
                    try {
                        super.onComplete();
                    } finally {
                        ended.add("completed");
                    }
                }

                @Override
                public void onCancel() {
                    try {
                        super.onCancel();
                    } finally {
                        ended.add("cancelled");
                    }
                }
            };
        }

        Status next() throws InterruptedException {
            return closed.poll(20, TimeUnit.SECONDS);
        }

        /** Waits for the next call's end (its listener completed or cancelled). */
        String nextEnd() throws InterruptedException {
            return ended.poll(20, TimeUnit.SECONDS);
        }
    }

    /** Stands for slow work before the handler (authentication, a queue): sleeps, then goes on. */
    static ServerInterceptor slow(long ms) {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call,
                    Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                try {
                    Thread.sleep(ms); // the scripted slowness this interceptor stands for, not a synchronisation point
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return next.startCall(call, headers);
            }
        };
    }

    private static void warmUp(SimpleServiceGrpc.SimpleServiceBlockingStub stub, Hop h, Recorder r)
            throws InterruptedException {
        stub.unaryRpc(Hop.req("warm-up"));
        assertThat(r.nextEnd()).as("the warm-up's end").isNotNull();
        h.clear();
        r.closed.clear();
    }

    @Test
    void anInboundCallWhoseDeadlinePassedNeverReachesTheHandler() throws Exception {
        // interceptors: recorder (outermost), slow 300 ms, ours, handler
        Hop h = hop("S", new DeadlineServerInterceptor(), slow(300), recorder);
        var stub = stub(h);
        warmUp(stub, h, recorder);
        assertThatThrownBy(() -> stub.withDeadlineAfter(100, TimeUnit.MILLISECONDS).unaryRpc(Hop.req("late")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        Status closed = recorder.next();
        assertThat(closed).isNotNull();
        assertThat(closed.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(closed.getDescription()).contains("before the handler ran");
        // the close above is the interceptor's own; once grpc-java has ended the call, no callback of it can
        // start the handler: the count is final then (an event, not 200 ms of waiting)
        assertThat(recorder.nextEnd()).as("the call's end").isNotNull();
        assertThat(h.handled.get()).as("handler never ran").isZero();

        // a call with time left goes through
        stub.withDeadlineAfter(2, TimeUnit.SECONDS).unaryRpc(Hop.req("in time"));
        assertThat(h.handled.get()).isEqualTo(1);
    }

    /** A bidi call with the given deadline: one message, half-close; returns its status. */
    private static Status bidi(ManagedChannel ch, long deadlineMs) throws Exception {
        CompletableFuture<Status> result = new CompletableFuture<>();
        var requests = SimpleServiceGrpc.newStub(ch).withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS)
                .bidiStreamingRpc(new StreamObserver<>() {
                    @Override
                    public void onNext(SimpleResponse value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        result.complete(Status.fromThrowable(t));
                    }

                    @Override
                    public void onCompleted() {
                        result.complete(Status.OK);
                    }
                });
        requests.onNext(Hop.req("m"));
        requests.onCompleted();
        return result.get(5, TimeUnit.SECONDS);
    }

    @Test
    void anExpiredStreamingCallNeverReachesTheHandler() throws Exception {
        Hop h = hop("S", new DeadlineServerInterceptor(), slow(300), recorder);
        ManagedChannel ch = h.channel();
        closeables.add(ch::shutdownNow);
        assertThat(bidi(ch, 5000).getCode()).isEqualTo(Status.Code.OK);
        assertThat(recorder.nextEnd()).as("the first call's end").isNotNull();
        h.handled.set(0);
        recorder.closed.clear();

        assertThat(bidi(ch, 100).getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        Status closed = recorder.next();
        assertThat(closed).isNotNull();
        assertThat(closed.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(closed.getDescription()).contains("before the handler ran");
        // the interceptor closed the call instead of calling on; once grpc-java has ended the call, no callback
        // of it can start the handler: the count is final then
        assertThat(recorder.nextEnd()).as("the call's end").isNotNull();
        assertThat(h.handled.get()).as("handler never ran").isZero();
    }

    @Test
    void withoutInterceptorExpiredStreamingCallReachesHandler() throws Exception {
        // the control: grpc-java alone invokes a streaming handler whose deadline has already passed
        Hop h = hop("S", slow(300), recorder);
        ManagedChannel ch = h.channel();
        closeables.add(ch::shutdownNow);
        assertThat(bidi(ch, 5000).getCode()).isEqualTo(Status.Code.OK);
        h.handled.set(0);

        assertThat(bidi(ch, 100).getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (h.handled.get() == 0 && System.nanoTime() < until) {
            Thread.sleep(10); // polls for the handler's start (the event), not a synchronisation point
        }
        assertThat(h.handled.get()).isEqualTo(1);
    }

    @Test
    void escapingDownstreamDeadlineFailureBecomesDeadlineExceeded() throws Exception {
        Hop c = hop("C").body(r -> {
            Thread.sleep(400); // the server's scripted slowness: past the 100 ms deadline B gives it
            return Hop.resp("late");
        });
        var cStub = stub(c);
        Hop withMapping = hop("B", new DeadlineServerInterceptor(), recorder)
                .body(r -> cStub.withDeadlineAfter(100, TimeUnit.MILLISECONDS).unaryRpc(r));
        Hop without = hop("B0").body(r -> cStub.withDeadlineAfter(100, TimeUnit.MILLISECONDS).unaryRpc(r));

        assertThatThrownBy(() -> stub(withMapping).withDeadlineAfter(5, TimeUnit.SECONDS).unaryRpc(Hop.req("x")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        assertThatThrownBy(() -> stub(without).withDeadlineAfter(5, TimeUnit.SECONDS).unaryRpc(Hop.req("x")))
                .as("control: grpc-java reports an escaping exception as UNKNOWN")
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN));
    }

    @Test
    void handlerFailingPastItsDeadlineClosesWithDeadlineExceeded() throws Exception {
        Hop h = hop("S", new DeadlineServerInterceptor(), recorder).body(r -> {
            Thread.sleep(400); // the handler's scripted slowness: past the call's 150 ms deadline
            throw Status.UNKNOWN.withDescription("storage gave up").asRuntimeException();
        });
        var stub = stub(h);
        assertThatThrownBy(() -> stub.withDeadlineAfter(150, TimeUnit.MILLISECONDS).unaryRpc(Hop.req("x")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        Status closed = recorder.next();
        assertThat(closed).isNotNull();
        assertThat(closed.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(closed.getDescription()).contains("storage gave up");
    }

    @Test
    void anErrorReportedAfterTheDeadlineIsClosedWithDeadlineExceeded() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        // a handler that reports its failure through the observer, as async handlers do
        var def = io.grpc.ServerInterceptors.intercept(new SimpleServiceGrpc.SimpleServiceImplBase() {
            @Override
            public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> observer) {
                Context ctx = Context.current();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                while (!ctx.isCancelled() && System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                observer.onError(Status.INTERNAL.withDescription("cache timed out").asRuntimeException());
                done.countDown();
            }
        }, new DeadlineServerInterceptor(), recorder);
        var server = io.grpc.inprocess.InProcessServerBuilder.forName("deadline-onerror").addService(def).build()
                .start();
        closeables.add(server::shutdownNow);
        var ch = io.grpc.inprocess.InProcessChannelBuilder.forName("deadline-onerror").build();
        closeables.add(ch::shutdownNow);
        assertThatThrownBy(() -> SimpleServiceGrpc.newBlockingStub(ch).withDeadlineAfter(150, TimeUnit.MILLISECONDS)
                .unaryRpc(Hop.req("x"))).isInstanceOf(StatusRuntimeException.class);
        assertThat(done.await(3, TimeUnit.SECONDS)).isTrue();
        Status closed = recorder.next();
        assertThat(closed.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(closed.getDescription()).contains("cache timed out");
    }

    @Test
    void aHandlerFailingAfterTheCallerCancelledIsClosedWithCancelled() throws Exception {
        CompletableFuture<Void> cancelled = new CompletableFuture<>();
        Hop h = hop("S", new DeadlineServerInterceptor(), recorder).body(r -> {
            Context.current().addListener(ctx -> cancelled.complete(null), Runnable::run);
            cancelled.get(3, TimeUnit.SECONDS);
            throw new IllegalStateException("interrupted work");
        });
        ManagedChannel ch = h.channel();
        closeables.add(ch::shutdownNow);
        Context.CancellableContext callerContext = Context.current().withCancellation();
        callerContext.run(() -> SimpleServiceGrpc.newStub(ch).unaryRpc(Hop.req("x"), new StreamObserver<>() {
            @Override
            public void onNext(SimpleResponse value) {
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        }));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (h.handled.get() == 0 && System.nanoTime() < until) {
            Thread.sleep(5); // polls for the handler's start (the event), not a synchronisation point
        }
        callerContext.cancel(null);
        Status closed = recorder.next();
        assertThat(closed).isNotNull();
        assertThat(closed.getCode()).isEqualTo(Status.Code.CANCELLED);
    }

    @Test
    void otherFailuresPassUnchanged() throws Exception {
        Hop h = hop("S", new DeadlineServerInterceptor(), recorder).body(r -> {
            throw Status.FAILED_PRECONDITION.withDescription("no stock").asRuntimeException();
        });
        assertThatThrownBy(() -> stub(h).withDeadlineAfter(5, TimeUnit.SECONDS).unaryRpc(Hop.req("x")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN));
    }
}
