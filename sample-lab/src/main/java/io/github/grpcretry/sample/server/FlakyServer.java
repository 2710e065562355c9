package io.github.grpcretry.sample.server;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.ServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The flaky service on its own Netty server on a free loopback port, outside any Spring context:
 * what the lab's experiments call through the starter. Each instance has its own arrival log and its
 * own seeded fault generator.
 */
public final class FlakyServer implements AutoCloseable {

    private static final AtomicInteger NAMES = new AtomicInteger();

    private final Server server;
    private final String inProcessName;
    private final ArrivalLog arrivals = new ArrivalLog();

    private FlakyServer(long seed, FlakyService.Admission admission, boolean inProcess) {
        this(new FaultScript(seed), admission, inProcess, null);
    }

    private FlakyServer(long seed, FlakyService.Admission admission, boolean inProcess, QueueingBackend queue) {
        this(new FaultScript(seed), admission, inProcess, queue);
    }

    private FlakyServer(FaultScript faults, FlakyService.Admission admission, boolean inProcess, QueueingBackend queue) {
        FlakyService service = new FlakyService(arrivals, faults, admission, queue);
        ServerServiceDefinition definition = ServerInterceptors.intercept(service, new AttemptHeaderInterceptor());
        if (inProcess) {
            this.inProcessName = "flaky-" + NAMES.incrementAndGet();
            // handlers run on the calling thread: no thread hop per attempt (the statistical tables make
            // hundreds of thousands of calls; their scripts never sleep)
            this.server = InProcessServerBuilder.forName(inProcessName).directExecutor().addService(definition).build();
        } else {
            this.inProcessName = null;
            this.server = loopback()
                    .maxInboundMessageSize(16 * 1024 * 1024)
                    .addService(definition)
                    .build();
        }
        try {
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the flaky server", e);
        }
    }

    /**
     * A Netty server builder on a free loopback port: grpc-java's shaded Netty where the sample has it (the
     * net.devh line), else grpc-netty (the Spring gRPC line); each is loaded only when chosen.
     */
    private static ServerBuilder<?> loopback() {
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", 0);
        try {
            Class.forName("io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder", false, FlakyServer.class.getClassLoader());
            return ShadedNetty.forAddress(address);
        } catch (ClassNotFoundException e) {
            return PlainNetty.forAddress(address);
        }
    }

    private static final class ShadedNetty {
        static ServerBuilder<?> forAddress(InetSocketAddress address) {
            return io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder.forAddress(address);
        }
    }

    private static final class PlainNetty {
        static ServerBuilder<?> forAddress(InetSocketAddress address) {
            return io.grpc.netty.NettyServerBuilder.forAddress(address);
        }
    }

    public static FlakyServer start(long seed) {
        return new FlakyServer(seed, () -> null, false);
    }

    public static FlakyServer start(long seed, FlakyService.Admission admission) {
        return new FlakyServer(seed, admission, false);
    }

    /** A slow backend on Netty: every attempt is answered {@code sleepMs} later than its script says. */
    public static FlakyServer startSlow(long seed, long sleepMs) {
        return new FlakyServer(new FaultScript(seed, sleepMs), () -> null, false, null);
    }

    /**
     * The same service on grpc-java's in-process transport under a unique name (for experiments that
     * count arrivals by the thousand, where the transport plays no part).
     */
    public static FlakyServer startInProcess(long seed) {
        return new FlakyServer(seed, () -> null, true);
    }

    /**
     * The service in queue mode ({@link QueueingBackend}: workers, a service time, a FIFO queue) on
     * grpc-java's in-process transport, which carries the client's deadline in as the server call's
     * Context deadline and the client's cancellation back, as Netty does. The backend stays the
     * caller's to close.
     */
    public static FlakyServer startQueueing(long seed, QueueingBackend queue) {
        return new FlakyServer(seed, () -> null, true, queue);
    }

    public int port() {
        return server.getPort();
    }

    /** The address of this server as both Spring lines write a target: {@code static://127.0.0.1:<port>} or {@code in-process:<name>}. */
    public String address() {
        return inProcessName != null ? "in-process:" + inProcessName : "static://127.0.0.1:" + port();
    }

    public ArrivalLog arrivals() {
        return arrivals;
    }

    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
