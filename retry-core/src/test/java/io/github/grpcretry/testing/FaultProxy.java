package io.github.grpcretry.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * A small TCP proxy on loopback (plain {@code java.net}, threads per connection) that sits between a
 * gRPC client and server and injects transport faults: added latency, a connection reset (RST) after
 * some bytes from the client, a server-to-client stream truncated after some bytes, or a reset of
 * every live connection on demand. What happens to a connection is decided when it is accepted, by
 * {@link #plan(IntFunction)} (0-based connection index).
 */
public final class FaultProxy implements AutoCloseable {

    /**
     * The faults of one connection.
     *
     * @param latencyMillis delay added to every chunk, both directions (order kept)
     * @param resetAfterClientBytes reset the connection once this many client bytes were forwarded (-1 = never)
     * @param truncateAfterServerBytes forward only this many server bytes, then close both sides (-1 = never)
     * @param truncateWithReset whether the truncation closes with RST (else FIN)
     */
    public record Fault(long latencyMillis, long resetAfterClientBytes, long truncateAfterServerBytes,
            boolean truncateWithReset) {

        public static final Fault NONE = new Fault(0, -1, -1, false);

        public static Fault latency(long millis) {
            return new Fault(millis, -1, -1, false);
        }

        public static Fault resetAfterClientBytes(long bytes) {
            return new Fault(0, bytes, -1, false);
        }

        public static Fault truncateServer(long bytes, boolean withReset) {
            return new Fault(0, -1, bytes, withReset);
        }
    }

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final Thread acceptor;
    private final List<Connection> live = new CopyOnWriteArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicInteger resets = new AtomicInteger();
    private final AtomicInteger truncations = new AtomicInteger();
    private final AtomicLong bytesClientToServer = new AtomicLong();
    private final AtomicLong bytesServerToClient = new AtomicLong();
    private volatile IntFunction<Fault> plan = i -> Fault.NONE;
    private volatile boolean closed;
    private volatile long latencyMillis;

    private FaultProxy(int targetPort) throws IOException {
        this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
        this.listener = new ServerSocket();
        listener.setReuseAddress(true);
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        this.acceptor = new Thread(this::acceptLoop, "fault-proxy-accept-" + listener.getLocalPort());
        acceptor.setDaemon(true);
    }

    /** A proxy on an ephemeral loopback port forwarding to {@code 127.0.0.1:targetPort}. */
    public static FaultProxy start(int targetPort) throws IOException {
        FaultProxy p = new FaultProxy(targetPort);
        p.acceptor.start();
        return p;
    }

    /** Decides the faults of every connection accepted from now on (argument: 0-based connection index). */
    public FaultProxy plan(IntFunction<Fault> plan) {
        this.plan = plan;
        return this;
    }

    /** Latency added to every chunk read from now on, every connection, on top of its {@link Fault}. */
    public FaultProxy latency(long millis) {
        this.latencyMillis = millis;
        return this;
    }

    public int port() {
        return listener.getLocalPort();
    }

    public String target() {
        return "127.0.0.1:" + port();
    }

    public int connectionsAccepted() {
        return accepted.get();
    }

    /** Connections ended by a reset (planned or {@link #resetAll()}). */
    public int resets() {
        return resets.get();
    }

    public int truncations() {
        return truncations.get();
    }

    public long bytesClientToServer() {
        return bytesClientToServer.get();
    }

    public long bytesServerToClient() {
        return bytesServerToClient.get();
    }

    /** Resets (RST) every live connection now; returns how many. */
    public int resetAll() {
        int n = 0;
        for (Connection c : live) {
            if (c.abort(true)) {
                resets.incrementAndGet();
                n++;
            }
        }
        return n;
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Connection c : live) {
            c.abort(false);
        }
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;
            }
            int index = accepted.getAndIncrement();
            Fault fault = plan.apply(index);
            Socket server = new Socket();
            try {
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                server.connect(target, 2000);
            } catch (IOException e) {
                // the server is not there: refuse the client the way a dead host would (RST)
                hardClose(client);
                hardClose(server);
                continue;
            }
            Connection c = new Connection(index, client, server, fault == null ? Fault.NONE : fault);
            live.add(c);
            c.start();
        }
    }

    private static void hardClose(Socket s) {
        try {
            s.setSoLinger(true, 0);
        } catch (SocketException ignored) {
            // already closed
        }
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    /** One proxied connection: a reader and a writer per direction (the writer applies the latency). */
    private final class Connection {
        private final Socket client;
        private final Socket server;
        private final Fault fault;
        private final int index;
        private final AtomicInteger open = new AtomicInteger(4);
        private volatile boolean aborted;

        Connection(int index, Socket client, Socket server, Fault fault) {
            this.index = index;
            this.client = client;
            this.server = server;
            this.fault = fault;
        }

        void start() {
            pipe(client, server, true);
            pipe(server, client, false);
        }

        /** Closes both sockets; with RST when {@code reset}. True when this call did it. */
        boolean abort(boolean reset) {
            synchronized (this) {
                if (aborted) {
                    return false;
                }
                aborted = true;
            }
            if (reset) {
                hardClose(client);
                hardClose(server);
            } else {
                try {
                    client.close();
                } catch (IOException ignored) {
                    // closing
                }
                try {
                    server.close();
                } catch (IOException ignored) {
                    // closing
                }
            }
            return true;
        }

        private void threadEnded() {
            if (open.decrementAndGet() == 0) {
                abort(false);
                live.remove(this);
            }
        }

        private void pipe(Socket from, Socket to, boolean clientToServer) {
            BlockingQueue<byte[]> queue = new LinkedBlockingQueue<>();
            byte[] eof = new byte[0];
            String name = "fault-proxy-" + index + (clientToServer ? "-c2s" : "-s2c");
            Thread reader = new Thread(() -> {
                long forwarded = 0;
                byte[] buf = new byte[16 * 1024];
                try (InputStream in = from.getInputStream()) {
                    int n;
                    while ((n = in.read(buf)) != -1) {
                        int take = n;
                        boolean endAfter = false;
                        boolean resetAfter = false;
                        if (clientToServer && fault.resetAfterClientBytes >= 0
                                && forwarded + n >= fault.resetAfterClientBytes) {
                            take = (int) (fault.resetAfterClientBytes - forwarded);
                            resetAfter = true;
                        } else if (!clientToServer && fault.truncateAfterServerBytes >= 0
                                && forwarded + n >= fault.truncateAfterServerBytes) {
                            take = (int) (fault.truncateAfterServerBytes - forwarded);
                            endAfter = true;
                        }
                        if (take > 0) {
                            queue.add(withDue(Arrays.copyOf(buf, take)));
                            forwarded += take;
                        }
                        if (resetAfter) {
                            queue.add(RESET);
                            return;
                        }
                        if (endAfter) {
                            queue.add(fault.truncateWithReset ? RESET : TRUNCATE);
                            return;
                        }
                    }
                } catch (IOException e) {
                    // the peer or an abort closed the socket
                } finally {
                    queue.add(eof);
                    threadEnded();
                }
            }, name + "-r");
            Thread writer = new Thread(() -> {
                try (OutputStream out = to.getOutputStream()) {
                    while (true) {
                        byte[] chunk = queue.take();
                        if (chunk == eof) {
                            try {
                                to.shutdownOutput();
                            } catch (IOException ignored) {
                                // already closed
                            }
                            return;
                        }
                        if (chunk == RESET) {
                            if (abort(true)) {
                                resets.incrementAndGet();
                            }
                            return;
                        }
                        if (chunk == TRUNCATE) {
                            if (abort(false)) {
                                truncations.incrementAndGet();
                            }
                            return;
                        }
                        waitUntilDue(chunk);
                        out.write(chunk, 8, chunk.length - 8);
                        out.flush();
                        (clientToServer ? bytesClientToServer : bytesServerToClient).addAndGet(chunk.length - 8);
                    }
                } catch (IOException e) {
                    // the peer or an abort closed the socket
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    threadEnded();
                }
            }, name + "-w");
            reader.setDaemon(true);
            writer.setDaemon(true);
            reader.start();
            writer.start();
        }

        /** The chunk prefixed with the time (ms) it may be written at. */
        private byte[] withDue(byte[] data) {
            long due = System.nanoTime() / 1_000_000 + fault.latencyMillis + latencyMillis;
            byte[] out = new byte[data.length + 8];
            for (int i = 0; i < 8; i++) {
                out[i] = (byte) (due >>> (56 - 8 * i));
            }
            System.arraycopy(data, 0, out, 8, data.length);
            return out;
        }

        private void waitUntilDue(byte[] chunk) throws InterruptedException {
            long due = 0;
            for (int i = 0; i < 8; i++) {
                due = (due << 8) | (chunk[i] & 0xff);
            }
            long wait = due - System.nanoTime() / 1_000_000;
            if (wait > 0) {
                TimeUnit.MILLISECONDS.sleep(wait); // the proxy's scripted latency, not a synchronisation point
            }
        }
    }

    private static final byte[] RESET = new byte[0];
    private static final byte[] TRUNCATE = new byte[0];
}
