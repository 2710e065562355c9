package io.github.grpcretry.sample.lab;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.Channel;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.slf4j.LoggerFactory;
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

    private LabContexts() {
    }

    /** A client application: net.devh client and the starter, no gRPC or web server. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    public static class ClientApp {
    }

    /** The properties every lab context gets (isolation from application.yml, quiet logs). */
    static Map<String, Object> base(String engine) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("spring.config.name", "grpc-retry-lab");
        p.put("spring.main.banner-mode", "off");
        p.put("spring.main.log-startup-info", "false");
        p.put("spring.jmx.enabled", "false");
        p.put("logging.level.root", "WARN");
        p.put("logging.level.io.github.grpcretry", "WARN");
        p.put("logging.level.net.devh", "WARN");
        p.put("grpc.retry.engine", engine);
        return p;
    }

    /** A started client context with the given channels (and extra properties). */
    public static Client client(String engine, Collection<ChannelSpec> channels, Map<String, ?> extra) {
        Map<String, Object> p = base(engine);
        p.put("spring.autoconfigure.exclude", SERVER_AUTOCONFIGS);
        channels.forEach(c -> p.putAll(c.properties()));
        p.putAll(extra);
        List<ILoggingEvent> warnings = new ArrayList<>();
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ClientApp.class)
                .web(WebApplicationType.NONE)
                .properties(p)
                .listeners(event -> {
                    if (event instanceof ApplicationPreparedEvent) {
                        captureWarnings(warnings);
                    }
                })
                .run();
        return new Client(ctx, warnings);
    }

    /** Starts a context expected to fail; returns the failure (null when it started). */
    public static Throwable failingClient(String engine, Collection<ChannelSpec> channels) {
        Map<String, Object> p = base(engine);
        p.put("spring.autoconfigure.exclude", SERVER_AUTOCONFIGS);
        // the FailureAnalyzer report is what a user sees; the lab shows the property path instead
        p.put("logging.level.org.springframework.boot.diagnostics", "OFF");
        p.put("logging.level.org.springframework.boot.SpringApplication", "OFF");
        p.put("logging.level.org.springframework.context", "OFF");
        channels.forEach(c -> p.putAll(c.properties()));
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ClientApp.class)
                .web(WebApplicationType.NONE).properties(p).run()) {
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    private static void captureWarnings(List<ILoggingEvent> sink) {
        if (!(LoggerFactory.getLogger("io.github.grpcretry") instanceof Logger logger)) {
            return;
        }
        ListAppender<ILoggingEvent> appender = new ListAppender<>() {
            @Override
            protected void append(ILoggingEvent e) {
                synchronized (sink) {
                    sink.add(e);
                }
            }
        };
        appender.setName("grpc-retry-lab-capture");
        appender.setContext(logger.getLoggerContext());
        appender.start();
        logger.addAppender(appender);
    }

    /** A running client context and the WARN lines the starter logged while it started. */
    public record Client(ConfigurableApplicationContext context, List<ILoggingEvent> logged) implements AutoCloseable {

        public Channel channel(String name) {
            return context.getBean(GrpcChannelFactory.class).createChannel(name);
        }

        public List<String> warnings() {
            synchronized (logged) {
                return logged.stream().filter(e -> e.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.WARN))
                        .map(ILoggingEvent::getFormattedMessage).toList();
            }
        }

        @Override
        public void close() {
            context.close();
        }
    }
}
