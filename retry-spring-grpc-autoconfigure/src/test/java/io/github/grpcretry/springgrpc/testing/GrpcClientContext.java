package io.github.grpcretry.springgrpc.testing;

import io.grpc.ManagedChannel;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.grpc.client.ChannelBuilderOptions;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * A Spring Boot 4.1 client application: every auto-configuration on the test classpath (Spring Boot's
 * gRPC client, observation and metrics, this starter), no web server, no gRPC server. Channels come
 * from Spring gRPC's {@link GrpcChannelFactory}, as an application gets them.
 */
public final class GrpcClientContext implements AutoCloseable {

    private final ConfigurableApplicationContext context;

    private GrpcClientContext(ConfigurableApplicationContext context) {
        this.context = context;
    }

    /** Starts the application with these properties ({@code key=value}) and beans (instances or classes). */
    public static GrpcClientContext start(List<Object> beans, String... properties) {
        return start(beans, java.util.Map.of(), properties);
    }

    /** As {@link #start(List, String...)}, with these environment variables ({@link EnvironmentVariables}). */
    public static GrpcClientContext start(List<Object> beans, java.util.Map<String, Object> environmentVariables,
            String... properties) {
        List<String> props = new ArrayList<>(List.of("spring.grpc.server.enabled=false", "spring.main.banner-mode=off"));
        props.addAll(List.of(properties));
        return new GrpcClientContext(new SpringApplicationBuilder(ClientApp.class)
                .web(WebApplicationType.NONE)
                .initializers(c -> register((GenericApplicationContext) c, beans),
                        EnvironmentVariables.of(environmentVariables))
                .properties(GrpcClientContext.asMap(props))
                .run());
    }

    public static GrpcClientContext start(String... properties) {
        return start(List.of(), properties);
    }

    /** {@code key=value} strings split at the first '=' (a key may hold ':', as in-process channel names do). */
    static java.util.Map<String, Object> asMap(List<String> properties) {
        java.util.Map<String, Object> map = new java.util.LinkedHashMap<>();
        for (String p : properties) {
            int eq = p.indexOf('=');
            map.put(p.substring(0, eq), p.substring(eq + 1));
        }
        return map;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static void register(GenericApplicationContext c, List<Object> beans) {
        for (Object bean : beans) {
            if (bean instanceof Class<?> type) {
                c.registerBean(type);
            } else {
                c.registerBean(bean.getClass().getName() + "#" + System.identityHashCode(bean), (Class) bean.getClass(),
                        () -> bean);
            }
        }
    }

    /** A channel as Spring gRPC builds it for {@code name}. */
    public ManagedChannel channel(String name) {
        return context.getBean(GrpcChannelFactory.class).createChannel(name);
    }

    /** A channel with the channel's own (per-attempt) interceptors and options. */
    public ManagedChannel channel(String name, ChannelBuilderOptions options) {
        return context.getBean(GrpcChannelFactory.class).createChannel(name, options);
    }

    public SimpleServiceGrpc.SimpleServiceBlockingStub stub(String name) {
        return SimpleServiceGrpc.newBlockingStub(channel(name));
    }

    /** A request whose scenario key (see {@link ScriptedService}) is {@code key}. */
    public static SimpleRequest request(String key) {
        return SimpleRequest.newBuilder().setRequestMessage(key).build();
    }

    public ConfigurableApplicationContext context() {
        return context;
    }

    public <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    @Override
    public void close() {
        context.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ClientApp {
    }
}
