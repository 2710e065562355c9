package io.github.grpcretry.benchmarks;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Unary success-path throughput ratios that survive a shared machine: JMH runs one fork per variant in
 * rounds, the variants' order rotating from round to round, so every ratio compares forks that ran
 * minutes apart at most and no variant always runs first or last. A plain JMH run measures all forks of
 * (a) before any of (b); on a machine whose speed drifts (other tenants, CPU credit) and with forks whose
 * JIT decisions differ, that order alone moved c/a by ±15 % between runs.
 *
 * <p>Prints, per transport and thread count, each round's scores and the median, minimum and maximum
 * over rounds of the ratios c/a, b/a, d/a, c/b, c/e, e/a, f/e and c/f (ratios taken within a round).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.github.grpcretry.benchmarks.Interleaved [rounds] [transports] [threads]
 *   rounds      default 5
 *   transports  IN_PROCESS,NETTY (default both)
 *   threads     1,2 (default 1)
 * </pre>
 */
public final class Interleaved {

    private static final Variant[] VARIANTS = Variant.values();

    private Interleaved() {
    }

    public static void main(String[] args) throws RunnerException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        String[] transports = args.length > 1 ? args[1].split(",") : new String[] {"IN_PROCESS", "NETTY"};
        String[] threads = args.length > 2 ? args[2].split(",") : new String[] {"1"};
        StringBuilder out = new StringBuilder();
        for (String threadCount : threads) {
            for (String transport : transports) {
                out.append(measure(Transport.valueOf(transport), Integer.parseInt(threadCount), rounds));
            }
        }
        System.out.println();
        System.out.println(out);
    }

    private static String measure(Transport transport, int threads, int rounds) throws RunnerException {
        List<Map<Variant, Double>> scores = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            Map<Variant, Double> row = new EnumMap<>(Variant.class);
            for (int i = 0; i < VARIANTS.length; i++) {
                Variant v = VARIANTS[(round + i) % VARIANTS.length];
                row.put(v, run(transport, threads, v));
            }
            scores.add(row);
        }
        return render(transport, threads, scores);
    }

    private static double run(Transport transport, int threads, Variant variant) throws RunnerException {
        String method = threads == 1 ? "unary1Thread" : "unary2Threads";
        Options options = new OptionsBuilder()
                .include(UnaryBenchmark.class.getName() + "\\." + method + "$")
                .mode(org.openjdk.jmh.annotations.Mode.Throughput)
                .param("transport", transport.name())
                .param("client", variant.name())
                .forks(1)
                .warmupIterations(8)
                .warmupTime(TimeValue.seconds(1))
                .measurementIterations(5)
                .measurementTime(TimeValue.seconds(1))
                .build();
        // the annotations give unary1Thread two modes; the options keep throughput only
        for (RunResult result : new Runner(options).run()) {
            if (result.getParams().getMode() == org.openjdk.jmh.annotations.Mode.Throughput) {
                return result.getPrimaryResult().getScore();
            }
        }
        throw new IllegalStateException("no throughput result for " + variant + " over " + transport);
    }

    static String render(Transport transport, int threads, List<Map<Variant, Double>> scores) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "#### %s, %d thread(s): calls/ms per round (one fork each)%n%n",
                transport, threads));
        sb.append("| round |");
        for (Variant v : VARIANTS) {
            sb.append(' ').append(label(v)).append(" |");
        }
        sb.append("\n|---|").append("---|".repeat(VARIANTS.length)).append('\n');
        for (int r = 0; r < scores.size(); r++) {
            sb.append("| ").append(r + 1).append(" |");
            for (Variant v : VARIANTS) {
                sb.append(String.format(Locale.ROOT, " %.2f |", scores.get(r).get(v)));
            }
            sb.append('\n');
        }
        sb.append("\n| ratio | median | min | max |\n|---|---|---|---|\n");
        ratio(sb, scores, "c/a", Variant.INTERCEPTOR, Variant.BARE);
        ratio(sb, scores, "b/a", Variant.NATIVE, Variant.BARE);
        ratio(sb, scores, "d/a", Variant.R4J, Variant.BARE);
        ratio(sb, scores, "c/b", Variant.INTERCEPTOR, Variant.NATIVE);
        ratio(sb, scores, "c/e", Variant.INTERCEPTOR, Variant.FORWARDING);
        ratio(sb, scores, "e/a", Variant.FORWARDING, Variant.BARE);
        ratio(sb, scores, "f/e", Variant.TRACED, Variant.FORWARDING);
        ratio(sb, scores, "c/f", Variant.INTERCEPTOR, Variant.TRACED);
        sb.append('\n');
        return sb.toString();
    }

    private static void ratio(StringBuilder sb, List<Map<Variant, Double>> scores, String name, Variant x, Variant y) {
        double[] r = scores.stream().mapToDouble(row -> row.get(x) / row.get(y)).sorted().toArray();
        sb.append(String.format(Locale.ROOT, "| %s | %.3f | %.3f | %.3f |%n", name, median(r), r[0], r[r.length - 1]));
    }

    static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static String label(Variant v) {
        return Report.label(v.name());
    }
}
