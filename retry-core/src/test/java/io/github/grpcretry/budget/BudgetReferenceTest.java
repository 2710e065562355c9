package io.github.grpcretry.budget;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.attempt.SuppressionReason;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryBudgetPolicy;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md §17 (R3): the budget × failure-rate table of the seed (002_ec13db919ab7ab0a), measured with
 * the interceptor engine against a real in-process server that fails each arrival with probability
 * p (a fixed-seed random sequence), 1500 sequential requests per row, up to 3 attempts per request,
 * budgets with {@code min-retries-per-second: 0}.
 */
class BudgetReferenceTest {

    private static final String SERVICE = "grpc.testing.SimpleService";
    private static final int REQUESTS = 1500;
    /** The seed file's name, as the random seed: fixed, not chosen. */
    private static final long SEED = 0xec13db919ab7ab0aL;

    /** Columns of the table: null ratio = unlimited (3 attempts), -1 = no retry. */
    private static final double NO_RETRY = -1;
    private static final Double[] COLUMNS = {NO_RETRY, 0.1, 0.2, 0.5, null};
    private static final String[] COLUMN_NAMES = {"no retry", "budget 10 %", "budget 20 %", "budget 50 %", "unlimited"};

    /** The seed's figures (success %, amplification) by p, in column order. */
    private static final double[][][] SEED_TABLE = {
            {{95.5, 1.000}, {100.0, 1.047}, {100.0, 1.047}, {100.0, 1.047}, {100.0, 1.047}},
            {{79.9, 1.000}, {88.3, 1.100}, {96.0, 1.197}, {99.7, 1.242}, {99.3, 1.237}},
            {{51.1, 1.000}, {56.5, 1.100}, {61.1, 1.199}, {76.1, 1.500}, {87.9, 1.730}},
            {{0.0, 1.000}, {0.0, 1.099}, {0.0, 1.199}, {0.0, 1.500}, {0.0, 3.000}},
    };
    private static final double[] FAILURE_RATES = {0.05, 0.20, 0.50, 1.00};

    private static RetryScheduler scheduler;
    private static ScriptedServer server;

    @BeforeAll
    static void start() throws Exception {
        scheduler = RetryScheduler.create(1, "budget-reference");
        server = ScriptedServer.start("budget-reference-" + UUID.randomUUID());
    }

    @AfterAll
    static void stop() {
        server.close();
        scheduler.close();
    }

    record Row(double p, String column, double successPercent, double amplification, int received, int budgetRefusals,
            int lastRefusedCall) {
    }

    static RetryPolicy policy(int maxAttempts) {
        return new RetryPolicy(maxAttempts, Duration.ofNanos(100_000), Duration.ofMillis(1), 2,
                Set.of(Status.Code.UNAVAILABLE), null);
    }

    static ChannelRetryConfig config(int maxAttempts, RetryBudgetPolicy budget) {
        ServiceConfig sc = new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.of(SERVICE, null)), null, null,
                null, null, policy(maxAttempts), null)), null);
        return ChannelRetryConfig.of("r3", sc).withBudget(budget);
    }

    private static Row run(double p, int column) throws InterruptedException {
        Double ratio = COLUMNS[column];
        boolean noRetry = ratio != null && ratio == NO_RETRY;
        RetryBudgetPolicy budgetPolicy = ratio == null || noRetry ? null
                : new RetryBudgetPolicy(ratio, 0, RetryBudgetPolicy.DEFAULT_TTL);
        Random random = new Random(SEED);
        server.reset();
        server.script(a -> random.nextDouble() < p ? Action.fail(Status.Code.UNAVAILABLE) : Action.ok());
        AtomicInteger refusals = new AtomicInteger();
        AtomicInteger callNumber = new AtomicInteger();
        AtomicInteger lastRefused = new AtomicInteger();
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(config(noRetry ? 1 : 3, budgetPolicy))
                .budget(budgetPolicy == null ? null : new RetryBudget(budgetPolicy))
                .scheduler(scheduler)
                .eventListener(new RetryEventListener() {
                    @Override
                    public void retrySuppressed(CallTarget target, SuppressionReason reason, Status.Code code) {
                        if (reason == SuppressionReason.BUDGET) {
                            refusals.incrementAndGet();
                            lastRefused.set(callNumber.get());
                        }
                    }
                })
                .build();
        ManagedChannel channel = InProcessChannelBuilder.forName(server.inProcessName()).intercept(engine).build();
        int ok = 0;
        try {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(channel);
            SimpleRequest request = SimpleRequest.newBuilder().setRequestMessage("r3").build();
            for (int i = 1; i <= REQUESTS; i++) {
                callNumber.set(i);
                try {
                    stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(request);
                    ok++;
                } catch (StatusRuntimeException e) {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                }
            }
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
        int received = server.arrivalCount();
        return new Row(p, COLUMN_NAMES[column], 100.0 * ok / REQUESTS, (double) received / REQUESTS, received,
                refusals.get(), lastRefused.get());
    }

    @Test
    void theR3TableWithoutAFloor() throws Exception {
        List<Row> rows = new ArrayList<>();
        for (double p : FAILURE_RATES) {
            for (int col = 0; col < COLUMNS.length; col++) {
                rows.add(run(p, col));
            }
        }
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
                "%-6s | %-12s | %8s | %13s | %8s | %7s | seed%n", "p", "strategy", "success", "amplification",
                "received", "refused"));
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            double[] seed = SEED_TABLE[i / COLUMNS.length][i % COLUMNS.length];
            table.append(String.format(Locale.ROOT, "%-6s | %-12s | %7.1f%% | %13.3f | %8d | %7d | %.1f%% / %.3f%n",
                    (int) Math.round(r.p * 100) + "%", r.column, r.successPercent, r.amplification, r.received,
                    r.budgetRefusals, seed[0], seed[1]));
        }
        System.out.println("R3 budget table (min-retries-per-second 0, 1500 requests per row):\n" + table);

        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            Double ratio = COLUMNS[i % COLUMNS.length];
            if (ratio != null && ratio > 0) {
                assertThat(r.amplification).as("p=%s %s: amplification <= 1 + ratio", r.p, r.column)
                        .isLessThanOrEqualTo(1 + ratio + 1e-9);
            }
            if (r.p >= 0.2) {
                double[] seed = SEED_TABLE[i / COLUMNS.length][i % COLUMNS.length];
                assertThat(r.successPercent).as("p=%s %s: success vs the seed's %s %%", r.p, r.column, seed[0])
                        .isCloseTo(seed[0], org.assertj.core.data.Offset.offset(2.0));
                assertThat(r.amplification).as("p=%s %s: amplification vs the seed's %s", r.p, r.column, seed[1])
                        .isCloseTo(seed[1], org.assertj.core.data.Offset.offset(0.03));
            }
        }
        // p = 5 %: the budget does not hinder retries: every budget column does what unlimited does, but for a
        // failure among the first calls, before the empty budget holds one retry
        Row unlimited = rows.get(4);
        for (int col = 1; col <= 3; col++) {
            Row r = rows.get(col);
            assertThat(r.lastRefusedCall).as("5 %% %s: no retry refused after the first %d calls", r.column,
                    (int) Math.ceil(1 / COLUMNS[col])).isLessThanOrEqualTo((int) Math.ceil(1 / COLUMNS[col]));
            assertThat(r.successPercent).as("5 %% %s: success", r.column)
                    .isGreaterThanOrEqualTo(unlimited.successPercent - 0.2);
            assertThat(r.amplification).as("5 %% %s: amplification", r.column)
                    .isCloseTo(unlimited.amplification, org.assertj.core.data.Offset.offset(0.005));
        }
    }
}
