package io.github.grpcretry.springgrpc.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * A loopback port whose TCP connects never complete: a listening socket with a backlog of 1 that never
 * accepts, its accept queue filled by plain sockets. Once the queue is full the kernel drops further
 * SYNs, so a client's connect hangs until its own connect timeout ends it (Linux; this is how a
 * black-holed address behaves, without needing one).
 */
public final class HangingListener implements AutoCloseable {

    private final ServerSocket listener;
    private final List<Socket> queued = new ArrayList<>();

    private HangingListener() throws IOException {
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        try {
            // Fill the accept queue until a connect gets no answer: the queue is full from then on. A
            // loopback connect to a listener with room completes in the kernel at once; 1 s is only the
            // sign that none came (the dropped SYN's first retransmission would come after 1 s).
            for (int i = 0; i < 64; i++) {
                Socket s = new Socket();
                try {
                    s.connect(listener.getLocalSocketAddress(), 1000);
                    queued.add(s);
                } catch (SocketTimeoutException full) {
                    s.close();
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
        close();
        throw new IllegalStateException("the accept queue of a backlog-1 listener never filled");
    }

    public static HangingListener start() throws IOException {
        return new HangingListener();
    }

    /** The target of this port for Spring gRPC ({@code static://127.0.0.1:<port>}). */
    public String target() {
        return "static://127.0.0.1:" + listener.getLocalPort();
    }

    @Override
    public void close() {
        for (Socket s : queued) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
