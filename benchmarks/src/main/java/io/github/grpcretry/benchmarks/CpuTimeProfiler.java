package io.github.grpcretry.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU time the whole benchmark JVM (client, server, Netty event loops, GC, JIT) spent per
 * operation: {@code cpu.time.norm} in ns/op, from the process CPU time around each iteration.
 * Unlike throughput it hardly moves when other processes compete for the cores, which is what
 * makes side-by-side ratios usable on a shared machine.
 *
 * <p>{@code java -jar benchmarks.jar -prof io.github.grpcretry.benchmarks.CpuTimeProfiler}
 */
public final class CpuTimeProfiler implements InternalProfiler {

    private final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private long cpuStart;
    private long wallStart;

    @Override
    public String getDescription() {
        return "process CPU time per operation (cpu.time.norm, ns/op) and cores busy (cpu.cores)";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        wallStart = System.nanoTime();
        cpuStart = os.getProcessCpuTime();
    }

    @Override
    public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
            IterationParams iterationParams, IterationResult result) {
        long cpu = os.getProcessCpuTime() - cpuStart;
        long wall = System.nanoTime() - wallStart;
        long ops = result.getMetadata().getAllOps();
        double perOp = ops > 0 ? (double) cpu / ops : Double.NaN;
        return List.of(
                new ScalarResult("cpu.time.norm", perOp, "ns/op", AggregationPolicy.AVG),
                new ScalarResult("cpu.cores", wall > 0 ? (double) cpu / wall : Double.NaN, "cores",
                        AggregationPolicy.AVG));
    }
}
