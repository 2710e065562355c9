package io.github.grpcretry.springgrpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.MethodDescriptor;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;

/**
 * The engine's place in every Spring gRPC channel: one global client interceptor
 * ({@code @GlobalClientInterceptor}, {@link Ordered#LOWEST_PRECEDENCE}, registered after Spring Boot's
 * observation interceptor), so it is the last global interceptor of every channel: inside the call's
 * observation and every other global interceptor, outside the channel's own
 * ({@code ChannelBuilderOptions}) interceptors, which therefore see each attempt. For a call tagged by
 * {@link ChannelTagInterceptor} it runs the channel's stack, outermost first: the deadline rules, the
 * guard, the engine; a call without a tag (a channel built without Spring gRPC's customizers) passes
 * through untouched.
 */
public final class GrpcRetryClientInterceptor implements ClientInterceptor, Ordered {

    private final Function<String, List<ClientInterceptor>> stacks;
    private final Map<String, Stack> byChannel = new ConcurrentHashMap<>();

    /** @param stacks the interceptors of a channel, outermost first, made once per channel name */
    GrpcRetryClientInterceptor(Function<String, List<ClientInterceptor>> stacks) {
        this.stacks = Objects.requireNonNull(stacks, "stacks");
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
            CallOptions callOptions, Channel next) {
        String channel = callOptions.getOption(ChannelTagInterceptor.CHANNEL);
        if (channel == null) {
            return next.newCall(method, callOptions);
        }
        Stack stack = byChannel.get(channel);
        if (stack == null) {
            stack = byChannel.computeIfAbsent(channel, name -> new Stack(stacks.apply(name)));
        }
        return stack.over(next).newCall(method, callOptions);
    }

    /** The interceptors of the channels that made calls so far, outermost first. */
    List<ClientInterceptor> stackOf(String channel) {
        Stack stack = byChannel.get(channel);
        return stack == null ? List.of() : stack.interceptors;
    }

    /** One channel's interceptors, composed over the channel below them (cached: it is the same object per managed channel). */
    private static final class Stack {
        private final List<ClientInterceptor> interceptors;
        private volatile @Nullable Composed last;

        Stack(List<ClientInterceptor> interceptors) {
            this.interceptors = List.copyOf(interceptors);
        }

        Channel over(Channel next) {
            Composed c = last;
            if (c != null && c.next == next) {
                return c.composed;
            }
            Channel composed = ClientInterceptors.interceptForward(next, interceptors);
            last = new Composed(next, composed);
            return composed;
        }
    }

    private record Composed(Channel next, Channel composed) {
    }

    @Override
    public String toString() {
        return "GrpcRetryClientInterceptor" + byChannel.keySet();
    }
}
