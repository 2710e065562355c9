package io.github.grpcretry.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Where a server of this process listens: the samples bind their ports to 127.0.0.1, so every listening socket
 * on such a port must have a loopback local address. Read from the kernel's socket tables ({@code /proc/net/tcp}
 * and {@code /proc/net/tcp6}) rather than by connecting to another address of the machine: a test sends
 * traffic to loopback only.
 */
public final class LoopbackOnly {

    private static final String LISTEN = "0A";

    private LoopbackOnly() {
    }

    /** Whether this machine has the kernel's socket tables to read (Linux). */
    public static boolean canTell() {
        return Files.isReadable(Path.of("/proc/net/tcp"));
    }

    /**
     * The local addresses (hex, as the kernel writes them) of the sockets listening on {@code port}; empty when
     * none listens there.
     */
    public static List<String> listeningAddresses(int port) {
        String hexPort = String.format(Locale.ROOT, "%04X", port);
        List<String> addresses = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path path = Path.of(table);
            if (!Files.isReadable(path)) {
                continue;
            }
            try {
                for (String line : Files.readAllLines(path)) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length < 4 || !f[3].equals(LISTEN)) {
                        continue;
                    }
                    int colon = f[1].lastIndexOf(':');
                    if (colon > 0 && f[1].substring(colon + 1).equalsIgnoreCase(hexPort)) {
                        addresses.add(f[1].substring(0, colon));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return addresses;
    }

    /**
     * Whether a kernel's hex local address is a loopback one: 127.0.0.0/8 (IPv4, little-endian in the table),
     * ::1, or an IPv4-mapped 127.x address.
     */
    public static boolean isLoopback(String hexAddress) {
        String a = hexAddress.toUpperCase(Locale.ROOT);
        if (a.length() == 8) {
            return a.endsWith("7F");
        }
        return a.equals("00000000000000000000000001000000")
                || a.startsWith("0000000000000000FFFF0000") && a.endsWith("7F");
    }
}
