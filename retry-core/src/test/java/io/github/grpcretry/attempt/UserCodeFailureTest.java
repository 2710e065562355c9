package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.internal.callback.CallbackFailures;
import io.github.grpcretry.policy.ChannelRetryConfig;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Application code the engine calls and that throws (docs/design.md §14): the call goes on with the
 * safe answer, the first failure of each callback and kind is logged once, and every failure is counted.
 * Real in-process server; the log records are caught on the java.util.logging logger System.Logger
 * writes to.
 */
class UserCodeFailureTest extends UserCodeFailureHarness {

    @Test
    void aThrowingListenerIsLoggedOncePerKindThenCounted() throws Exception {
        server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
        ThrowingListener listener = new ThrowingListener();
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(Configs.channel(Configs.service(Configs.fast(3), null)))
                .eventListener(listener).scheduler(scheduler).build();
        ManagedChannel ch = channel(engine);

        for (int i = 0; i < 4; i++) {
            server.reset();
            server.script(ScriptedServer.failFirst(2, Status.Code.UNAVAILABLE));
            Rpc.Outcome out = Rpc.unary(ch, CallOptions.DEFAULT, "m" + i);
            assertThat(out.code()).as("the call is retried and succeeds as if the listener were fine").isEqualTo(Status.Code.OK);
            assertThat(server.arrivalCount()).isEqualTo(3);
        }

        assertThat(CallbackFailures.SHARED.count(listener, "attemptEnded")).isEqualTo(12); // 3 attempts × 4 calls
        assertThat(CallbackFailures.SHARED.count(listener, "callEnded")).isEqualTo(4);
        List<LogRecord> logged = recordsAbout(listener);
        assertThat(logged).hasSize(2);
        assertThat(logged).allSatisfy(r -> assertThat(r.getLevel()).isEqualTo(Level.WARNING));
        assertThat(logged).extracting(r -> r.getThrown().getMessage()).containsExactlyInAnyOrder("listener bug", "another listener bug");
    }

    /** A decider that throws from onFailure: counts as not retryable, logged once, counted. */
    static final class ThrowingDecider implements RetryDecider {
        @Override
        public int maxAttempts() {
            return 3;
        }

        @Override
        public boolean isRetryable(Status status, Metadata trailers) {
            return true;
        }

        @Override
        public Call newCall(CallTarget target) {
            return new Call() {
                @Override
                public Decision onFailure(int attemptNumber, Status status, Metadata trailers) {
                    throw new IllegalStateException("decider bug");
                }

                @Override
                public void onClose(Status status, int attempts) {
                }
            };
        }

        @Override
        public String toString() {
            return "ThrowingDecider@" + Integer.toHexString(System.identityHashCode(this));
        }
    }

    @Test
    void aThrowingDeciderCountsAsNotRetryableIsLoggedOnceThenCounted() throws Exception {
        server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
        ThrowingDecider decider = new ThrowingDecider();
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(
                        ChannelRetryConfig.of("decider", new ServiceConfig(List.of(), null)))
                .fallbackRetryDecider(m -> decider).scheduler(scheduler).build();
        ManagedChannel ch = channel(engine);

        for (int i = 0; i < 3; i++) {
            server.reset();
            server.script(ScriptedServer.always(Status.Code.UNAVAILABLE));
            Rpc.Outcome out = Rpc.unary(ch, CallOptions.DEFAULT, "d" + i);
            assertThat(out.code()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(server.arrivalCount()).as("not retried").isEqualTo(1);
        }

        assertThat(CallbackFailures.SHARED.count(decider, "onFailure")).isEqualTo(3);
        List<LogRecord> logged = recordsAbout(decider);
        assertThat(logged).hasSize(1);
        assertThat(logged.get(0).getThrown()).hasMessage("decider bug");
    }
}
