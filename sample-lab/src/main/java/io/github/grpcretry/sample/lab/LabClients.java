package io.github.grpcretry.sample.lab;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.grpc.Channel;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How a sample runs the lab's clients: Spring Boot applications of its own line, configured only
 * through properties ({@link ChannelSpec}s written out by {@link #naming()}), whose channels the line's
 * channel factory builds. The experiments (R1, R2) are written against this and run unchanged on both
 * Spring Boot lines.
 */
public interface LabClients {

    /**
     * What a client application expected to fail adds to its properties: the FailureAnalyzer report is
     * what a user sees; the lab shows the property path instead.
     */
    Map<String, String> QUIET_STARTUP_FAILURE = Map.of(
            "logging.level.org.springframework.boot.diagnostics", "OFF",
            "logging.level.org.springframework.boot.SpringApplication", "OFF",
            "logging.level.org.springframework.context", "OFF");

    /**
     * The properties every lab client application gets: isolation from the sample's application.yml
     * ({@code spring.config.name}), quiet start-up and logs, the engine.
     */
    static Map<String, Object> baseProperties(String engine) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("spring.config.name", "grpc-retry-lab");
        p.put("spring.main.banner-mode", "off");
        p.put("spring.main.log-startup-info", "false");
        p.put("spring.jmx.enabled", "false");
        p.put("logging.level.root", "WARN");
        p.put("logging.level.io.github.grpcretry", "WARN");
        p.put("grpc.retry.engine", engine);
        return p;
    }

    /** The engine the clients run ({@code interceptor} or {@code native}). */
    String engine();

    /** The property names of this line and route. */
    ChannelNaming naming();

    /** How the tables name this route, e.g. {@code grpc.retry.*} (shown after each table's title; empty for none). */
    default String route() {
        return "";
    }

    /** A short name of this route, appended to each table's id ({@code R1-boot}; empty for none). */
    default String routeId() {
        return "";
    }

    /** A started client application with these channels (and extra properties). */
    Client client(Collection<ChannelSpec> channels, Map<String, ?> extra);

    /** Starts a client application expected to fail; returns the failure (null when it started). */
    Throwable failingClient(Collection<ChannelSpec> channels);

    /** A running client application. */
    interface Client extends AutoCloseable {

        /** The channel of the {@link ChannelSpec} named {@code name}, as the line's channel factory builds it. */
        Channel channel(String name);

        /** The WARN lines the starter logged while the application started. */
        List<String> warnings();

        /** The effective configuration of every channel (the starter's bean). */
        ChannelRetryConfigs retryConfigs();

        /** The application's meter registry (the starter's meters), null when it has none. */
        io.micrometer.core.instrument.MeterRegistry meters();

        @Override
        void close();
    }
}
