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
 * What the tests of application code that throws share: a real in-process server, the engine's
 * scheduler, and the log records caught on the java.util.logging logger System.Logger writes to.
 */
abstract class UserCodeFailureHarness {


    static final Logger CALLBACKS = Logger.getLogger("io.github.grpcretry.callbacks");

    final List<LogRecord> records = new CopyOnWriteArrayList<>();
    final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    ScriptedServer server;
    RetryScheduler scheduler;
    final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        CALLBACKS.addHandler(handler);
        server = ScriptedServer.start("user-code-" + System.nanoTime());
        scheduler = RetryScheduler.create(1, "user-code-retry");
    }

    @AfterEach
    void tearDown() throws Exception {
        CALLBACKS.removeHandler(handler);
        for (ManagedChannel c : channels) {
            c.shutdownNow();
            c.awaitTermination(5, TimeUnit.SECONDS);
        }
        scheduler.close();
        server.close();
    }

    /** A listener of the application's (not one of grpc-retry's own) that throws from two kinds of event. */
    static final class ThrowingListener implements RetryEventListener {
        @Override
        public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
            throw new IllegalStateException("listener bug");
        }

        @Override
        public void callEnded(CallTarget target, Status.Code code, int retries, int hedges,
                int transparentRetries, long retryDelayNanos) {
            throw new IllegalArgumentException("another listener bug");
        }
    }

    ManagedChannel channel(RetryingClientInterceptor engine) {
        ManagedChannel ch = InProcessChannelBuilder.forName(server.inProcessName()).intercept(engine).build();
        channels.add(ch);
        return ch;
    }

    List<LogRecord> recordsAbout(Object callback) {
        String name = callback.toString();
        return records.stream().filter(r -> r.getMessage().contains(name)).toList();
    }
}
