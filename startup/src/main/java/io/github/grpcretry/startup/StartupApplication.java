package io.github.grpcretry.startup;

import io.grpc.Channel;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.metrics.ApplicationStartup;
import org.springframework.core.metrics.StartupStep;
import org.springframework.util.ClassUtils;

/**
 * A small web application with one gRPC channel, the same on both Spring Boot lines: the channel comes from
 * the line's channel factory (net.devh's on 3.5, Spring gRPC's on 4.1), as {@code @GrpcClient} or an
 * application's own {@code createChannel} would make it. At {@link ApplicationReadyEvent} it prints
 * {@code READY <ms since the JVM started> <CPU ms of the main thread>} and exits; the main thread's CPU time
 * (the context starts on it) does not count time spent waiting for a core, so it moves far less than the
 * wall time on a shared machine. With {@code -Dstartup.steps=<file>} it records Spring's start-up steps
 * (an {@link ApplicationStartup} like Spring Boot's {@code BufferingApplicationStartup} that also reads the
 * thread's CPU time) and writes one line per step: id, parent id, name, wall and CPU microseconds, tags.
 * With {@code -Dstartup.again=N} it then starts the application N more times in the same JVM (see main). With
 * {@code -Dstartup.census=<file>} it writes what the context holds of the starter's (see census).
 */
@SpringBootApplication
public class StartupApplication {

    private static final String[] CHANNEL_FACTORIES = {
        "org.springframework.grpc.client.GrpcChannelFactory", // Spring gRPC (Spring Boot 4.1)
        "net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory", // net.devh (Spring Boot 3.5)
    };

    /** The application's one channel, made while the context starts. */
    @Bean
    Channel inventoryChannel(ApplicationContext context) throws ReflectiveOperationException {
        for (String name : CHANNEL_FACTORIES) {
            if (ClassUtils.isPresent(name, StartupApplication.class.getClassLoader())) {
                Class<?> type = ClassUtils.forName(name, StartupApplication.class.getClassLoader());
                Object factory = context.getBean(type);
                return (Channel) type.getMethod("createChannel", String.class).invoke(factory, "inventory");
            }
        }
        throw new IllegalStateException("no gRPC channel factory on the class path");
    }

    public static void main(String[] args) throws IOException {
        String stepsFile = System.getProperty("startup.steps");
        SpringApplication application = new SpringApplication(StartupApplication.class);
        CpuStartup steps = stepsFile == null ? null : new CpuStartup();
        if (steps != null) {
            application.setApplicationStartup(steps);
        }
        application.addListeners(event -> {
            if (event instanceof ApplicationReadyEvent) {
                long ms = System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime();
                long cpuMs = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() / 1_000_000;
                System.out.println("READY " + ms + " " + cpuMs);
            }
        });
        ConfigurableApplicationContext context = application.run(args);
        String censusFile = System.getProperty("startup.census");
        if (censusFile != null) {
            Files.write(Path.of(censusFile), census(context));
        }
        if (steps != null) {
            Files.write(Path.of(stepsFile), steps.lines);
        }
        context.close();
        // -Dstartup.again=N: N further contexts of the same application in this JVM, one after the other, as a
        // test suite starts its @SpringBootTest contexts (the classes are loaded by then); each prints
        // AGAIN <wall ms> <CPU ms of the main thread> <with|excluded> from run() to ApplicationReadyEvent. With
        // -Dstartup.pairs=true every other one excludes the starter's auto-configurations
        // (spring.autoconfigure.exclude), in an order that alternates from pair to pair: the two contexts of a
        // pair run seconds apart in one JVM, so what the machine does meanwhile moves both alike.
        int again = Integer.getInteger("startup.again", 0);
        boolean pairs = Boolean.getBoolean("startup.pairs");
        String starterAutoConfigurations = pairs ? starterAutoConfigurations() : "";
        for (int i = 0; i < again; i++) {
            boolean exclude = pairs && (i % 2 == 1) != ((i / 2) % 2 == 1);
            long wall = System.nanoTime();
            long cpu = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
            SpringApplication next = new SpringApplication(StartupApplication.class);
            if (exclude) {
                next.setDefaultProperties(Map.of("spring.autoconfigure.exclude", starterAutoConfigurations));
            }
            next.addListeners(event -> {
                if (event instanceof ApplicationReadyEvent) {
                    System.out.println("AGAIN " + (System.nanoTime() - wall) / 1_000_000 + " "
                            + (ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - cpu) / 1_000_000
                            + (exclude ? " excluded" : " with"));
                }
            });
            next.run(args).close();
        }
        System.exit(0);
    }

    /**
     * With {@code -Dstartup.census=<file>}: what the started context holds of the starter's, one
     * {@code key value} line each: {@code beans} (all bean definitions), {@code starterBeans} (those whose name
     * or class is the starter's), {@code starterConfigurationClasses} (of those, the configuration classes),
     * {@code starterConditionSources} and {@code starterConditions} (the classes and {@code @Bean} methods of
     * the starter that Spring Boot's condition evaluation report holds, and their conditions), then one
     * {@code bean <name> <class>} line per starter bean.
     */
    private static List<String> census(ConfigurableApplicationContext context) {
        ConfigurableListableBeanFactory factory = context.getBeanFactory();
        List<String> starterBeans = new ArrayList<>();
        int configurations = 0;
        for (String name : factory.getBeanDefinitionNames()) {
            Class<?> beanType = factory.getType(name, false);
            String type = beanType == null ? String.valueOf(factory.getBeanDefinition(name).getBeanClassName())
                    : ClassUtils.getUserClass(beanType).getName();
            if (STARTER_BEAN.matcher(name).lookingAt() || STARTER_BEAN.matcher(type).lookingAt()) {
                starterBeans.add("bean " + name + " " + type);
                if (beanType != null && AnnotatedElementUtils.hasAnnotation(ClassUtils.getUserClass(beanType),
                        Configuration.class)) {
                    configurations++;
                }
            }
        }
        int sources = 0;
        int conditions = 0;
        for (var entry : ConditionEvaluationReport.get(factory).getConditionAndOutcomesBySource().entrySet()) {
            if (STARTER_BEAN.matcher(entry.getKey()).lookingAt()) {
                sources++;
                conditions += (int) StreamSupport.stream(entry.getValue().spliterator(), false).count();
            }
        }
        List<String> lines = new ArrayList<>();
        lines.add("beans " + factory.getBeanDefinitionCount());
        lines.add("starterBeans " + starterBeans.size());
        lines.add("starterConfigurationClasses " + configurations);
        lines.add("starterConditionSources " + sources);
        lines.add("starterConditions " + conditions);
        Collections.sort(starterBeans);
        lines.addAll(starterBeans);
        return lines;
    }

    /** A bean name or class name of the starter's (not this application's). */
    private static final Pattern STARTER_BEAN = Pattern.compile(
            "grpcRetry|grpcDeadline|grpcContext|grpc\\.retry-|io\\.github\\.grpcretry\\.(?!startup\\.)");

    /** The starter's auto-configurations on the class path, comma-separated (none without the starter). */
    private static String starterAutoConfigurations() throws IOException {
        List<String> names = new ArrayList<>();
        var resources = StartupApplication.class.getClassLoader()
                .getResources("META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports");
        while (resources.hasMoreElements()) {
            try (var in = resources.nextElement().openStream()) {
                for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                    if (line.trim().startsWith("io.github.grpcretry.")) {
                        names.add(line.trim());
                    }
                }
            }
        }
        return String.join(",", names);
    }

    /** Records every step with its wall and CPU time (of the thread it ran on), its parent and its tags. */
    static final class CpuStartup implements ApplicationStartup {

        private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        private final AtomicLong ids = new AtomicLong();
        private final ThreadLocal<Deque<Step>> open = ThreadLocal.withInitial(ArrayDeque::new);
        final List<String> lines = Collections.synchronizedList(new ArrayList<>());

        @Override
        public StartupStep start(String name) {
            Deque<Step> stack = open.get();
            Step step = new Step(ids.incrementAndGet(), stack.isEmpty() ? null : stack.peek().id, name);
            stack.push(step);
            return step;
        }

        final class Step implements StartupStep {
            private final long id;
            private final Long parentId;
            private final String name;
            private final List<Tag> tags = new ArrayList<>();
            private final long wall = System.nanoTime();
            private final long cpu = threads.getCurrentThreadCpuTime();

            Step(long id, Long parentId, String name) {
                this.id = id;
                this.parentId = parentId;
                this.name = name;
            }

            @Override
            public String getName() {
                return name;
            }

            @Override
            public long getId() {
                return id;
            }

            @Override
            public Long getParentId() {
                return parentId;
            }

            @Override
            public StartupStep tag(String key, String value) {
                tags.add(new Tag() {
                    @Override
                    public String getKey() {
                        return key;
                    }

                    @Override
                    public String getValue() {
                        return value;
                    }
                });
                return this;
            }

            @Override
            public StartupStep tag(String key, Supplier<String> value) {
                return tag(key, value.get());
            }

            @Override
            public Tags getTags() {
                return new Tags() {
                    @Override
                    public Iterator<Tag> iterator() {
                        return tags.iterator();
                    }
                };
            }

            @Override
            public void end() {
                long wallMicros = (System.nanoTime() - wall) / 1000;
                long cpuMicros = (threads.getCurrentThreadCpuTime() - cpu) / 1000;
                open.get().remove(this);
                String tagText = StreamSupport.stream(tags.spliterator(), false)
                        .map(tag -> tag.getKey() + "=" + tag.getValue()).collect(Collectors.joining(" "));
                lines.add(id + "\t" + parentId + "\t" + name + "\t" + wallMicros + "\t" + cpuMicros + "\t" + tagText);
            }
        }
    }
}
