package io.github.grpcretry.sample.lab;

import io.github.grpcretry.sample.server.FlakyServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Lab mode: replays every experiment of the source articles (R1–R3) through the starter's public
 * configuration (Spring Boot contexts configured with grpc.retry.* properties) against real gRPC
 * servers, and prints each table with the source article's figure next to what this engine measured
 * now. Deterministic rows (exact: equal to the article's figure; rule: judged by a rule of this starter,
 * stated in the row, where the article's figure differs on purpose or does not exist) that deviate make
 * {@link #main} exit with status 1.
 *
 * <p>Arguments: {@code --lab} (selects this mode in the sample's main), {@code --lab.engine=auto|interceptor|native}
 * (auto: the interceptor engine when it is installed, else native), {@code --lab.out=<dir>} (default
 * {@code sample-app/target/lab} from the repository root, {@code target/lab} otherwise),
 * {@code --lab.seed=<n>} (the servers' random seed, default 42).
 */
public final class Lab {

    public static final long DEFAULT_SEED = 42;

    /** How to run the lab. */
    public record Options(String engine, Path out, long seed) {

        public static Options parse(String[] args) {
            return new Options(LabArgs.value(args, "engine", "auto"), LabArgs.out(args, "sample-app"),
                    LabArgs.seed(args, DEFAULT_SEED));
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
        timed("R1", () -> tables.add(R1RetryPolicy.run(LabContexts.clients(e), options.seed())));
        timed("R2", () -> tables.add(R2Throttling.run(LabContexts.clients(e), options.seed())));
        timed("R3a", () -> tables.add(R3Budget.table(e, options.seed(), budgets, why)));
        timed("R3b", () -> tables.add(R3Budget.capacity(e, options.seed(), budgets, why)));
        timed("R3c", () -> tables.add(R3Budget.chain(e, options.seed(), budgets, why)));
        return new LabReport(engine, note, tables, (System.nanoTime() - start) / 1_000_000);
    }

    private static void timed(String what, Runnable r) {
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
