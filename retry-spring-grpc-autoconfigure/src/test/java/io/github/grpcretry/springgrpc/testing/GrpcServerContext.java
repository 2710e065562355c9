package io.github.grpcretry.springgrpc.testing;

import io.grpc.BindableService;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.grpc.server.GlobalServerInterceptor;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;

/**
 * A Spring Boot 4.1 application serving one gRPC service on Spring gRPC's server (Netty on loopback,
 * port 0, and, when named, in-process as well), with every auto-configuration on the test classpath
 * (this starter's server interceptors included) and no web server.
 */
public final class GrpcServerContext implements AutoCloseable {

    private static final AtomicInteger NAMES = new AtomicInteger();

    private final ConfigurableApplicationContext context;
    private final String inProcessName;
    private final int port;

    private GrpcServerContext(ConfigurableApplicationContext context, String inProcessName, int port) {
        this.context = context;
        this.inProcessName = inProcessName;
        this.port = port;
    }

    /**
     * Starts {@code service} on Netty (127.0.0.1, a free port) and in-process under a fresh name.
     *
     * @param properties more properties ({@code key=value})
     */
    public static GrpcServerContext start(BindableService service, String... properties) {
        return start(new Object[] {service}, properties);
    }

    /** As {@link #start(BindableService, String...)} with more beans (services, interceptors, configurations). */
    public static GrpcServerContext start(Object[] beans, String... properties) {
        String name = "server-" + NAMES.incrementAndGet();
        List<String> props = new ArrayList<>(List.of(
                "spring.grpc.server.port=0",
                "spring.grpc.server.address=127.0.0.1",
                "spring.grpc.server.inprocess.name=" + name,
                "spring.grpc.server.shutdown.grace-period=0s",
                "spring.main.banner-mode=off"));
        props.addAll(List.of(properties));
        PortCapture ports = new PortCapture();
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ServerApp.class)
                .web(WebApplicationType.NONE)
                .initializers(c -> {
                    for (Object bean : beans) {
                        if (bean instanceof Class<?> type) {
                            ((org.springframework.context.support.GenericApplicationContext) c).registerBean(type);
                        } else {
                            registerInstance(c, bean);
                        }
                    }
                })
                .listeners(ports)
                .properties(GrpcClientContext.asMap(props))
                .run();
        return new GrpcServerContext(ctx, name, ports.port);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void registerInstance(ConfigurableApplicationContext c, Object bean) {
        ((org.springframework.context.support.GenericApplicationContext) c)
                .registerBean(bean.getClass().getName() + "#" + System.identityHashCode(bean),
                        (Class) bean.getClass(), () -> bean);
    }

    /** The in-process target: a channel name for Spring gRPC's in-process channel factory. */
    public String inProcessTarget() {
        return "in-process:" + inProcessName;
    }

    /** The Netty target ({@code static://127.0.0.1:<port>}). */
    public String nettyTarget() {
        return "static://127.0.0.1:" + port;
    }

    public int port() {
        return port;
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
    static class ServerApp {
        @Bean
        @GlobalServerInterceptor
        HeaderCapture scriptedServiceHeaderCapture() {
            return new HeaderCapture();
        }
    }

    static final class PortCapture implements ApplicationListener<GrpcServerStartedEvent> {
        volatile int port = -1;

        @Override
        public void onApplicationEvent(GrpcServerStartedEvent event) {
            if (event.getPort() > 0) {
                port = event.getPort();
            }
        }
    }

    @Override
    public String toString() {
        return Objects.toString(inProcessTarget()) + " / " + nettyTarget();
    }
}
