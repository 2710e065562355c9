package io.github.grpcretry.internal.backends;

import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.LoadBalancer;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One attempt's place in its call's history of backends: the engine's stream tracer factory of the attempt
 * extends it, so the history reaches the balancer in the attempt's {@code CallOptions}
 * ({@code PickSubchannelArgs.getCallOptions().getStreamTracerFactories()}) at no allocation of its own. It records
 * the subchannel the attempt's last pick chose (a pick can be redone: a stream waiting for its transport is picked
 * again with the next picker, and the later pick replaces the earlier), and links to the call's earlier attempts
 * through {@link #earlier()}. Written by the picker, read by the picker of the call's later attempts and by the
 * engine when the attempt's stream starts.
 */
public abstract class TriedBackends extends ClientStreamTracer.Factory {

    /** {@code reason} tag of {@code grpc.client.retry.backend.reused}: every ready backend had been tried. */
    public static final String NO_OTHER_READY = "no_other_ready";
    /** {@code reason} tag of {@code grpc.client.retry.backend.reused}: the picks ran out on tried backends. */
    public static final String PICKS_EXHAUSTED = "picks_exhausted";

    private static final byte NOT_REUSED = 0, REUSED_NO_OTHER = 1, REUSED_EXHAUSTED = 2;

    /** The subchannel of the attempt's last pick (null: not picked yet, or the pick chose none). */
    private volatile LoadBalancer.@Nullable Subchannel picked;
    /** Whether that pick went to a tried backend, and why. */
    private volatile byte reuse;

    protected TriedBackends() {
    }

    /** The call's attempt started before this one that has a factory, or null for the first. */
    protected abstract @Nullable TriedBackends earlier();

    /** How many picks the balancer asks for, at most, before it sends this attempt to a tried backend; 0 = off. */
    protected abstract int backendPicks();

    /**
     * The reason to count when this attempt's last pick sent it to a backend the call had tried
     * ({@link #NO_OTHER_READY} or {@link #PICKS_EXHAUSTED}), else null.
     */
    public final @Nullable String reused() {
        byte r = reuse;
        return r == REUSED_NO_OTHER ? NO_OTHER_READY : r == REUSED_EXHAUSTED ? PICKS_EXHAUSTED : null;
    }

    /** The subchannel of this attempt's last pick, or null. */
    final LoadBalancer.@Nullable Subchannel picked() {
        return picked;
    }

    /** Records the attempt's pick (replacing an earlier pick of the same attempt). */
    final void picked(LoadBalancer.Subchannel subchannel, byte reused) {
        this.picked = subchannel;
        this.reuse = reused;
    }

    /** Whether an earlier attempt of the call chose {@code subchannel} (tried, or still waiting on it). */
    final boolean triedEarlier(LoadBalancer.Subchannel subchannel) {
        for (TriedBackends t = earlier(); t != null; t = t.earlier()) {
            if (t.picked == subchannel) {
                return true;
            }
        }
        return false;
    }

    /** Whether the call has an earlier attempt (only then can a pick go to a tried backend). */
    final boolean hasEarlier() {
        return earlier() != null;
    }

    static byte reuseCode(boolean exhausted) {
        return exhausted ? REUSED_EXHAUSTED : REUSED_NO_OTHER;
    }

    static byte notReused() {
        return NOT_REUSED;
    }

    /** The attempt's history among {@code options}' stream tracer factories, or null (not an engine's attempt). */
    static @Nullable TriedBackends of(CallOptions options) {
        List<ClientStreamTracer.Factory> factories = options.getStreamTracerFactories();
        for (int i = factories.size() - 1; i >= 0; i--) { // the engine's is added last, right before newCall
            if (factories.get(i) instanceof TriedBackends t) {
                return t;
            }
        }
        return null;
    }
}
