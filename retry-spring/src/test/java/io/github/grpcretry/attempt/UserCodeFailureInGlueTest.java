package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.grpcretry.config.RetryConfigResolver;
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
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Application code that throws behind the Spring glue (docs/design.md §14): a listener behind the
 * composite listener and a service-config customizer the resolver calls. The engine's own cases are in
 * retry-core's UserCodeFailureTest.
 */
class UserCodeFailureInGlueTest extends UserCodeFailureHarness {

    @Test
    void compositeIsolatesAThrowingListenerAndLogsItOnce() throws Exception {
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        ThrowingListener listener = new ThrowingListener();
        RecordingEvents healthy = new RecordingEvents();
        RetryEventListener composite = RetryEventListener.composite(List.of(listener, healthy));
        RetryingClientInterceptor engine = RetryingClientInterceptor.builder(Configs.channel(Configs.service(Configs.fast(3), null)))
                .eventListener(composite).scheduler(scheduler).build();

        Rpc.Outcome first = Rpc.unary(channel(engine), CallOptions.DEFAULT, "a");
        server.reset();
        server.script(ScriptedServer.failFirst(1, Status.Code.UNAVAILABLE));
        Rpc.Outcome second = Rpc.unary(channel(engine), CallOptions.DEFAULT, "b");

        assertThat(first.code()).isEqualTo(Status.Code.OK);
        assertThat(second.code()).isEqualTo(Status.Code.OK);
        assertThat(CallbackFailures.SHARED.count(listener, "attemptEnded")).isEqualTo(4);
        assertThat(CallbackFailures.SHARED.count(listener, "callEnded")).isEqualTo(2);
        assertThat(CallbackFailures.SHARED.counts()).containsKey(
                listener.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(listener)) + "#callEnded");
        assertThat(recordsAbout(listener)).hasSize(2);
    }

    @Test
    void aThrowingCustomizerStopsStartUpNamingIt() {
        ServiceConfigCustomizer customizer = new ServiceConfigCustomizer() {
            @Override
            public ServiceConfig customize(String channel, ServiceConfig config) {
                throw new IllegalStateException("customizer bug in " + channel);
            }

            @Override
            public String toString() {
                return "BrokenCustomizer";
            }
        };
        RetryConfigResolver.ClientProperties inventory = new RetryConfigResolver.ClientProperties(
                null, null, null, 3, null, null, null, null, null, null, null, null, null, null);

        assertThatThrownBy(() -> RetryConfigResolver.create().client("inventory", inventory)
                .customizers(List.of(customizer)).resolve())
                .isInstanceOfSatisfying(InvalidRetryConfigurationException.class, e -> assertThat(e.getProblems())
                        .extracting(ConfigProblem::path, ConfigProblem::value)
                        .containsExactly(org.assertj.core.groups.Tuple.tuple("ServiceConfigCustomizer(inventory)", "BrokenCustomizer")));
        assertThat(CallbackFailures.SHARED.count(customizer, "customize")).isEqualTo(1);
        assertThat(recordsAbout(customizer)).hasSize(1);
    }
}
