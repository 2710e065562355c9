package io.github.grpcretry.springgrpc.testing;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Deadline;
import io.grpc.MethodDescriptor;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A client interceptor that records every call it sees (the deadline it carries), for order tests. */
public class RecordingInterceptor implements ClientInterceptor {

    private final String name;
    private final List<Deadline> calls = new CopyOnWriteArrayList<>();

    public RecordingInterceptor(String name) {
        this.name = name;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
            CallOptions callOptions, Channel next) {
        calls.add(callOptions.getDeadline() == null ? NO_DEADLINE : callOptions.getDeadline());
        return next.newCall(method, callOptions);
    }

    /** Stands for "no deadline" in {@link #deadlines()}. */
    public static final Deadline NO_DEADLINE = Deadline.after(3650, java.util.concurrent.TimeUnit.DAYS);

    public int calls() {
        return calls.size();
    }

    /** The deadline each call carried ({@link #NO_DEADLINE} for none). */
    public List<Deadline> deadlines() {
        return List.copyOf(calls);
    }

    public void clear() {
        calls.clear();
    }

    @Override
    public String toString() {
        return name;
    }
}
