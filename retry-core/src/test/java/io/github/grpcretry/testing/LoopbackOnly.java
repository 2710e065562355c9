package io.github.grpcretry.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.util.Collections;
import java.util.Optional;

/**
 * Whether a server of this process answers only on loopback: the samples bind their web port to 127.0.0.1,
 * so a connection to the same port at one of the machine's other addresses must be refused.
 */
public final class LoopbackOnly {

    private LoopbackOnly() {
    }

    /** An IPv4 address of an interface of this machine that is up and not loopback; absent when it has none. */
    public static Optional<InetAddress> otherAddress() {
        try {
            for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (!nic.isUp() || nic.isLoopback()) {
                    continue;
                }
                for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                    if (a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
                        return Optional.of(a);
                    }
                }
            }
            return Optional.empty();
        } catch (SocketException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether a TCP connection to {@code address}:{@code port} is accepted (within 5 s). */
    public static boolean accepts(InetAddress address, int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address, port), 5000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
