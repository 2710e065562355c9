package io.github.grpcretry.spring.channel;

import io.github.grpcretry.attempt.StreamResumption;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.grpc.MethodDescriptor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The application's {@link StreamResumption} beans, checked once at start-up: each names a server-streaming method,
 * no two name the same one. Every channel the interceptor engine runs is given all of them (each applies to its
 * method on every channel); the native engine cannot resume a stream, so with it they are reported once and left
 * unused.
 */
public final class StreamResumptions {

    /** No resumption. */
    public static final StreamResumptions NONE = new StreamResumptions(Map.of());

    /** Each resumption and its bean's name by full method name, in the order the beans were registered. */
    private final Map<String, Named> byMethod;

    private record Named(String bean, StreamResumption<?, ?> resumption) {
    }

    private StreamResumptions(Map<String, Named> byMethod) {
        this.byMethod = byMethod;
    }

    /**
     * The beans (by bean name), checked.
     *
     * @param warn where the one start-up warning goes when {@code engine} is {@link ChannelSetup.Engine#NATIVE} and
     *     there are beans
     * @throws InvalidRetryConfigurationException with a problem per bean whose method is not server-streaming and per
     *     method that two beans name (the start-up report names the beans)
     */
    @SuppressWarnings("rawtypes")
    public static StreamResumptions of(Map<String, ? extends StreamResumption> beans, ChannelSetup.Engine engine,
            Consumer<String> warn) {
        Map<String, Named> byMethod = new LinkedHashMap<>();
        List<ConfigProblem> problems = new ArrayList<>();
        beans.forEach((name, bean) -> {
            MethodDescriptor<?, ?> method = ((StreamResumption<?, ?>) bean).method();
            String fullName = method.getFullMethodName();
            if (method.getType() != MethodDescriptor.MethodType.SERVER_STREAMING) {
                problems.add(new ConfigProblem(describe(name, bean), fullName + " (" + method.getType() + ")",
                        "a StreamResumption applies only to a server-streaming method (one request describes the whole"
                                + " stream, so a new request can describe what remains of it); " + fullName + " is "
                                + method.getType(),
                        "return a server-streaming method's descriptor from method(), or remove the bean"));
                return;
            }
            Named earlier = byMethod.putIfAbsent(fullName, new Named(name, (StreamResumption<?, ?>) bean));
            if (earlier != null) {
                problems.add(new ConfigProblem(describe(earlier.bean(), earlier.resumption()) + " and "
                                + describe(name, bean), fullName,
                        "two StreamResumption beans for one method: a broken stream is continued by one resumer",
                        "keep one StreamResumption bean for " + fullName));
            }
        });
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(problems);
        }
        StreamResumptions out = new StreamResumptions(Collections.unmodifiableMap(byMethod));
        if (engine == ChannelSetup.Engine.NATIVE && !byMethod.isEmpty()) {
            warn.accept("StreamResumption beans for " + String.join(", ", new TreeMap<>(byMethod).keySet())
                    + " are not applied: grpc.retry.engine=native (grpc-java's own retry) has no stream resumption, so a"
                    + " server stream that breaks after its first response ends with the break's status; resumption"
                    + " needs grpc.retry.engine=interceptor");
        }
        return out;
    }

    private static String describe(String bean, Object resumption) {
        return "StreamResumption bean '" + bean + "' (" + resumption.getClass().getName() + ")";
    }

    /** Every resumption, for {@code RetryingClientInterceptor.Builder.streamResumptions}. */
    public List<StreamResumption<?, ?>> all() {
        List<StreamResumption<?, ?>> out = new ArrayList<>(byMethod.size());
        byMethod.values().forEach(n -> out.add(n.resumption()));
        return out;
    }

    /** The class of each method's resumption by full method name, sorted: what the endpoint shows. */
    public Map<String, String> classesByMethod() {
        Map<String, String> out = new TreeMap<>();
        byMethod.forEach((method, n) -> out.put(method, n.resumption().getClass().getName()));
        return out;
    }

    public boolean isEmpty() {
        return byMethod.isEmpty();
    }
}
