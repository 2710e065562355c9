package io.github.grpcretry.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.HedgingPolicy;
import io.github.grpcretry.reliability.Fixtures.Client;
import io.github.grpcretry.reliability.Fixtures.Engine;
import io.github.grpcretry.testing.ScriptedServer;
import io.github.grpcretry.testing.ScriptedServer.Action;
import io.github.grpcretry.testing.SimpleCalls;
import io.github.grpcretry.testing.SimpleCalls.Handle;
import io.grpc.CallOptions;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A race in grpc-java's own hedging (1.85, engine {@code native}) that the native soak meets a few
 * times in thousands of hedged calls, forced here step by step: when the hedging timer's task is already
 * making the next hedge and a pushback then reschedules the timer, the task finds its timer
 * cancelled, starts its hedge and cancels it with CANCELLED "Unneeded hedging". That stream's close
 * is judged like a server's answer: CANCELLED is not a non-fatal code, so grpc-java commits the call
 * to it and the application gets CANCELLED "Unneeded hedging" although the server would have
 * answered the next hedge.
 *
 * <p>How it is forced: the call runs on an executor of the test's that holds the tasks grpc-java's
 * hedging timer hands to it ({@code RetriableStream$HedgingRunnable} on the stack) and runs every
 * other task at once. The first attempt's answer (UNAVAILABLE with a 10 ms pushback) is held by the
 * server until the first hedge's task is held; the pushback then cancels that timer and schedules
 * the next hedge, whose task is held too; the test runs the first task, then the second.
 */
class NativeHedgingRaceTest {

    /** Holds the tasks grpc-java's hedging timer submits; runs the others on the caller's thread. */
    private static final class HoldingHedgeTasks implements Executor {
        final BlockingQueue<Runnable> held = new LinkedBlockingQueue<>();

        @Override
        public void execute(Runnable task) {
            for (StackTraceElement f : Thread.currentThread().getStackTrace()) {
                if (f.getClassName().equals("io.grpc.internal.RetriableStream$HedgingRunnable")) {
                    held.add(task);
                    return;
                }
            }
            task.run();
        }

        Runnable next() throws InterruptedException {
            Runnable r = held.poll(10, TimeUnit.SECONDS);
            assertThat(r).as("a task of the hedging timer within 10 s").isNotNull();
            return r;
        }
    }

    @Test
    void pushbackDuringHedgeTimerEndsCallWithUnneededHedging() throws Exception {
        HedgingPolicy policy = Fixtures.hedging(3, 50, Status.Code.UNAVAILABLE);
        CountDownLatch answerFirst = new CountDownLatch(1);
        try (ScriptedServer server = ScriptedServer.startNetty()) {
            server.script(a -> {
                if (a.previousAttempts == null && !a.header("x-call-id").startsWith("warm")) {
                    try {
                        answerFirst.await(10, TimeUnit.SECONDS); // held until the first hedge's task is held
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return Action.fail(Status.Code.UNAVAILABLE).pushback("10");
                }
                return Action.ok();
            });
            // grpc-java's engine: no scheduler of ours
            try (Client c = Fixtures.netty(Engine.NATIVE, server.target(),
                    Fixtures.channelConfig("race", Fixtures.hedgedService(policy)), null)) {
                FaultRig.warmUp(c);
                HoldingHedgeTasks executor = new HoldingHedgeTasks();
                Handle h = SimpleCalls.run(c.channel(), SimpleCalls.UNARY,
                        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS).withExecutor(executor), "race",
                        List.of("race-m0"));

                Runnable firstHedge = executor.next(); // the timer fired after 50 ms and made hedge 2's stream
                answerFirst.countDown(); // attempt 1: UNAVAILABLE, pushback 10 ms: the timer is rescheduled
                Runnable secondHedge = executor.next(); // the rescheduled timer fired and made its stream
                firstHedge.run(); // finds its timer cancelled: starts and cancels its hedge ("Unneeded hedging")
                secondHedge.run();

                Status s = h.listener.awaitClose(10, TimeUnit.SECONDS);
                h.listener.assertContract();
                // what grpc-java 1.85 does: the call ends with the status of the hedge it dropped itself
                assertThat(s.getCode()).as(s.toString()).isEqualTo(Status.Code.CANCELLED);
                assertThat(s.getDescription()).isEqualTo("Unneeded hedging");
                assertThat(server.arrivals().stream().filter(a -> a.header("x-call-id").equals("race"))
                        .noneMatch(a -> a.closedByServer && a.previousAttempts != null))
                        .as("no hedge was answered by the server").isTrue();
                Figures.record("native-hedging-race", "pushback while the hedging timer makes a hedge: the call ended "
                        + s + " after " + c.attempts().attempts("race") + " attempts");
            }
        }
    }
}
