package io.github.grpcretry.spring.bootline;

import java.util.Objects;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Whether an application's classpath fits the Spring Boot line of the starter it uses, for a start-up
 * report that names the right artifact instead of a {@code NoClassDefFoundError}. Classes are looked up
 * by name only, so each line's auto-configuration can run the check first, whatever line it runs on.
 */
public final class SpringBootLineCheck {

    /** The Spring Boot 3.5 line (net.devh channels). */
    public static final String BOOT3_STARTER = "io.github.grpcretry:retry-starter";

    /** The Spring Boot 4.1 line (Spring gRPC channels). */
    public static final String BOOT4_STARTER = "io.github.grpcretry:retry-spring-grpc-starter";

    /** A class of Spring Boot 4's core jar that Spring Boot 3 does not have (it moved there in 4.0). */
    public static final String BOOT4_CLASS = "org.springframework.boot.EnvironmentPostProcessor";

    /** net.devh's client channel factory. */
    public static final String NET_DEVH_CLIENT_CLASS = "net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory";

    /** net.devh's server auto-configuration. */
    public static final String NET_DEVH_SERVER_CLASS = "net.devh.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration";

    /** The Spring Boot 3.5 line's main auto-configuration. */
    public static final String BOOT3_LINE_CLASS = "io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration";

    /** The Spring Boot 4.1 line's main auto-configuration. */
    public static final String BOOT4_LINE_CLASS = "io.github.grpcretry.springgrpc.GrpcRetryAutoConfiguration";

    /** What is wrong and what to change. */
    public record Problem(String description, String action) {
        public Problem {
            Objects.requireNonNull(description, "description");
            Objects.requireNonNull(action, "action");
        }
    }

    private SpringBootLineCheck() {
    }

    /**
     * The first problem of a Spring Boot 4.1 line application, or null when the classpath fits:
     * Spring Boot 3, net.devh's starter (a Spring Boot 3 library), or both lines' starters.
     *
     * @param present whether a class of the given name can be loaded
     */
    public static @Nullable Problem forBoot4Line(Predicate<String> present) {
        if (!present.test(BOOT4_CLASS)) {
            return new Problem(BOOT4_STARTER + " is the Spring Boot 4.1 line of grpc-retry (Spring gRPC channels), but"
                    + " this application runs on Spring Boot 3 (" + BOOT4_CLASS
                    + ", which every Spring Boot 4 application has, is missing).",
                    "On Spring Boot 3.5 with net.devh's gRPC client, depend on " + BOOT3_STARTER + " instead of "
                            + BOOT4_STARTER + ". Or move the application to Spring Boot 4.1 and Spring gRPC"
                            + " (spring-boot-starter-grpc-client).");
        }
        boolean netDevhClient = present.test(NET_DEVH_CLIENT_CLASS);
        if (netDevhClient || present.test(NET_DEVH_SERVER_CLASS)) {
            String found = netDevhClient ? NET_DEVH_CLIENT_CLASS : NET_DEVH_SERVER_CLASS;
            return new Problem("net.devh's gRPC Spring Boot starter (" + found + ") is on the classpath of a Spring"
                    + " Boot 4 application. It is a Spring Boot 3 library: its auto-configuration names Spring Boot 3"
                    + " classes that Spring Boot 4 moved, and its channels are not the Spring gRPC channels that "
                    + BOOT4_STARTER + " governs.",
                    "Remove net.devh:grpc-client-spring-boot-starter and net.devh:grpc-server-spring-boot-starter (and"
                            + " whatever brings them in). On Spring Boot 4.1 the channels come from"
                            + " spring-boot-starter-grpc-client and the server from spring-boot-starter-grpc-server;"
                            + " keep " + BOOT4_STARTER + ". Your grpc.retry.* properties stay as they are.");
        }
        if (present.test(BOOT3_LINE_CLASS)) {
            return bothLines(BOOT4_STARTER, BOOT3_STARTER, "4.1");
        }
        return null;
    }

    /**
     * The first problem of a Spring Boot 3.5 line application, or null when the classpath fits:
     * Spring Boot 4, or both lines' starters.
     */
    public static @Nullable Problem forBoot3Line(Predicate<String> present) {
        if (present.test(BOOT4_CLASS)) {
            return new Problem(BOOT3_STARTER + " is the Spring Boot 3.5 line of grpc-retry (net.devh channels), but this"
                    + " application runs on Spring Boot 4 (" + BOOT4_CLASS + " is present). net.devh's starter is a"
                    + " Spring Boot 3 library and does not work on Spring Boot 4.",
                    "On Spring Boot 4.1 depend on " + BOOT4_STARTER + " instead of " + BOOT3_STARTER
                            + ", and on spring-boot-starter-grpc-client instead of net.devh's starters; only the"
                            + " channels' own properties change (grpc.client.<name>.address becomes"
                            + " spring.grpc.client.channel.<name>.target), grpc.retry.* stays as it is.");
        }
        if (present.test(BOOT4_LINE_CLASS)) {
            return bothLines(BOOT3_STARTER, BOOT4_STARTER, "3.5");
        }
        return null;
    }

    private static Problem bothLines(String keep, String remove, String boot) {
        return new Problem("Both lines of grpc-retry are on the classpath: " + BOOT3_STARTER
                + " (Spring Boot 3.5, net.devh channels) and " + BOOT4_STARTER + " (Spring Boot 4.1, Spring gRPC channels).",
                "On Spring Boot " + boot + " keep " + keep + " and remove " + remove + " (and its -autoconfigure module).");
    }

    /**
     * Throws the problem {@link #forBoot4Line} finds among the classes {@code classLoader} can load (what
     * the Spring Boot 4.1 line's first auto-configuration runs).
     *
     * @throws WrongSpringBootLineException when the classpath does not fit the Spring Boot 4.1 line
     */
    public static void requireBoot4Line(@Nullable ClassLoader classLoader) {
        Problem problem = forBoot4Line(name -> isPresent(name, classLoader));
        if (problem != null) {
            throw new WrongSpringBootLineException(problem);
        }
    }

    /**
     * Throws the problem {@link #forBoot3Line} finds among the classes {@code classLoader} can load (what
     * the Spring Boot 3.5 line's first auto-configuration runs).
     *
     * @throws WrongSpringBootLineException when the classpath does not fit the Spring Boot 3.5 line
     */
    public static void requireBoot3Line(@Nullable ClassLoader classLoader) {
        Problem problem = forBoot3Line(name -> isPresent(name, classLoader));
        if (problem != null) {
            throw new WrongSpringBootLineException(problem);
        }
    }

    /** Whether {@code classLoader} can load the class {@code name}. */
    public static boolean isPresent(String name, @Nullable ClassLoader classLoader) {
        try {
            Class.forName(name, false, classLoader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
