package io.github.grpcretry.springgrpc;

import java.util.function.Predicate;

/**
 * Whether the classpath is the one this starter is built for: Spring Boot 4 with Spring gRPC's
 * channels, without net.devh's client (a Spring Boot 3 library) and without this project's Spring
 * Boot 3.5 starter. Looks classes up by name only, so it runs on either Spring Boot line and can stop
 * start-up with a {@link WrongSpringBootLineException} before anything that needs the other line's
 * classes is loaded.
 */
public final class SpringBootLineCheck {

    /** The artifact of this line. */
    public static final String THIS_STARTER = "io.github.grpcretry:retry-spring-grpc-starter";

    /** The artifact of the Spring Boot 3.5 line (net.devh channels). */
    public static final String BOOT3_STARTER = "io.github.grpcretry:retry-starter";

    /** A class of Spring Boot 4's core jar that Spring Boot 3 does not have (it moved in 4.0). */
    static final String BOOT4_CLASS = "org.springframework.boot.EnvironmentPostProcessor";

    /** net.devh's client channel factory. */
    static final String NET_DEVH_CLIENT_CLASS = "net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory";

    /** net.devh's server auto-configuration. */
    static final String NET_DEVH_SERVER_CLASS = "net.devh.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration";

    /** The Spring Boot 3.5 line's main auto-configuration. */
    static final String BOOT3_LINE_CLASS = "io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration";

    private SpringBootLineCheck() {
    }

    /**
     * The first problem found, or {@code null} when the classpath fits this starter.
     *
     * @param present whether a class of the given name can be loaded
     */
    public static WrongSpringBootLineException problem(Predicate<String> present) {
        if (!present.test(BOOT4_CLASS)) {
            return new WrongSpringBootLineException(
                    THIS_STARTER + " is the Spring Boot 4.1 line of grpc-retry (Spring gRPC channels), but this"
                            + " application runs on Spring Boot 3 (" + BOOT4_CLASS
                            + ", which every Spring Boot 4 application has, is missing).",
                    "On Spring Boot 3.5 with net.devh's gRPC client, depend on " + BOOT3_STARTER
                            + " instead of " + THIS_STARTER + ". Or move the application to Spring Boot 4.1"
                            + " and Spring gRPC (spring-boot-starter-grpc-client).");
        }
        boolean netDevhClient = present.test(NET_DEVH_CLIENT_CLASS);
        if (netDevhClient || present.test(NET_DEVH_SERVER_CLASS)) {
            String found = netDevhClient ? NET_DEVH_CLIENT_CLASS : NET_DEVH_SERVER_CLASS;
            return new WrongSpringBootLineException(
                    "net.devh's gRPC Spring Boot starter (" + found + ") is on the classpath of a Spring Boot 4"
                            + " application. It is a Spring Boot 3 library: its auto-configuration names"
                            + " Spring Boot 3 classes that Spring Boot 4 moved, and its channels are not the"
                            + " Spring gRPC channels that " + THIS_STARTER + " governs.",
                    "Remove net.devh:grpc-client-spring-boot-starter and net.devh:grpc-server-spring-boot-starter"
                            + " (and whatever brings them in). On Spring Boot 4.1 the channels come from"
                            + " spring-boot-starter-grpc-client and the server from spring-boot-starter-grpc-server;"
                            + " keep " + THIS_STARTER + ". Your grpc.retry.* properties stay as they are.");
        }
        if (present.test(BOOT3_LINE_CLASS)) {
            return new WrongSpringBootLineException(
                    "Both lines of grpc-retry are on the classpath: " + BOOT3_STARTER
                            + " (Spring Boot 3.5, net.devh channels) and " + THIS_STARTER
                            + " (Spring Boot 4.1, Spring gRPC channels).",
                    "On Spring Boot 4.1 keep " + THIS_STARTER + " and remove " + BOOT3_STARTER
                            + " (and io.github.grpcretry:retry-starter-autoconfigure).");
        }
        return null;
    }

    /** {@link #problem(Predicate)} with the classes {@code classLoader} can load. */
    public static WrongSpringBootLineException problem(ClassLoader classLoader) {
        return problem(name -> isPresent(name, classLoader));
    }

    private static boolean isPresent(String name, ClassLoader classLoader) {
        try {
            Class.forName(name, false, classLoader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
