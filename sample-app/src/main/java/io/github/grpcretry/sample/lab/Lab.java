package io.github.grpcretry.sample.lab;

import io.github.grpcretry.sample.server.FlakyServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Lab mode: replays every experiment of the source articles (R1–R3) and
 * the retry storm (R6, docs/metastable.md) through the starter's public
 * configuration (Spring Boot contexts configured with grpc.retry.* properties) against real gRPC
 * servers, and prints each table with the source article's figure next to what this engine measured
 * now. Deterministic rows (exact: equal to the article's figure; rule: judged by a rule of this starter,
 * stated in the row, where the article's figure differs on purpose or does not exist) that deviate make
 * {@link #main} exit with status 1.
 *
 * <p>Arguments: {@code --lab} (selects this mode in the sample's main), {@code --lab.engine=auto|interceptor|native}
 * (auto: the interceptor engine when it is installed, else native), {@code --lab.out=<dir>} (default
 * {@code sample-app/target/lab} from the repository root, {@code target/lab} otherwise),
 * {@code --lab.seed=<n>} (the servers' random seed, default 42; R6's arrivals too),
 * {@code --lab.r6=short} (R6 over 12 s instead of 30 s), {@code --lab.only=R3b,R6} (only these tables).
 */
public final class Lab {

    public static final long DEFAULT_SEED = 42;

    /**
     * How to run the lab; {@code shortR6}: R6 runs 12 s instead of 30 s (what the test in the build uses).
     */
    public record Options(String engine, Path out, long seed, boolean shortR6, Set<String> only) {

        public Options(String engine, Path out, long seed) {
            this(engine, out, seed, false, Set.of());
        }

        /** Whether experiment {@code id} runs ({@code only} empty: every one). */
        public boolean runs(String id) {
            return only.isEmpty() || only.contains(id.toUpperCase(java.util.Locale.ROOT));
        }

        public static Options parse(String[] args) {
            String engine = "auto";
            Path out = Files.isDirectory(Path.of("sample-app")) ? Path.of("sample-app", "target", "lab") : Path.of("target", "lab");
            long seed = DEFAULT_SEED;
            boolean shortR6 = false;
            Set<String> only = new LinkedHashSet<>();
            for (String a : args) {
                if (a.startsWith("--lab.engine=")) {
                    engine = a.substring("--lab.engine=".length());
                } else if (a.startsWith("--lab.out=")) {
                    out = Path.of(a.substring("--lab.out=".length()));
                } else if (a.startsWith("--lab.seed=")) {
                    seed = Long.parseLong(a.substring("--lab.seed=".length()));
                } else if (a.equals("--lab.r6=short")) {
                    shortR6 = true;
                } else if (a.startsWith("--lab.only=")) {
                    for (String id : a.substring("--lab.only=".length()).split(",")) {
                        if (!id.isBlank()) {
                            only.add(id.trim().toUpperCase(java.util.Locale.ROOT));
                        }
                    }
                }
            }
            return new Options(engine, out, seed, shortR6, Set.copyOf(only));
        }
    }

    private Lab() {
    }

    public static void main(String[] args) {
        Options options = Options.parse(args);
        LabReport report = run(options);
        System.out.println(report.console());
        report.write(options.out());
        System.out.printf("%nLab finished in %.1f s on the %s engine%s. Tables: %s (lab.md, lab.csv)%n",
                report.elapsedMillis() / 1000.0, report.engine(),
                report.engineNote().isEmpty() ? "" : " (" + report.engineNote() + ")", options.out().toAbsolutePath());
        System.out.println(report.summary());
        List<LabRow> exact = report.failedExact();
        List<LabRow> rule = report.failedRule();
        List<LabRow> others = report.failed().stream()
                .filter(r -> r.check() != LabRow.Check.EXACT && r.check() != LabRow.Check.RULE).toList();
        others.forEach(r -> System.out.println("  outside its " + r.check().label() + ": " + r.caseName() + " → " + r.measured()));
        exact.forEach(r -> System.out.println("  DEVIATES: " + r.caseName() + " → " + r.measured() + " (expected " + r.rule() + ")"));
        rule.forEach(r -> System.out.println("  BREAKS ITS RULE: " + r.caseName() + " → " + r.measured() + " (rule: " + r.rule() + ")"));
        if (!exact.isEmpty() || !rule.isEmpty()) {
            System.out.println((exact.size() + rule.size()) + " deterministic row(s) deviate: exit status 1");
        }
        System.exit(report.exitCode());
    }

    /** Runs every experiment and returns the tables (does not print or write). */
    public static LabReport run(Options options) {
        long start = System.nanoTime();
        String engine = options.engine();
        String note = "";
        if ("auto".equals(engine)) {
            if (interceptorEngineInstalled(options.seed())) {
                engine = "interceptor";
            } else {
                engine = "native";
                note = "the interceptor engine is not installed in this build; grpc-java's own retries run instead";
            }
        }
        boolean budgets = "interceptor".equals(engine);
        String why = "budgets need the interceptor engine (grpc-java's native retries have none)";
        List<LabTable> tables = new ArrayList<>();
        String e = engine;
        // sequential: R3b paces real traffic by the second and R1 measures backoffs, so nothing runs beside them
        timed(options, "R1", () -> tables.add(R1RetryPolicy.run(e, options.seed())));
        timed(options, "R2", () -> tables.add(R2Throttling.run(e, options.seed())));
        timed(options, "R3a", () -> tables.add(R3Budget.table(e, options.seed(), budgets, why)));
        timed(options, "R3b", () -> tables.add(R3Budget.capacity(e, options.seed(), budgets, why)));
        timed(options, "R3c", () -> tables.add(R3Budget.chain(e, options.seed(), budgets, why)));
        timed(options, "R6", () -> tables.add(R6Metastable.table(e, options.seed(),
                options.shortR6() ? R6Metastable.Plan.SHORT : R6Metastable.Plan.FULL, budgets,
                "per-attempt-receive-timeout and budgets need the interceptor engine (grpc-java's native retries apply neither)")));
        return new LabReport(engine, note, tables, (System.nanoTime() - start) / 1_000_000);
    }

    private static void timed(Options options, String what, Runnable r) {
        if (!options.runs(what)) {
            return;
        }
        long t = System.nanoTime();
        r.run();
        System.out.printf("lab: %s done in %.1f s%n", what, (System.nanoTime() - t) / 1e9);
    }

    /** Whether grpc.retry.engine=interceptor retries a call (the engine is on the class path and wired). */
    public static boolean interceptorEngineInstalled(long seed) {
        try (FlakyServer server = FlakyServer.start(seed);
             LabContexts.Client client = LabContexts.client("interceptor",
                     List.of(ChannelSpec.channel("probe", server.address()).retry(2, "1ms", "2ms", 2)), Map.of())) {
            return FlakyCalls.call(client.channel("probe"), server, FlakyCalls.failFirst(1)).count() == 2;
        }
    }
}
