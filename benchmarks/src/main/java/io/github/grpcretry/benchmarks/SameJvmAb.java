package io.github.grpcretry.benchmarks;

import java.lang.management.ManagementFactory;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * Two builds of the engine, old and new, measured in one JVM by CPU time: each benchmarks jar is
 * loaded in a class loader of its own (so both engines, and both copies of grpc-java, live side by
 * side), and the slots of {@code scripts/ab.py} (old c, new c and the reference variants from the new
 * jar) run in batches in rotating order, round after round. A batch is timed by the calling thread's
 * CPU time, the process's CPU time and the wall clock. In-process (direct-executor server, stubs that
 * run callbacks on the calling thread) a whole call runs on the calling thread, so its thread CPU time
 * counts the call's work and not the time it waited for a core: on a machine other processes load,
 * that is the figure that still compares. Over Netty the event loops do part of the work, so the
 * process CPU time is the one to read there (Netty on NIO here, for both loaders alike). Every slot's JIT profile is shared within its jar's
 * copy of grpc-java, as in an application that uses one configuration.
 *
 * <pre>
 * java -cp NEW.jar io.github.grpcretry.benchmarks.SameJvmAb OLD.jar NEW.jar [rounds] [benchmarks] [transports] [warm-up s]
 *   rounds      default 30 (one batch of ~0.3 s per slot per round)
 *   benchmarks  unary,server,client (default all)
 *   transports  IN_PROCESS,NETTY (default both)
 *   warm-up s   default 20 per benchmark and transport, alternating the slots
 * </pre>
 */
public final class SameJvmAb {

    private static final long BATCH_NANOS = 300_000_000L;

    private SameJvmAb() {
    }

    /**
     * One op of {@code benchmark} over {@code transport} with {@code variant}, on a server and channel
     * of its own that {@code close()} shuts down: the entry each jar's loader calls (it returns a
     * {@link Callable} that is also {@link AutoCloseable}, types both loaders share).
     */
    public static Callable<Object> open(String benchmark, String transport, String variant) throws Exception {
        Transport t = Transport.valueOf(transport);
        Variant v = Variant.valueOf(variant);
        switch (benchmark) {
            case "unary" -> {
                UnaryBenchmark b = new UnaryBenchmark();
                b.transport = t;
                b.client = v;
                b.setUp();
                return new Op(b::unary1Thread, b::tearDown);
            }
            case "server" -> {
                ServerStreamingBenchmark b = new ServerStreamingBenchmark();
                b.transport = t;
                b.client = v;
                b.setUp();
                return new Op(b::serverStream, b::tearDown);
            }
            case "client" -> {
                ClientStreamingBenchmark b = new ClientStreamingBenchmark();
                b.transport = t;
                b.client = v;
                b.messages = 1000;
                b.setUp();
                return new Op(b::clientStream, b::tearDown);
            }
            default -> throw new IllegalArgumentException(benchmark);
        }
    }

    private record Op(Callable<Object> op, AutoCloseable closer) implements Callable<Object>, AutoCloseable {
        @Override
        public Object call() throws Exception {
            return op.call();
        }

        @Override
        public void close() throws Exception {
            closer.close();
        }
    }

    private record Slot(String name, Callable<Object> op) {
    }

    public static void main(String[] args) throws Exception {
        // both loaders on the same Netty transport (NIO): two copies of the native one need not load alike
        System.setProperty("io.grpc.netty.shaded.io.netty.transport.noNative", "true");
        URLClassLoader old = loader(args[0]);
        URLClassLoader neu = loader(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 30;
        String[] benchmarks = args.length > 3 ? args[3].split(",") : new String[] {"unary", "server", "client"};
        String[] transports = args.length > 4 ? args[4].split(",") : new String[] {"IN_PROCESS", "NETTY"};
        long warmNanos = (args.length > 5 ? Long.parseLong(args[5]) : 20) * 1_000_000_000L;
        System.out.printf(Locale.ROOT, "OLD %s, NEW %s; %d rounds of one ~0.3 s batch per slot, order rotating%n%n",
                args[0], args[1], rounds);
        for (String benchmark : benchmarks) {
            for (String transport : transports) {
                List<Slot> slots = new ArrayList<>();
                slots.add(new Slot("old c", entry(old, benchmark, transport, "INTERCEPTOR")));
                slots.add(new Slot("new c", entry(neu, benchmark, transport, "INTERCEPTOR")));
                slots.add(new Slot("a", entry(neu, benchmark, transport, "BARE")));
                slots.add(benchmark.equals("unary") ? new Slot("e", entry(neu, benchmark, transport, "FORWARDING"))
                        : new Slot("b", entry(neu, benchmark, transport, "NATIVE")));
                System.out.println(measure(benchmark, transport, slots, rounds, warmNanos));
                for (Slot s : slots) {
                    ((AutoCloseable) s.op()).close();
                }
            }
        }
        System.exit(0); // the channels' threads of both loaders
    }

    private static URLClassLoader loader(String jar) throws Exception {
        return new URLClassLoader(new URL[] {Path.of(jar).toUri().toURL()}, ClassLoader.getPlatformClassLoader());
    }

    @SuppressWarnings("unchecked")
    private static Callable<Object> entry(ClassLoader loader, String benchmark, String transport, String variant)
            throws Exception {
        return (Callable<Object>) loader.loadClass(SameJvmAb.class.getName())
                .getMethod("open", String.class, String.class, String.class)
                .invoke(null, benchmark, transport, variant);
    }

    private static String measure(String benchmark, String transport, List<Slot> slots, int rounds, long warmNanos)
            throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        int n = slots.size();
        long[] batch = new long[n];
        // warm-up, alternating; it also sizes each slot's batch to ~BATCH_NANOS of wall time
        long warmEnd = System.nanoTime() + warmNanos;
        while (System.nanoTime() < warmEnd) {
            for (int s = 0; s < n; s++) {
                long t0 = System.nanoTime();
                int ops = 0;
                while (System.nanoTime() - t0 < BATCH_NANOS / 3) {
                    slots.get(s).op().call();
                    ops++;
                }
                batch[s] = Math.max(1, ops * 3L);
            }
        }
        double[][] thread = new double[rounds][n];
        double[][] process = new double[rounds][n];
        double[][] wall = new double[rounds][n];
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < n; i++) {
                int s = (r + i) % n;
                Callable<Object> op = slots.get(s).op();
                long ops = batch[s];
                long th0 = threads.getCurrentThreadCpuTime();
                long p0 = os.getProcessCpuTime();
                long w0 = System.nanoTime();
                for (long k = 0; k < ops; k++) {
                    op.call();
                }
                wall[r][s] = (System.nanoTime() - w0) / (double) ops;
                process[r][s] = (os.getProcessCpuTime() - p0) / (double) ops;
                thread[r][s] = (threads.getCurrentThreadCpuTime() - th0) / (double) ops;
            }
        }
        return render(benchmark, transport, slots, thread, process, wall);
    }

    static String render(String benchmark, String transport, List<Slot> slots, double[][] thread, double[][] process,
            double[][] wall) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "#### %s, %s: µs per op, median over %d rounds%n%n| | ", benchmark,
                transport, thread.length));
        slots.forEach(s -> sb.append(s.name()).append(" | "));
        sb.append("\n|---|").append("---|".repeat(slots.size())).append('\n');
        String[] names = {"thread CPU", "process CPU", "wall"};
        double[][][] all = {thread, process, wall};
        for (int m = 0; m < 3; m++) {
            sb.append("| ").append(names[m]).append(" | ");
            for (int s = 0; s < slots.size(); s++) {
                int col = s;
                double[] v = Arrays.stream(all[m]).mapToDouble(row -> row[col]).sorted().toArray();
                sb.append(String.format(Locale.ROOT, "%.4g | ", Interleaved.median(v) / 1000));
            }
            sb.append('\n');
        }
        String ref = slots.get(3).name();
        sb.append("\n| ratio (y/x of the cost: above 1, x is cheaper) | thread CPU | process CPU | wall |\n"
                + "|---|---|---|---|\n");
        ratio(sb, "new/old", all, 1, 0);
        ratio(sb, "c/a old", all, 0, 2);
        ratio(sb, "c/a new", all, 1, 2);
        ratio(sb, "c/" + ref + " old", all, 0, 3);
        ratio(sb, "c/" + ref + " new", all, 1, 3);
        ratio(sb, ref + "/a", all, 3, 2);
        return sb.toString();
    }

    /** cost(y) / cost(x) per round: median (min-max). */
    private static void ratio(StringBuilder sb, String name, double[][][] all, int x, int y) {
        sb.append("| ").append(name).append(" |");
        for (double[][] m : all) {
            double[] r = Arrays.stream(m).mapToDouble(row -> row[y] / row[x]).sorted().toArray();
            sb.append(String.format(Locale.ROOT, " **%.3f** (%.3f-%.3f) |", Interleaved.median(r), r[0],
                    r[r.length - 1]));
        }
        sb.append('\n');
    }
}
