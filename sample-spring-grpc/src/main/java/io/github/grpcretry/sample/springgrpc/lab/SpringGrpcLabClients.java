package io.github.grpcretry.sample.springgrpc.lab;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.sample.lab.ChannelNaming;
import io.github.grpcretry.sample.lab.ChannelSpec;
import io.github.grpcretry.sample.lab.LabClients;
import io.github.grpcretry.sample.lab.WarningCapture;
import io.grpc.Channel;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * The lab's clients on Spring Boot 4.1: ordinary auto-configured applications (Spring Boot's gRPC client
 * and this starter, no gRPC or web server, without the sample's application.yml) whose channels Spring
 * gRPC's {@link GrpcChannelFactory} builds, configured only through properties, along one of two routes:
 * the service config under {@code grpc.retry.clients.<name>.service-config} ({@link Route#PROPERTIES}), or
 * under Spring Boot's own {@code spring.grpc.client.channel.<name>.service-config}, which the engine takes
 * over ({@link Route#BOOT}). Everything else ({@code per-rpc-buffer-limit}, budgets) is under
 * {@code grpc.retry.clients.<name>} on both routes.
 */
public final class SpringGrpcLabClients implements LabClients {

    /** Where a channel's service config is written. */
    public enum Route {
        /** {@code grpc.retry.clients.<name>.service-config}. */
        PROPERTIES("grpc.retry.*", ""),
        /** Spring Boot's {@code spring.grpc.client.channel.<name>.service-config}, taken over by the engine. */
        BOOT("spring.grpc.client.channel.*.service-config", "boot");

        private final String description;
        private final String id;

        Route(String description, String id) {
            this.description = description;
            this.id = id;
        }
    }

    private final String engine;
    private final Route route;
    private final ChannelNaming naming;

    public SpringGrpcLabClients(String engine, Route route) {
        this.engine = engine;
        this.route = route;
        this.naming = new Naming(route);
    }

    @Override
    public String engine() {
        return engine;
    }

    @Override
    public ChannelNaming naming() {
        return naming;
    }

    @Override
    public String route() {
        return route.description;
    }

    @Override
    public String routeId() {
        return route.id;
    }

    /**
     * Spring gRPC's names: a Netty channel is named by the spec ({@code spring.grpc.client.channel.<name>.target});
     * an in-process one by its whole address ({@code in-process:<server>}, which only Spring gRPC's in-process
     * factory builds), written in brackets as a property key.
     */
    private record Naming(Route route) implements ChannelNaming {

        @Override
        public String channelName(ChannelSpec spec) {
            return spec.address().startsWith("in-process:") ? spec.address() : spec.name();
        }

        private String key(ChannelSpec spec) {
            return ChannelNaming.key(channelName(spec));
        }

        @Override
        public Map<String, String> channel(ChannelSpec spec) {
            return spec.address().startsWith("in-process:") ? Map.of()
                    : Map.of("spring.grpc.client.channel." + key(spec) + ".target", spec.address());
        }

        @Override
        public String serviceConfigPrefix(ChannelSpec spec) {
            return route == Route.BOOT ? "spring.grpc.client.channel." + key(spec) + ".service-config."
                    : clientPrefix(spec) + "service-config.";
        }

        @Override
        public String clientPrefix(ChannelSpec spec) {
            return "grpc.retry.clients." + key(spec) + ".";
        }
    }

    /** A client application: every auto-configuration on the class path, the lab's properties only. */
    @EnableAutoConfiguration
    static class ClientApp {
    }

    private Map<String, Object> properties(Collection<ChannelSpec> channels) {
        Map<String, Object> p = LabClients.baseProperties(engine);
        p.put("spring.grpc.server.enabled", "false");
        channels.forEach(c -> p.putAll(c.properties(naming)));
        return p;
    }

    @Override
    public LabClients.Client client(Collection<ChannelSpec> channels, Map<String, ?> extra) {
        Map<String, Object> p = properties(channels);
        p.putAll(extra);
        WarningCapture warnings = new WarningCapture();
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ClientApp.class)
                .web(WebApplicationType.NONE)
                .properties(p)
                .listeners(event -> {
                    if (event instanceof ApplicationPreparedEvent) {
                        warnings.attach();
                    }
                })
                .run();
        Map<String, String> names = new LinkedHashMap<>();
        channels.forEach(c -> names.put(c.name(), naming.channelName(c)));
        return new Client(ctx, names, warnings);
    }

    @Override
    public Throwable failingClient(Collection<ChannelSpec> channels) {
        Map<String, Object> p = properties(channels);
        p.putAll(LabClients.QUIET_STARTUP_FAILURE);
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ClientApp.class)
                .web(WebApplicationType.NONE).properties(p).run()) {
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /**
     * A running client application. Spring gRPC's factory builds a new channel on every
     * {@code createChannel}; the lab, like an application, builds each channel once and keeps it.
     */
    private record Client(ConfigurableApplicationContext context, Map<String, String> names, WarningCapture logged,
            Map<String, Channel> channels) implements LabClients.Client {

        Client(ConfigurableApplicationContext context, Map<String, String> names, WarningCapture logged) {
            this(context, names, logged, new ConcurrentHashMap<>());
        }

        @Override
        public Channel channel(String name) {
            return channels.computeIfAbsent(name,
                    n -> context.getBean(GrpcChannelFactory.class).createChannel(names.getOrDefault(n, n)));
        }

        @Override
        public List<String> warnings() {
            return logged.warnings();
        }

        @Override
        public ChannelRetryConfigs retryConfigs() {
            return context.getBean(ChannelRetryConfigs.class);
        }

        @Override
        public io.micrometer.core.instrument.MeterRegistry meters() {
            return context.getBeanProvider(io.micrometer.core.instrument.MeterRegistry.class).getIfAvailable();
        }

        @Override
        public void close() {
            logged.detach();
            context.close();
        }
    }
}
