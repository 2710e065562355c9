package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.report.ChannelStateSource;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.grpc.client.CompositeGrpcChannelFactory;
import org.springframework.grpc.client.GrpcChannelFactory;
import org.springframework.util.ClassUtils;

/**
 * The connectivity state of every channel Spring gRPC builds, for the health contributor, the endpoint
 * and the {@code grpc.client.channel.state} gauges. Spring gRPC's channel factories keep the channels
 * they build to themselves, so each factory bean (not the composite, which delegates to them) is
 * wrapped in a JDK proxy over its interfaces ({@link GrpcChannelFactory} and {@code DisposableBean}, as Spring
 * gRPC and Spring Boot use it) that notes the {@code ManagedChannel} each {@code createChannel(name)} returns;
 * its behaviour is unchanged. Made with {@code java.lang.reflect.Proxy}, not a class-based spring-aop proxy, so a
 * start loads none of spring-aop's, cglib's and objenesis's classes for it; the bean is then no longer an
 * instance of the factory's class (an application that injects {@code NettyGrpcChannelFactory} rather than
 * {@code GrpcChannelFactory} does not find it: docs/spring-boot-4.md). The latest channel of a name is the one
 * reported. Each channel built is also handed to the {@link ChannelTagInterceptor} put on its builder, so that
 * the engine of its calls follows that channel's shut-down (docs/design.md §18).
 */
public final class SpringGrpcChannelStates implements ChannelStateSource, BeanPostProcessor {

    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final List<BiConsumer<String, ManagedChannel>> listeners = new CopyOnWriteArrayList<>();

    /** Calls {@code listener} with every channel built so far and every channel built from now on. */
    public synchronized void onChannel(BiConsumer<String, ManagedChannel> listener) {
        listeners.add(listener);
        channels.forEach(listener);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof GrpcChannelFactory) || bean instanceof CompositeGrpcChannelFactory) {
            return bean;
        }
        return Proxy.newProxyInstance(ClassUtils.getDefaultClassLoader(), ClassUtils.getAllInterfaces(bean),
                (proxy, method, args) -> {
                    boolean create = method.getName().equals("createChannel");
                    if (create) {
                        ChannelTagInterceptor.buildStarts();
                    }
                    Object result;
                    try {
                        result = method.invoke(bean, args);
                    } catch (InvocationTargetException e) {
                        Throwable cause = e.getCause();
                        throw cause == null ? e : cause;
                    }
                    if (result instanceof ManagedChannel channel && create && args.length > 0 && args[0] instanceof String name) {
                        ChannelTagInterceptor.builtOnThisThread(channel);
                        built(name, channel);
                    }
                    return result;
                });
    }

    private synchronized void built(String name, ManagedChannel channel) {
        channels.put(name, channel);
        for (BiConsumer<String, ManagedChannel> listener : listeners) {
            listener.accept(name, channel);
        }
    }

    @Override
    public Map<String, ConnectivityState> states() {
        Map<String, ConnectivityState> out = new LinkedHashMap<>();
        channels.forEach((name, channel) -> out.put(name, channel.getState(false)));
        return out;
    }
}
