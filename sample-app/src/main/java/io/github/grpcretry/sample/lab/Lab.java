package io.github.grpcretry.sample.lab;

import io.github.grpcretry.sample.server.FlakyServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Lab mode: replays every experiment of the source articles (R1–R3) and
 * the retry storm (R6, docs/metastable.md), the avoidance of tried backends (R7) and long streams that resume
 * (R8) through the starter's public
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
            boolean shortR6 = false;
            Set<String> only = new LinkedHashSet<>();
            for (String a : args) {
                if (a.equals("--lab.r6=short")) {
                    shortR6 = true;
                }
            }
            for (String id : LabArgs.value(args, "only", "").split(",")) {
                if (!id.isBlank()) {
                    only.add(id.trim().toUpperCase(java.util.Locale.ROOT));
                }
            }
            return new Options(LabArgs.value(args, "engine", "auto"), LabArgs.out(args, "sample-app"),
                    LabArgs.seed(args, DEFAULT_SEED), shortR6, Set.copyOf(only));
        }
    }

    private Lab() {
    }

    public static void main(String[] args) {
        Options options = Options.parse(args);
        System.exit(run(options).print(options.out()));
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
        timed(options, "R1", () -> tables.add(R1RetryPolicy.run(LabContexts.clients(e), options.seed())));
        timed(options, "R2", () -> tables.add(R2Throttling.run(LabContexts.clients(e), options.seed())));
        timed(options, "R3a", () -> tables.add(R3Budget.table(e, options.seed(), budgets, why)));
        timed(options, "R3b", () -> tables.add(R3Budget.capacity(e, options.seed(), budgets, why)));
        timed(options, "R3c", () -> tables.add(R3Budget.chain(e, options.seed(), budgets, why)));
        timed(options, "R6", () -> tables.add(R6Metastable.table(e, options.seed(),
                options.shortR6() ? R6Metastable.Plan.SHORT : R6Metastable.Plan.FULL, budgets,
                "per-attempt-receive-timeout and budgets need the interceptor engine (grpc-java's native retries apply neither)")));
        timed(options, "R7", () -> tables.add(R7TriedBackends.run(LabContexts.clients(e), options.seed())));
        timed(options, "R8", () -> tables.add(R8LongStreams.run(LabContexts.clients(e), options.seed())));
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
