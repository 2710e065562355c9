package io.github.grpcretry.benchmarks;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Turns a JMH JSON result file ({@code -rf json -rff results.json}) into the Markdown tables of
 * docs/benchmarks.md: throughput ratios (c/a, b/a, d/a, c/b, c/e), latency percentiles, allocation per
 * call and its deltas, the failure path, streaming and the limiter micro-benchmarks.
 *
 * <p>{@code java -cp benchmarks/target/benchmarks.jar io.github.grpcretry.benchmarks.Report results.json}
 */
public final class Report {

    private static final String PKG = "io.github.grpcretry.benchmarks.";
    private static final String ALLOC = "gc.alloc.rate.norm";
    private static final String CPU = "cpu.time.norm";

    record Row(String benchmark, String mode, int threads, String transport, String client, double score,
            double error, String unit, JsonObject percentiles, Double alloc, Double attempts, Double failedCalls, Double cpu) {
    }

    private final List<Row> rows;
    private final StringBuilder out = new StringBuilder();

    Report(List<Row> rows) {
        this.rows = rows;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: Report <jmh-results.json>");
            System.exit(2);
        }
        System.out.print(render(Path.of(args[0])));
    }

    static String render(Path json) throws IOException {
        try (Reader r = Files.newBufferedReader(json, StandardCharsets.UTF_8)) {
            return new Report(parse(JsonParser.parseReader(r).getAsJsonArray())).render();
        }
    }

    static List<Row> parse(JsonArray array) {
        List<Row> rows = new ArrayList<>();
        for (JsonElement e : array) {
            JsonObject o = e.getAsJsonObject();
            JsonObject params = o.has("params") ? o.getAsJsonObject("params") : new JsonObject();
            JsonObject primary = o.getAsJsonObject("primaryMetric");
            JsonObject secondary = o.has("secondaryMetrics") ? o.getAsJsonObject("secondaryMetrics") : new JsonObject();
            rows.add(new Row(
                    o.get("benchmark").getAsString().replace(PKG, ""),
                    o.get("mode").getAsString(),
                    o.get("threads").getAsInt(),
                    params.has("transport") ? params.get("transport").getAsString() : "",
                    params.has("client") ? params.get("client").getAsString() : "",
                    number(primary.get("score")),
                    number(primary.get("scoreError")),
                    primary.has("scoreUnit") ? primary.get("scoreUnit").getAsString() : "",
                    primary.has("scorePercentiles") ? primary.getAsJsonObject("scorePercentiles") : null,
                    metric(secondary, ALLOC),
                    metric(secondary, "attempts"),
                    metric(secondary, "failedCalls"),
                    metric(secondary, CPU)));
        }
        return rows;
    }

    private static double number(JsonElement e) {
        if (e == null || e.isJsonNull()) {
            return Double.NaN;
        }
        try {
            return e.getAsDouble();
        } catch (NumberFormatException | UnsupportedOperationException ex) {
            return Double.NaN; // JMH writes "NaN" as a string
        }
    }

    private static Double metric(JsonObject secondary, String name) {
        return secondary.has(name) ? number(secondary.getAsJsonObject(name).get("score")) : null;
    }

    private Row find(String benchmark, String mode, String transport, String client) {
        for (Row r : rows) {
            if (r.benchmark.equals(benchmark) && r.mode.equals(mode) && r.transport.equals(transport)
                    && r.client.equals(client)) {
                return r;
            }
        }
        return null;
    }

    String render() {
        unary();
        failure();
        streaming();
        micro("ThrottleBenchmark", "Throttle (one shared RetryThrottle)");
        micro("BudgetBenchmark", "Budget (one shared RetryBudget)");
        return out.toString();
    }

    private void unary() {
        String[] methods = {"UnaryBenchmark.unary1Thread", "UnaryBenchmark.unary2Threads"};
        if (rows.stream().noneMatch(r -> r.benchmark.startsWith("UnaryBenchmark."))) {
            return;
        }
        String named = "| transport | threads | (a) bare | (b) grpc-java | (c) interceptor | (d) resilience4j "
                + "| (e) forwarding | c/a | b/a | d/a | c/b | c/e |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
        out.append("### Unary echo, success path: throughput (calls/ms, ± 99.9 % CI) and ratios\n\n");
        variantTable(methods, named, Report::thr, Report::ratio);
        out.append("\n### Unary echo, success path: process CPU time per call (µs, CpuTimeProfiler) and "
                + "CPU-efficiency ratios (x/y = cpu(y) / cpu(x), read like a throughput ratio)\n\n");
        variantTable(methods, named, Report::cpu, Report::cpuRatio);
        out.append("\n### Unary echo, success path: latency percentiles (µs, SampleTime)\n\n");
        out.append("| transport | threads | variant | p50 | p90 | p99 | p99.9 |\n|---|---|---|---|---|---|---|\n");
        for (String transport : new String[] {"IN_PROCESS", "NETTY"}) {
            for (String m : methods) {
                for (String client : new String[] {"BARE", "NATIVE", "INTERCEPTOR", "R4J", "FORWARDING"}) {
                    Row r = find(m, "sample", transport, client);
                    if (r == null || r.percentiles == null) {
                        continue;
                    }
                    out.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s |%n", transport,
                            r.threads, label(client), pct(r, "50.0"), pct(r, "90.0"), pct(r, "99.0"),
                            pct(r, "99.9")));
                }
            }
        }
        out.append("\n### Unary echo, success path: allocation per call (B/op, gc.alloc.rate.norm, "
                + "client and server together)\n\n");
        variantTable(methods, "| transport | threads | (a) | (b) | (c) | (d) | (e) | c−a | b−a | d−a | c−b | c−e |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|\n", Report::alloc, Report::delta);
        out.append('\n');
    }

    /**
     * One row per transport and unary benchmark (throughput runs): each variant's {@code value} and the
     * comparisons c/a, b/a, d/a, c/b and c/e by {@code compare}.
     */
    private void variantTable(String[] methods, String header, Function<Row, String> value,
            BiFunction<Row, Row, String> compare) {
        out.append(header);
        for (String transport : new String[] {"IN_PROCESS", "NETTY"}) {
            for (String m : methods) {
                Row a = find(m, "thrpt", transport, "BARE");
                Row b = find(m, "thrpt", transport, "NATIVE");
                Row c = find(m, "thrpt", transport, "INTERCEPTOR");
                Row d = find(m, "thrpt", transport, "R4J");
                Row e = find(m, "thrpt", transport, "FORWARDING");
                if (a == null && b == null && c == null && d == null) {
                    continue;
                }
                out.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                        transport, threadsOf(a, b, c, d), value.apply(a), value.apply(b), value.apply(c),
                        value.apply(d), value.apply(e), compare.apply(c, a), compare.apply(b, a),
                        compare.apply(d, a), compare.apply(c, b), compare.apply(c, e)));
            }
        }
    }

    private void failure() {
        String m = "UnaryFailureBenchmark.unaryWithFailures";
        if (rows.stream().noneMatch(r -> r.benchmark.equals(m))) {
            return;
        }
        out.append("### Unary, 20 % of attempts fail (seeded), 1 ms backoff × U(0.8, 1.2), 1 thread\n\n");
        out.append("| transport | variant | calls/ms | attempts/ms | attempts per call | failed calls/ms "
                + "| CPU µs/call | B/call | B/call − (b) |\n|---|---|---|---|---|---|---|---|---|\n");
        for (String transport : new String[] {"IN_PROCESS", "NETTY"}) {
            Row b = find(m, "thrpt", transport, "NATIVE");
            for (String client : new String[] {"NATIVE", "INTERCEPTOR", "R4J"}) {
                Row r = find(m, "thrpt", transport, client);
                if (r == null) {
                    continue;
                }
                double perCall = r.attempts == null ? Double.NaN : r.attempts / r.score;
                out.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %.3f | %s | %s | %s | %s |%n",
                        transport, label(client), thr(r), fmt(r.attempts), perCall, fmt(r.failedCalls), cpu(r),
                        alloc(r), delta(r, b)));
            }
        }
        out.append('\n');
    }

    private void streaming() {
        streaming("ServerStreamingBenchmark.serverStream",
                "Server stream of " + EchoServer.STREAM_RESPONSES + " responses, success path, 1 thread");
        streaming("ClientStreamingBenchmark.clientStream",
                "Client stream (requests per stream: the messages parameter, 1000 by default), success path, 1 thread");
    }

    private void streaming(String m, String title) {
        if (rows.stream().noneMatch(r -> r.benchmark.equals(m))) {
            return;
        }
        out.append("### ").append(title).append(" (streams/ms; B/stream)\n\n");
        out.append("| transport | (a) bare | (b) grpc-java | (c) interceptor | c/a | b/a | c/b "
                + "| CPU µs (a) | CPU µs (b) | CPU µs (c) | cpu c/a | cpu c/b "
                + "| B (a) | B (b) | B (c) | c−a | b−a | c−b |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (String transport : new String[] {"IN_PROCESS", "NETTY"}) {
            Row a = find(m, "thrpt", transport, "BARE");
            Row b = find(m, "thrpt", transport, "NATIVE");
            Row c = find(m, "thrpt", transport, "INTERCEPTOR");
            if (a == null && b == null && c == null) {
                continue;
            }
            out.append(String.format(Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                    transport, thr(a), thr(b), thr(c), ratio(c, a), ratio(b, a), ratio(c, b), cpu(a), cpu(b), cpu(c),
                    cpuRatio(c, a), cpuRatio(c, b), alloc(a), alloc(b), alloc(c), delta(c, a), delta(b, a),
                    delta(c, b)));
        }
        out.append('\n');
    }

    private void micro(String cls, String title) {
        List<Row> mine = rows.stream().filter(r -> r.benchmark.startsWith(cls + ".")).toList();
        if (mine.isEmpty()) {
            return;
        }
        out.append("### ").append(title).append(": ns per operation\n\n");
        out.append("| operation | threads | ns/op (± 99.9 % CI) | B/op |\n|---|---|---|---|\n");
        for (Row r : mine) {
            out.append(String.format(Locale.ROOT, "| %s | %d | %.1f ± %.1f | %s |%n",
                    r.benchmark.substring(cls.length() + 1), r.threads, r.score, r.error, alloc(r)));
        }
        out.append('\n');
    }

    private static int threadsOf(Row... rs) {
        for (Row r : rs) {
            if (r != null) {
                return r.threads;
            }
        }
        return 0;
    }

    static String label(String client) {
        return switch (client) {
            case "BARE" -> "(a) bare";
            case "NATIVE" -> "(b) grpc-java";
            case "INTERCEPTOR" -> "(c) interceptor";
            case "R4J" -> "(d) resilience4j";
            case "FORWARDING" -> "(e) forwarding";
            case "TRACED" -> "(f) traced forwarding";
            default -> client;
        };
    }

    private static String thr(Row r) {
        return r == null ? "–" : String.format(Locale.ROOT, "%.2f ± %.2f", r.score, r.error);
    }

    private static String fmt(Double v) {
        return v == null ? "–" : String.format(Locale.ROOT, "%.3f", v);
    }

    private static String ratio(Row x, Row y) {
        return x == null || y == null ? "–" : String.format(Locale.ROOT, "%.3f", x.score / y.score);
    }

    /** CPU µs per op. */
    private static String cpu(Row r) {
        return r == null || r.cpu == null ? "–" : String.format(Locale.ROOT, "%.1f", r.cpu / 1000);
    }

    /** cpu(y) / cpu(x): above 1 when x costs less CPU per op than y, like a throughput ratio x/y. */
    private static String cpuRatio(Row x, Row y) {
        if (x == null || y == null || x.cpu == null || y.cpu == null) {
            return "–";
        }
        return String.format(Locale.ROOT, "%.3f", y.cpu / x.cpu);
    }

    private static String alloc(Row r) {
        return r == null || r.alloc == null ? "–" : String.format(Locale.ROOT, "%.0f", r.alloc);
    }

    private static String delta(Row x, Row y) {
        if (x == null || y == null || x.alloc == null || y.alloc == null) {
            return "–";
        }
        return String.format(Locale.ROOT, "%+.0f", x.alloc - y.alloc);
    }

    private static String pct(Row r, String key) {
        JsonElement e = r.percentiles.get(key);
        if (e == null) {
            return "–";
        }
        // SampleTime percentiles are in the benchmark's output unit: show µs
        double v = number(e);
        double micros = switch (unitOf(r)) {
            case "ms" -> v * 1000;
            case "us" -> v;
            case "ns" -> v / 1000;
            case "s" -> v * 1_000_000;
            default -> v;
        };
        return String.format(Locale.ROOT, "%.1f", micros);
    }

    /** "ms" of "ms/op". */
    private static String unitOf(Row r) {
        int slash = r.unit.indexOf('/');
        return slash < 0 ? r.unit : r.unit.substring(0, slash);
    }
}
