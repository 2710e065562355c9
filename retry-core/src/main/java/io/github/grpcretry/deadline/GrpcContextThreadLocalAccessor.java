package io.github.grpcretry.deadline;

import io.grpc.Context;
import io.micrometer.context.ThreadLocalAccessor;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer context-propagation accessor for the gRPC {@code Context} (key
 * {@value GrpcContextPropagation#THREAD_LOCAL_KEY}). The root context counts as "no value", so only a
 * context with a deadline, a cancellation or values is captured. Setting attaches the captured
 * context; restoring detaches back to the context that was current before. Made by
 * {@link GrpcContextPropagation#threadLocalAccessor()}.
 */
final class GrpcContextThreadLocalAccessor implements ThreadLocalAccessor<Context> {

    @Override
    public Object key() {
        return GrpcContextPropagation.THREAD_LOCAL_KEY;
    }

    @Override
    public @Nullable Context getValue() {
        Context current = Context.current();
        return current == Context.ROOT ? null : current;
    }

    @Override
    public void setValue(Context value) {
        value.attach();
    }

    @Override
    public void setValue() {
        Context.ROOT.attach();
    }

    @Override
    public void restore(Context previousValue) {
        Context.current().detach(previousValue);
    }

    @Override
    public void restore() {
        Context.current().detach(Context.ROOT);
    }
}
