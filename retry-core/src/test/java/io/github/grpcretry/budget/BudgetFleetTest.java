package io.github.grpcretry.budget;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.attempt.RetryingClientInterceptor;
import io.github.grpcretry.policy.RetryBudgetPolicy;
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
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A fleet: 20 client instances, each its own channel and its own budget, against one server that is
 * fully down. The bound holds per instance, so it holds for the fleet: attempts ÷ calls ≤ 1 + ratio
 * plus the floor's share (20 × min-retries-per-second × ttl per window).
 */
class BudgetFleetTest {

    private static final int INSTANCES = 20;
    private static final int CALLS_PER_INSTANCE = 100;
    private static final io.grpc.Metadata.Key<String> INSTANCE =
            io.grpc.Metadata.Key.of("x-instance", io.grpc.Metadata.ASCII_STRING_MARSHALLER);

    record Fleet(int calls, int received, long durationNanos, int[] perInstance) {
        double amplification() {
            return (double) received / calls;
        }
    }

    private static Fleet run(ScriptedServer server, RetryScheduler scheduler, RetryBudgetPolicy budget)
            throws Exception {
        server.reset();
        ExecutorService instances = Executors.newFixedThreadPool(4);
        List<ManagedChannel> channels = new ArrayList<>();
        try {
            List<Future<Integer>> attempts = new ArrayList<>();
            long start = System.nanoTime();
            for (int i = 0; i < INSTANCES; i++) {
                String name = "instance-" + i;
                ManagedChannel ch = InProcessChannelBuilder.forName(server.inProcessName())
                        .intercept(RetryingClientInterceptor.builder(BudgetReferenceTest.config(3, budget))
                                .budget(budget == null ? null : new RetryBudget(budget))
                                .scheduler(scheduler).build())
                        .build();
                channels.add(ch);
                attempts.add(instances.submit(() -> {
                    io.grpc.Metadata headers = new io.grpc.Metadata();
                    headers.put(INSTANCE, name);
                    SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(ch)
                            .withInterceptors(io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(headers));
                    SimpleRequest request = SimpleRequest.newBuilder().setRequestMessage(name).build();
                    for (int k = 0; k < CALLS_PER_INSTANCE; k++) {
                        try {
                            stub.withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(request);
                            throw new AssertionError("the server is down");
                        } catch (StatusRuntimeException e) {
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                        }
                    }
                    return 0;
                }));
            }
            for (Future<Integer> f : attempts) {
                f.get(60, TimeUnit.SECONDS);
            }
            long duration = System.nanoTime() - start;
            int[] perInstance = new int[INSTANCES];
            for (ScriptedServer.Arrival a : server.arrivals()) {
                perInstance[Integer.parseInt(a.header(INSTANCE.name()).substring("instance-".length()))]++;
            }
            return new Fleet(INSTANCES * CALLS_PER_INSTANCE, server.arrivalCount(), duration, perInstance);
        } finally {
            instances.shutdownNow();
            for (ManagedChannel ch : channels) {
                ch.shutdownNow();
            }
        }
    }

    @Test
    void twentyInstancesEachWithItsOwnBudgetStayWithinTheBound() throws Exception {
        RetryScheduler scheduler = RetryScheduler.create(1, "budget-fleet");
        try (ScriptedServer server = ScriptedServer.start("budget-fleet-" + UUID.randomUUID())) {
            server.script(a -> Action.fail(Status.Code.UNAVAILABLE));
            double ratio = 0.1;
            double floor = 1; // per second, per instance
            Duration ttl = Duration.ofSeconds(10);

            Fleet unlimited = run(server, scheduler, null);
            Fleet noFloor = run(server, scheduler, new RetryBudgetPolicy(ratio, 0, ttl));
            Fleet withFloor = run(server, scheduler, new RetryBudgetPolicy(ratio, floor, ttl));
            System.out.printf("Fleet of %d instances x %d calls, server down: unlimited %.3f, budget 10 %% %.3f, "
                            + "budget 10 %% + floor 1/s (ttl 10 s) %.3f%n", INSTANCES, CALLS_PER_INSTANCE,
                    unlimited.amplification(), noFloor.amplification(), withFloor.amplification());

            assertThat(unlimited.amplification()).isEqualTo(3.0);
            assertThat(noFloor.amplification()).isLessThanOrEqualTo(1 + ratio).isGreaterThan(1 + ratio - 0.01);
            for (int n : noFloor.perInstance()) {
                assertThat(n).as("per instance").isLessThanOrEqualTo((int) (CALLS_PER_INSTANCE * (1 + ratio)));
            }
            // the floor gives each instance up to floor x ttl retries per window; the run may span more than one
            double windows = Math.ceil((double) withFloor.durationNanos() / ttl.toNanos()) + 1;
            double floorShare = INSTANCES * floor * ttl.toSeconds() * windows / withFloor.calls();
            assertThat(withFloor.amplification()).as("<= 1 + ratio + floor share (%s)", floorShare)
                    .isLessThanOrEqualTo(1 + ratio + floorShare)
                    .isGreaterThan(1 + ratio);
            for (int n : withFloor.perInstance()) {
                assertThat(n).as("per instance").isLessThanOrEqualTo(
                        (int) (CALLS_PER_INSTANCE * (1 + ratio) + floor * ttl.toSeconds() * windows));
            }
        } finally {
            scheduler.close();
        }
    }
}
