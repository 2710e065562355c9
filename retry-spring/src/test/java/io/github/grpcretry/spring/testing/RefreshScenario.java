package io.github.grpcretry.spring.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * What the run-time reload tests of both Spring Boot lines share: the policy file an application imports
 * ({@code spring.config.import=file:...}), and calls running on several threads while the file is rewritten
 * and the context refreshed.
 */
public final class RefreshScenario {

    /** The channel the scenarios configure. */
    public static final String CHANNEL = "inv";

    /** The key a change of the policy's attempts touches. */
    public static final String MAX_ATTEMPTS_KEY = "grpc.retry.clients.inv.service-config.method[0].retry.max-attempts";

    private RefreshScenario() {
    }

    /** {@code grpc.retry} properties of channel {@code inv}: retries on UNAVAILABLE, {@code maxAttempts} attempts, 1 ms backoff. */
    public static String policy(String maxAttempts) {
        String m = "grpc.retry.clients.inv.service-config.method[0].";
        return m + "name[0].service=grpc.testing.SimpleService\n"
                + m + "retry.max-attempts=" + maxAttempts + "\n"
                + m + "retry.initial-backoff=1ms\n"
                + m + "retry.max-backoff=2ms\n"
                + m + "retry.backoff-multiplier=1\n"
                + m + "retry.retryable-status-codes=UNAVAILABLE\n";
    }

    /** The key of a method timeout of channel {@code inv}'s policy (a change a built channel takes only with a restart). */
    public static final String TIMEOUT_KEY = "grpc.retry.clients.inv.service-config.method[0].timeout";

    /** {@link #policy} as YAML. */
    public static String yamlPolicy(String maxAttempts) {
        return """
                grpc:
                  retry:
                    clients:
                      inv:
                        service-config:
                          method:
                            - name:
                                - service: grpc.testing.SimpleService
                              retry:
                                max-attempts: %s
                                initial-backoff: 1ms
                                max-backoff: 2ms
                                backoff-multiplier: 1
                                retryable-status-codes: UNAVAILABLE
                """.formatted(maxAttempts);
    }

    /** {@link #yamlPolicy} with a syntax error (an unclosed flow sequence) that stops the file from being read. */
    public static String brokenYamlPolicy() {
        return yamlPolicy("3").replace("retryable-status-codes: UNAVAILABLE", "retryable-status-codes: [UNAVAILABLE");
    }

    /** Writes {@code content} to {@code retry.properties} in {@code dir} and returns the file. */
    public static Path write(Path dir, String content) {
        return write(dir, "retry.properties", content);
    }

    /** Writes {@code content} to {@code retry.yml} in {@code dir} and returns the file. */
    public static Path writeYaml(Path dir, String content) {
        return write(dir, "retry.yml", content);
    }

    private static Path write(Path dir, String name, String content) {
        Path file = dir.resolve(name);
        try {
            Files.writeString(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /**
     * Makes {@code calls} calls on four threads and, while they run, {@code refreshes} refreshes: each after
     * another share of the calls completed ({@code calls / (refreshes + 1)}), so every refresh happens with
     * calls in flight and calls follow the last one.
     *
     * @param call makes call {@code i}; a call that throws counts as failed
     * @param refresh rewrites the configuration and refreshes, the {@code r}-th time
     * @return how many calls failed
     */
    public static int callsThroughRefreshes(int calls, int refreshes, IntConsumer call, IntConsumer refresh) throws Exception {
        ExecutorService callers = Executors.newFixedThreadPool(4);
        try {
            Semaphore done = new Semaphore(0);
            AtomicInteger next = new AtomicInteger();
            AtomicInteger failed = new AtomicInteger();
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                workers.add(callers.submit(() -> {
                    for (int i = next.getAndIncrement(); i < calls; i = next.getAndIncrement()) {
                        try {
                            call.accept(i);
                        } catch (RuntimeException e) {
                            failed.incrementAndGet();
                        }
                        done.release();
                    }
                }));
            }
            for (int r = 0; r < refreshes; r++) {
                done.acquire(calls / (refreshes + 1));
                refresh.accept(r);
            }
            for (Future<?> w : workers) {
                w.get(120, TimeUnit.SECONDS);
            }
            return failed.get();
        } finally {
            callers.shutdownNow();
        }
    }
}
