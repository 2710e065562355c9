package io.github.grpcretry.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.autoconfigure.GrpcRetryAutoConfiguration;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.SimpleCalls;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.devh.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * Hostile property values (what a YAML file or the environment can hold), fuzzed into real Spring
 * contexts with net.devh's client auto-configuration and the starter's: each seeded case mutates a
 * valid configuration (values replaced by hostile ones, keys dropped or added, list indexes moved).
 * Each case must either start, and then give a working channel (a call through it ends with a
 * status), or fail start-up with a failure report: the starter's
 * ({@link InvalidRetryConfigurationException}) or Boot's
 * for values it cannot bind ({@link BindException}), naming a {@code grpc.retry} property. Any other
 * exception, or a hang, fails the test.
 */
class PropertyFuzzTest {

    static final int CASES = Integer.getInteger("fuzz.property.cases", 1000);

    private static final String C = "grpc.retry.clients.inventory.";
    private static final String M = C + "service-config.method[0].";
    private static final String H = C + "service-config.method[1].";

    private static final Map<String, String> BASE = new LinkedHashMap<>();

    static {
        BASE.put(M + "name[0].service", "grpc.testing.SimpleService");
        BASE.put(M + "retry.max-attempts", "3");
        BASE.put(M + "retry.initial-backoff", "5ms");
        BASE.put(M + "retry.max-backoff", "50ms");
        BASE.put(M + "retry.backoff-multiplier", "2");
        BASE.put(M + "retry.retryable-status-codes", "UNAVAILABLE");
        BASE.put(M + "timeout", "5s");
        BASE.put(H + "name[0].service", "grpc.testing.Other");
        BASE.put(H + "hedging.max-attempts", "3");
        BASE.put(H + "hedging.delay", "10ms");
        BASE.put(C + "service-config.retrythrottling.max-tokens", "10");
        BASE.put(C + "service-config.retrythrottling.token-ratio", "0.1");
        BASE.put(C + "budget.ratio", "0.1");
        BASE.put(C + "budget.ttl", "10s");
        BASE.put(C + "max-attempts-cap", "5");
        BASE.put(C + "per-rpc-buffer-limit", "1MB");
        BASE.put(C + "retry-buffer-size", "16MB");
        BASE.put(C + "connect-timeout", "2s");
        BASE.put("grpc.retry.clients.GLOBAL.max-attempts-cap", "4");
        BASE.put("grpc.retry.deadline.default-timeout", "10s");
        BASE.put("grpc.retry.deadline.reserve", "20ms");
        BASE.put("grpc.retry.deadline.min-remaining", "5ms");
        BASE.put("grpc.retry.deadline.http.max", "30s");
        BASE.put("grpc.retry.engine", "interceptor");
    }

    /** Keys a mutation may add (with a hostile value). */
    private static final String[] EXTRA_KEYS = {M + "retry.per-attempt-receive-timeout", M + "wait-for-ready",
            M + "max-request-message", M + "max-response-message", M + "name[0].method", M + "name[1].service",
            H + "hedging.non-fatal-status-codes", C + "budget.min-retries-per-second", C + "resilience4j-retry",
            C + "service-config-file", "grpc.retry.deadline.http.header", "grpc.retry.enabled", "grpc.retry.guard.enabled",
            "grpc.retry.clients.GLOBAL.budget.ratio", "grpc.retry.clients.GLOBAL.retry-buffer-size",
            C + "service-config.method[5].timeout", C + "service-config.method[0].name[7].service",
            "grpc.retry.clients.[weird name].max-attempts-cap", "grpc.retry.clients..max-attempts-cap"};

    private static final String[] HOSTILE = {"", " ", "-1", "0", "1", "2", "2147483647", "2147483648",
            "9999999999999999999999", "1e309", "-1e309", "NaN", "Infinity", "-Infinity", "0.0001", "0.0005", "1001",
            "abc", "50ms", "-50ms", "0ms", "1ns", "1us", "1.5s", "PT1S", "-PT1S", "PT0S", "P106752D", "106751d", "106752d",
            "9223372036854775807ms", "9223372036854775807s", "9223372036854775807ns", "-9223372036854775808s", "1MB",
            "-1B", "0B", "9999999999PB", "8EB", "1GB", "UNAVAILABLE,OK", "unavailable,,", ",", "14,17", "OK", "ok",
            "UNKNOWN,DATA_LOSS,INTERNAL", "${missing.key}", "${grpc.retry.clients.inventory.max-attempts-cap}",
            "${fuzz.loop}", "#{1+1}", "true", "yes", "off", "\u0000", "\t5s\t", "x".repeat(10_000), "native",
            "INTERCEPTOR", "nonsense", "X-Timeout-Ms", "Bad Header", "classpath:nope.json",
            "classpath:service-configs/malformed.json", "file:/dev/null", "file:/proc/self/status", "[0]", "{a}"};

    @Test
    void everyCaseStartsOrFailsWithAReport() throws Exception {
        ScriptedServer server = ScriptedServer.start("property-fuzz");
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "property-fuzz");
            t.setDaemon(true);
            return t;
        });
        List<FailureAnalyzer> analyzers = analyzers();
        ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class));
        Random random = new Random(777);
        Map<String, Integer> outcomes = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        try {
            for (int i = 0; i < CASES && failures.size() < 20; i++) {
                Map<String, String> props = mutate(random);
                List<String> pairs = new ArrayList<>();
                props.forEach((k, v) -> pairs.add(k + "=" + v));
                pairs.add("fuzz.loop=${fuzz.loop}");
                pairs.add("grpc.client.inventory.address=in-process:property-fuzz");
                int index = i;
                Future<String> f = worker.submit(() -> runCase(runner, analyzers, pairs, index));
                String outcome;
                try {
                    outcome = f.get(30, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    f.cancel(true);
                    failures.add("case " + i + " hung: " + props);
                    break;
                }
                if (outcome.startsWith("FAIL")) {
                    failures.add("case " + i + ": " + outcome + "\n      properties " + props);
                } else {
                    outcomes.merge(outcome, 1, Integer::sum);
                }
            }
        } finally {
            worker.shutdownNow();
            server.close();
        }
        Figures.record("fuzz-properties", CASES + " mutated property sets in real contexts: " + outcomes + "; failures "
                + failures.size());
        assertThat(failures).as("cases that escaped with something else than a report").isEmpty();
    }

    /**
     * The edges the fuzzing found, each alone on the valid base: durations that do not fit in
     * nanoseconds (or whose negation does not fit in a Duration), a bucket too small for the
     * throttle's thousandths. Each must start with a working channel or be refused with a report.
     */
    @Test
    void edgeValuesStartOrAreRefusedWithAReport() throws Exception {
        String[][] edges = {
                {C + "budget.ttl", "-9223372036854775808s"},
                {C + "service-config.retrythrottling.max-tokens", "0.0001"},
                {C + "service-config.retrythrottling.token-ratio", "1e300"},
                {C + "connect-timeout", "9223372036854775807s"},
                {M + "retry.initial-backoff", "106752d"},
                {M + "retry.max-backoff", "9223372036854775807s"},
                {M + "retry.per-attempt-receive-timeout", "-9223372036854775808s"},
                {M + "timeout", "9223372036854775807ms"},
                {H + "hedging.delay", "9223372036854775807s"},
                {H + "hedging.non-fatal-status-codes", "UNAVAILABLE,OK"},
                {"grpc.retry.deadline.default-timeout", "9223372036854775807s"},
                {"grpc.retry.deadline.reserve", "-9223372036854775808s"},
                {"grpc.retry.deadline.min-remaining", "106752d"},
                {"grpc.retry.deadline.http.max", "9223372036854775807s"}};
        ScriptedServer server = ScriptedServer.start("property-fuzz");
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        List<FailureAnalyzer> analyzers = analyzers();
        ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                GrpcClientAutoConfiguration.class, GrpcRetryAutoConfiguration.class));
        List<String> failures = new ArrayList<>();
        try {
            for (String[] edge : edges) {
                List<String> pairs = new ArrayList<>();
                BASE.forEach((k, v) -> pairs.add(k + "=" + v));
                pairs.add(edge[0] + "=" + edge[1]);
                pairs.add("grpc.client.inventory.address=in-process:property-fuzz");
                String outcome = runCase(runner, analyzers, pairs, 0);
                if (outcome.startsWith("FAIL")) {
                    failures.add(edge[0] + "=" + edge[1] + ": " + outcome);
                }
            }
        } finally {
            server.close();
        }
        assertThat(failures).isEmpty();
    }

    private static String runCase(ApplicationContextRunner runner, List<FailureAnalyzer> analyzers, List<String> pairs,
            int index) {
        String[] outcome = new String[1];
        try {
            runner.withPropertyValues(pairs.toArray(String[]::new)).run(ctx -> {
                Throwable failure = ctx.getStartupFailure();
                if (failure == null) {
                    outcome[0] = useChannel(ctx.getBean(GrpcChannelFactory.class), index);
                    return;
                }
                String kind = reportKind(failure);
                if (kind == null) {
                    outcome[0] = "FAIL start-up failed without a report: " + chain(failure);
                    return;
                }
                String report = analyze(analyzers, failure);
                if (report == null) {
                    outcome[0] = "FAIL no FailureAnalyzer reported " + chain(failure);
                } else if (!report.contains("grpc.retry")) {
                    outcome[0] = "FAIL the report names no grpc.retry property: " + report;
                } else {
                    outcome[0] = "refused (" + kind + ")";
                }
            });
        } catch (Throwable t) {
            return "FAIL the runner threw " + chain(t);
        }
        return outcome[0];
    }

    /** A started context: the channel is built with the bound settings, and a call through it ends with a status. */
    private static String useChannel(GrpcChannelFactory factory, int index) {
        Channel channel;
        try {
            channel = factory.createChannel("inventory");
        } catch (Throwable t) {
            return "FAIL started, but the channel could not be built: " + chain(t);
        }
        try {
            SimpleCalls.Handle h = SimpleCalls.run(channel, SimpleCalls.UNARY,
                    CallOptions.DEFAULT.withDeadlineAfter(500, TimeUnit.MILLISECONDS), "p" + index, List.of("x"));
            if (!h.listener.tryAwaitClose(10, TimeUnit.SECONDS)) {
                return "FAIL started, but a call through the channel hung";
            }
            if (!h.listener.contractProblems().isEmpty()) {
                return "FAIL call contract " + h.listener.contractProblems();
            }
            return "started, call ended " + h.listener.status().getCode();
        } catch (Throwable t) {
            return "FAIL started, but a call threw " + chain(t);
        }
    }

    private static String reportKind(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof InvalidRetryConfigurationException) {
                return "InvalidRetryConfigurationException";
            }
            if (t instanceof BindException) {
                return "BindException";
            }
        }
        return null;
    }

    private static List<FailureAnalyzer> analyzers() {
        List<FailureAnalyzer> analyzers = new ArrayList<>(SpringFactoriesLoader.forDefaultResourceLocation()
                .load(FailureAnalyzer.class, SpringFactoriesLoader.ArgumentResolver.of(Environment.class, new StandardEnvironment()),
                        SpringFactoriesLoader.FailureHandler.handleMessage((m, e) -> { })));
        analyzers.sort((Comparator<Object>) AnnotationAwareOrderComparator.INSTANCE);
        return analyzers;
    }

    /** What Spring Boot would print: the first analyzer (in order) that analyzes the failure. */
    private static String analyze(List<FailureAnalyzer> analyzers, Throwable failure) {
        for (FailureAnalyzer a : analyzers) {
            FailureAnalysis analysis = a.analyze(failure);
            if (analysis != null) {
                return analysis.getDescription() + "\n" + analysis.getAction();
            }
        }
        return null;
    }

    private static String chain(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            String msg = String.valueOf(c.getMessage()).replace('\n', ' ');
            sb.append(c.getClass().getName()).append(": ").append(msg.length() > 200 ? msg.substring(0, 200) : msg);
            if (c.getCause() != null) {
                sb.append(" <- ");
            }
        }
        return sb.toString();
    }

    static Map<String, String> mutate(Random random) {
        Map<String, String> props = new LinkedHashMap<>(BASE);
        int n = 1 + random.nextInt(3);
        List<String> keys = new ArrayList<>(props.keySet());
        for (int i = 0; i < n; i++) {
            int kind = random.nextInt(10);
            String hostile = HOSTILE[random.nextInt(HOSTILE.length)];
            if (kind < 6) {
                props.put(keys.get(random.nextInt(keys.size())), hostile);
            } else if (kind < 7) {
                props.remove(keys.get(random.nextInt(keys.size())));
            } else if (kind < 9) {
                props.put(EXTRA_KEYS[random.nextInt(EXTRA_KEYS.length)], hostile);
            } else {
                // move a list index: gaps, huge or negative indexes
                String key = keys.get(random.nextInt(keys.size()));
                String value = props.remove(key);
                String[] indexes = {"[3]", "[-1]", "[2147483647]", "[99999999999]", "[x]", "[]"};
                props.put(key.replaceFirst("\\[\\d+]", indexes[random.nextInt(indexes.length)]), value);
            }
        }
        return props;
    }
}
