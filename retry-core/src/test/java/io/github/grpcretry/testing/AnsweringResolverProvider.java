package io.github.grpcretry.testing;

import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A name resolver for one scheme, registered in grpc-java's default registry while open, whose resolvers answer
 * with {@link #answer} when they start and again on {@link #answerAgain} (and on a channel's refresh).
 */
public abstract class AnsweringResolverProvider extends NameResolverProvider implements AutoCloseable {

    private final String scheme;
    /** Each started resolver's answer, then what to run once the listener took it. */
    private final List<Consumer<Runnable>> started = new CopyOnWriteArrayList<>();

    protected AnsweringResolverProvider(String scheme) {
        this.scheme = scheme;
    }

    /** Registers this provider in grpc-java's default registry (until {@link #close}). */
    protected final void register() {
        NameResolverRegistry.getDefaultRegistry().register(this);
    }

    /** What a resolver answers now, with the arguments the channel gave it (its service config parser). */
    protected abstract NameResolver.ResolutionResult answer(NameResolver.Args args);

    /** Every resolver started so far answers again; returns once each channel's listener has taken the answer. */
    protected final void answerAgain() throws InterruptedException {
        CountDownLatch taken = new CountDownLatch(started.size());
        for (Consumer<Runnable> answer : started) {
            answer.accept(taken::countDown);
        }
        if (!taken.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("the channels did not take the new answer within 10 s");
        }
    }

    /** The target a channel names to be resolved by this resolver. */
    public String target() {
        return scheme + ":///service";
    }

    @Override
    public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
        if (!scheme.equals(targetUri.getScheme())) {
            return null;
        }
        return new NameResolver() {
            private volatile Consumer<Runnable> answer;

            @Override
            public String getServiceAuthority() {
                return "localhost";
            }

            @Override
            public void start(Listener2 listener) {
                answer = then -> args.getSynchronizationContext().execute(() -> {
                    listener.onResult2(answer(args));
                    then.run();
                });
                started.add(answer);
                answer.accept(() -> { });
            }

            @Override
            public void refresh() {
                Consumer<Runnable> a = answer;
                if (a != null) {
                    a.accept(() -> { });
                }
            }

            @Override
            public void shutdown() {
                started.remove(answer);
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
    }
}
