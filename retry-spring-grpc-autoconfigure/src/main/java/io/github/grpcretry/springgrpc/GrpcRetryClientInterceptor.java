package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.reload.ReloadableChannels;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
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
 * guard, the engine (swapped as one when a run-time reload changes the channel's policy, docs/reload.md); a call without a tag (a channel built without Spring gRPC's customizers) passes
 * through untouched.
 */
public final class GrpcRetryClientInterceptor implements ClientInterceptor, Ordered {

    private final Function<String, ClientInterceptor> stacks;
    private final Map<String, ClientInterceptor> byChannel = new ConcurrentHashMap<>();

    /**
     * @param stacks the one interceptor of a channel ({@link ReloadableChannels#interceptor}), which runs the
     *     channel's current interceptors, outermost first; asked once per channel name
     */
    GrpcRetryClientInterceptor(Function<String, ClientInterceptor> stacks) {
        this.stacks = Objects.requireNonNull(stacks, "stacks");
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
            CallOptions callOptions, Channel next) {
        ChannelTagInterceptor tag = callOptions.getOption(ChannelTagInterceptor.CHANNEL);
        if (tag == null) {
            return next.newCall(method, callOptions);
        }
        String channel = tag.channel();
        ClientInterceptor stack = byChannel.get(channel);
        if (stack == null) {
            stack = byChannel.computeIfAbsent(channel, stacks);
        }
        return stack.interceptCall(method, callOptions, tag.below(next));
    }

    @Override
    public String toString() {
        return "GrpcRetryClientInterceptor" + byChannel.keySet();
    }
}
