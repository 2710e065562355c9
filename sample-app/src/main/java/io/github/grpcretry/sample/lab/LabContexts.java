package io.github.grpcretry.sample.lab;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.grpc.Channel;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Spring Boot contexts for the lab, configured only through properties: an ordinary
 * {@code @EnableAutoConfiguration} application (net.devh client + the grpc-retry starter + whatever
 * else is on the class path), without the sample's application.yml.
 */
public final class LabContexts {

    /** The net.devh server auto-configurations, left out of client-only contexts. */
    static final String SERVER_AUTOCONFIGS = String.join(",",
            "net.devh.boot.grpc.server.autoconfigure.GrpcAdviceAutoConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcHealthServiceAutoConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcReflectionServiceAutoConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcServerFactoryAutoConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcServerMetricAutoConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcServerMicrometerTraceAutoConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcServerSecurityAutoConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcMetadataConsulConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcMetadataEurekaConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcMetadataNacosConfiguration",
            "net.devh.boot.grpc.server.autoconfigure.GrpcMetadataZookeeperConfiguration");

    /** net.devh's channel properties: {@code grpc.client.<name>.*}, the service config under {@code grpc.retry.clients.<name>}. */
    public static final ChannelNaming NAMING = new ChannelNaming() {
        @Override
        public Map<String, String> channel(ChannelSpec spec) {
            return Map.of("grpc.client." + spec.name() + ".address", spec.address(),
                    "grpc.client." + spec.name() + ".negotiation-type", "plaintext");
        }

        @Override
        public String serviceConfigPrefix(ChannelSpec spec) {
            return clientPrefix(spec) + "service-config.";
        }

        @Override
        public String clientPrefix(ChannelSpec spec) {
            return "grpc.retry.clients." + spec.name() + ".";
        }
    };

    private LabContexts() {
    }

    /** The lab's clients on this line (what the shared experiments run through). */
    public static LabClients clients(String engine) {
        return new LabClients() {
            @Override
            public String engine() {
                return engine;
            }

            @Override
            public ChannelNaming naming() {
                return NAMING;
            }

            @Override
            public LabClients.Client client(Collection<ChannelSpec> channels, Map<String, ?> extra) {
                return LabContexts.client(engine, channels, extra);
            }

            @Override
            public Throwable failingClient(Collection<ChannelSpec> channels) {
                return LabContexts.failingClient(engine, channels);
            }
        };
    }

    /** A client application: net.devh client and the starter, no gRPC or web server. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    public static class ClientApp {
    }

    /** The properties every lab context gets (isolation from application.yml, quiet logs). */
    static Map<String, Object> base(String engine) {
        Map<String, Object> p = LabClients.baseProperties(engine);
        p.put("logging.level.net.devh", "WARN");
        return p;
    }

    /** A started client context with the given channels (and extra properties). */
    public static Client client(String engine, Collection<ChannelSpec> channels, Map<String, ?> extra) {
        Map<String, Object> p = base(engine);
        p.put("spring.autoconfigure.exclude", SERVER_AUTOCONFIGS);
        channels.forEach(c -> p.putAll(c.properties(NAMING)));
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
        return new Client(ctx, warnings);
    }

    /** Starts a context expected to fail; returns the failure (null when it started). */
    public static Throwable failingClient(String engine, Collection<ChannelSpec> channels) {
        Map<String, Object> p = base(engine);
        p.put("spring.autoconfigure.exclude", SERVER_AUTOCONFIGS);
        p.putAll(LabClients.QUIET_STARTUP_FAILURE);
        channels.forEach(c -> p.putAll(c.properties(NAMING)));
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ClientApp.class)
                .web(WebApplicationType.NONE).properties(p).run()) {
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** A running client context and the WARN lines the starter logged while it started. */
    public record Client(ConfigurableApplicationContext context, WarningCapture logged) implements LabClients.Client {

        @Override
        public Channel channel(String name) {
            return context.getBean(GrpcChannelFactory.class).createChannel(name);
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
