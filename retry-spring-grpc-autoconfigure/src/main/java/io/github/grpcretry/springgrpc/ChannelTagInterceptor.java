package io.github.grpcretry.springgrpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The outermost interceptor of every Spring gRPC channel (added by {@link GrpcRetryChannelCustomizer},
 * after every global interceptor and after Spring Boot's default-deadline interceptor, so it runs before
 * them): it tags each call with the channel's name, which {@link GrpcRetryClientInterceptor} reads to
 * pick the channel's engine, and gives a call that has no deadline at all the channel's combined
 * default deadline. Where the interceptors sit, and why, is described in docs/spring-boot-4.md.
 */
final class ChannelTagInterceptor implements ClientInterceptor {

    /** The tag of a call's Spring gRPC channel: its name, and the {@code ManagedChannel} once built. */
    static final CallOptions.Key<ChannelTagInterceptor> CHANNEL = CallOptions.Key.create("io.github.grpcretry.channel");

    /** The tag put on the builder this thread is building a channel from (taken when the factory returns it). */
    private static final ThreadLocal<ChannelTagInterceptor> BUILDING = new ThreadLocal<>();

    private final String channel;
    private final long defaultTimeoutNanos;
    private final Function<MethodDescriptor<?, ?>, Duration> methodTimeouts;
    /** The channel Spring gRPC built with this tag; absent until its factory returned it. */
    private volatile @Nullable ManagedChannel built;
    private volatile @Nullable BuiltChannelView view;

    /**
     * @param defaultTimeout the deadline of a call that has none (none on the stub, none inherited from
     *     an inbound call) and whose method has no service-config timeout; null = leave such calls to
     *     Spring Boot's own default deadline
     */
    ChannelTagInterceptor(String channel, @Nullable Duration defaultTimeout,
            Function<MethodDescriptor<?, ?>, Duration> methodTimeouts) {
        this.channel = Objects.requireNonNull(channel, "channel");
        this.defaultTimeoutNanos = defaultTimeout == null ? 0 : defaultTimeout.toNanos();
        this.methodTimeouts = methodTimeouts;
    }

    /**
     * The default deadline of a channel when both Spring Boot's {@code default.deadline} and
     * {@code grpc.retry.deadline.default-timeout} may be set: the shorter one; null when
     * {@code default-timeout} is not set (Boot's own interceptor then does what it does alone).
     */
    static @Nullable Duration combinedDefault(@Nullable Duration bootDefault, @Nullable Duration ours) {
        if (ours == null) {
            return null;
        }
        return bootDefault != null && bootDefault.compareTo(ours) < 0 ? bootDefault : ours;
    }

    String channel() {
        return channel;
    }

    /** This tag goes on the builder of the channel the current thread's channel factory call is building. */
    void building() {
        BUILDING.set(this);
    }

    /** A channel factory call begins on this thread: a tag left by a build that failed is dropped. */
    static void buildStarts() {
        BUILDING.remove();
    }

    /** A channel factory call on this thread returned {@code channel}: the tag put on its builder learns it. */
    static void builtOnThisThread(ManagedChannel channel) {
        ChannelTagInterceptor tag = BUILDING.get();
        BUILDING.remove();
        if (tag != null) {
            tag.built = channel;
        }
    }

    /**
     * What the channel's stack is put on: {@code next} seen as the built {@code ManagedChannel}
     * ({@link BuiltChannelView}, made once per channel), or {@code next} itself while the channel is unknown.
     */
    Channel below(Channel next) {
        ManagedChannel c = built;
        if (c == null) {
            return next;
        }
        BuiltChannelView v = view;
        if (v == null || v.next() != next) {
            v = new BuiltChannelView(next, c);
            view = v;
        }
        return v;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
            CallOptions callOptions, Channel next) {
        CallOptions options = callOptions.withOption(CHANNEL, this);
        if (defaultTimeoutNanos > 0 && options.getDeadline() == null && Context.current().getDeadline() == null
                && methodTimeouts.apply(method) == null) {
            options = options.withDeadlineAfter(defaultTimeoutNanos, TimeUnit.NANOSECONDS);
        }
        return next.newCall(method, options);
    }

    @Override
    public String toString() {
        return "ChannelTagInterceptor[" + channel + "]";
    }
}
