package io.github.grpcretry.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Proves the benchmarks still start and measure something: a few seconds of JMH in this JVM
 * (forks 0), one short iteration per benchmark (the streaming ones included), over the interceptor
 * engine in-process. The real
 * run is documented in docs/benchmarks.md.
 */
class BenchmarksSmokeTest {

    @Test
    void benchmarksRunAndTheReportRendersThem(@TempDir Path dir) throws Exception {
        // JMH takes a machine-wide lock (/tmp/jmh.lock) so that two measurements do not disturb each other;
        // this run measures nothing, so it must not fail (or wait) because a benchmark runs elsewhere
        System.setProperty("jmh.ignoreLock", "true");
        Path json = dir.resolve("results.json");
        Options options = new OptionsBuilder()
                .include("UnaryBenchmark.unary1Thread")
                .include("UnaryFailureBenchmark")
                .include("ClientStreamingBenchmark")
                .include("ServerStreamingBenchmark")
                .include("ThrottleBenchmark.failureThenSuccess1Thread")
                .include("BudgetBenchmark.callThenRetry1Thread")
                .param("transport", "IN_PROCESS")
                .param("client", "INTERCEPTOR")
                .mode(Mode.Throughput)
                .timeUnit(TimeUnit.MILLISECONDS)
                .forks(0)
                .warmupIterations(1)
                .warmupTime(TimeValue.milliseconds(100))
                .measurementIterations(1)
                .measurementTime(TimeValue.milliseconds(150))
                .addProfiler(GCProfiler.class)
                .addProfiler(CpuTimeProfiler.class)
                .resultFormat(ResultFormatType.JSON)
                .result(json.toString())
                .shouldFailOnError(true)
                .build();

        Collection<RunResult> results = new Runner(options).run();

        assertThat(results).hasSize(6);
        for (RunResult r : results) {
            assertThat(r.getPrimaryResult().getScore())
                    .as(r.getParams().getBenchmark()).isPositive();
        }
        RunResult failure = results.stream()
                .filter(r -> r.getParams().getBenchmark().endsWith("unaryWithFailures"))
                .findFirst().orElseThrow();
        Result<?> attempts = failure.getSecondaryResults().get("attempts");
        double attemptsPerCall = attempts.getScore() / failure.getPrimaryResult().getScore();
        // 20 % of attempts fail and are retried: 1 / 0.8 = 1.25 attempts per call
        assertThat(attemptsPerCall).isBetween(1.1, 1.45);

        Result<?> cpu = failure.getSecondaryResults().get("cpu.time.norm");
        assertThat(cpu.getScore()).as("CPU ns per call").isPositive();

        String report = Report.render(json);
        assertThat(Files.size(json)).isPositive();
        assertThat(report)
                .contains("| IN_PROCESS | 1 | – | – | ")
                .contains("| IN_PROCESS | (c) interceptor |")
                .contains("### Client stream (requests per stream")
                .contains("### Server stream of 1000 responses")
                .contains("| failureThenSuccess1Thread | 1 |")
                .contains("| callThenRetry1Thread | 1 |");
    }
}
