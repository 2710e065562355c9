package io.github.grpcretry.sample.server;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Flaky servers behind one name: a name resolver for a scheme of its own, registered in grpc-java's default
 * registry while the group is open, answers with every server's 127.0.0.1 address, so one channel (and its load
 * balancer, {@code round_robin} by default on both Spring lines) reaches them all. The group closes its servers.
 */
public final class BackendGroup extends NameResolverProvider implements AutoCloseable {

    private static final AtomicInteger GROUPS = new AtomicInteger();

    private final String scheme = "flakygroup" + GROUPS.incrementAndGet();
    private final List<FlakyServer> servers;

    private BackendGroup(List<FlakyServer> servers) {
        this.servers = List.copyOf(servers);
        NameResolverRegistry.getDefaultRegistry().register(this);
    }

    /** A group of the given (started, Netty) servers; the group closes them. */
    public static BackendGroup of(List<FlakyServer> servers) {
        return new BackendGroup(servers);
    }

    public List<FlakyServer> servers() {
        return servers;
    }

    /** The target both Spring lines take as a channel's address ({@code <scheme>:///flaky}). */
    public String target() {
        return scheme + ":///flaky";
    }

    @Override
    public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
        if (!scheme.equals(targetUri.getScheme())) {
            return null;
        }
        return new NameResolver() {
            @Override
            public String getServiceAuthority() {
                return "localhost";
            }

            @Override
            public void start(Listener2 listener) {
                List<EquivalentAddressGroup> addresses = new ArrayList<>();
                for (FlakyServer s : servers) {
                    addresses.add(new EquivalentAddressGroup(new InetSocketAddress("127.0.0.1", s.port())));
                }
                // start runs in the channel's synchronization context, where onResult2 is to be called
                listener.onResult2(ResolutionResult.newBuilder().setAddresses(addresses).build());
            }

            @Override
            public void shutdown() {
                // a fixed answer: nothing to stop
            }
        };
    }

    @Override
    public String getDefaultScheme() {
        return scheme;
    }

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 5;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }

    @Override
    public void close() {
        NameResolverRegistry.getDefaultRegistry().deregister(this);
        servers.forEach(FlakyServer::close);
    }
}
