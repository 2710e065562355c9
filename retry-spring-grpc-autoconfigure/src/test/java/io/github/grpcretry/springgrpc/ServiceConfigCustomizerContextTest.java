package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.MethodName;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;

/**
 * {@link ServiceConfigCustomizer} beans on Spring Boot 4.1, in a real client application calling a real
 * Spring gRPC server: they run in {@code @Order} on each channel's merged configuration (GLOBAL's entries,
 * {@code grpc.retry.clients.<name>}, and Spring Boot's own {@code spring.grpc.client.channel.<name>.service-config}
 * as the base layer), before the attempt cap; the engine runs what they return, capped; and their output
 * is validated, a problem named {@code ServiceConfigCustomizer(<channel>) ...}.
 */
@ExtendWith(OutputCaptureExtension.class)
class ServiceConfigCustomizerContextTest {

    static final String SVC = "grpc.testing.SimpleService";

    static ScriptedService service;
    static GrpcServerContext server;

    @BeforeAll
    static void start() {
        service = new ScriptedService((key, n) -> fail(Status.Code.UNAVAILABLE));
        server = GrpcServerContext.start(service);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static RetryPolicy retry(int maxAttempts) {
        return new RetryPolicy(maxAttempts, Duration.ofMillis(5), Duration.ofMillis(20), 2, EnumSet.of(Status.Code.UNAVAILABLE),
                null);
    }

    /** Two customizers: the first puts a 9-attempt retry on UnaryRpc in front, the second records what it was given. */
    static class Customizers {
        final List<String> first = new CopyOnWriteArrayList<>();
        final List<String> second = new CopyOnWriteArrayList<>();

        @Bean
        @Order(2)
        ServiceConfigCustomizer recordsWhatTheFirstReturned() {
            return (channel, config) -> {
                second.add(channel + ":" + describe(config));
                return config;
            };
        }

        @Bean
        @Order(1)
        ServiceConfigCustomizer retriesUnaryRpcNineTimes() {
            return (channel, config) -> {
                first.add(channel + ":" + describe(config));
                List<MethodConfig> out = new ArrayList<>();
                out.add(new MethodConfig(List.of(MethodName.of(SVC, "UnaryRpc")), null, null, null, null, retry(9), null));
                out.addAll(config.methodConfigs());
                return new ServiceConfig(out, config.retryThrottling());
            };
        }

        /** The method configs a customizer was given: names and timeout. */
        static String describe(ServiceConfig config) {
            List<String> methods = new ArrayList<>();
            for (MethodConfig mc : config.methodConfigs()) {
                methods.add(mc.names().get(0).service() + "/" + mc.names().get(0).method() + " timeout=" + mc.timeout()
                        + " retry=" + (mc.retryPolicy() == null ? "-" : mc.retryPolicy().maxAttempts()));
            }
            return methods.toString();
        }
    }

    @Test
    void customizersRunInOrderOnTheMergedConfigBeforeTheCap(CapturedOutput output) {
        String boot = server.inProcessTarget();
        try (GrpcClientContext client = GrpcClientContext.start(List.of(Customizers.class),
                "spring.grpc.client.channel.props.target=" + server.nettyTarget(),
                "grpc.retry.clients.props.max-attempts-cap=4",
                "grpc.retry.clients.GLOBAL.service-config.method[0].name[0].service=other.Service",
                "grpc.retry.clients.GLOBAL.service-config.method[0].timeout=7s",
                "spring.grpc.client.channel.[" + boot + "].service-config.method[0].name[0].service=" + SVC,
                "spring.grpc.client.channel.[" + boot + "].service-config.method[0].timeout=5s")) {
            Customizers customizers = client.bean(Customizers.class);
            // the first saw each channel's merged config: GLOBAL's entry, and on the Boot channel Boot's own
            assertThat(customizers.first).contains("props:[other.Service/null timeout=PT7S retry=-]",
                    boot + ":[" + SVC + "/null timeout=PT5S retry=-, other.Service/null timeout=PT7S retry=-]");
            // the second got the first's result, before the cap (9, not 4)
            assertThat(customizers.second).contains(
                    "props:[" + SVC + "/UnaryRpc timeout=null retry=9, other.Service/null timeout=PT7S retry=-]");
            ChannelRetryConfigs configs = client.bean(ChannelRetryConfigs.class);
            assertThat(configs.forChannel("props").serviceConfig().find(SVC, "UnaryRpc").retryPolicy().maxAttempts())
                    .isEqualTo(4);

            // the engine runs the customized policy, capped: 4 attempts on props, 5 (the default cap) on the Boot channel
            call(client, "props", "props-always");
            assertThat(service.count("props-always")).isEqualTo(4);
            call(client, boot, "boot-always");
            assertThat(service.count("boot-always")).isEqualTo(5);
        }
        assertThat(output.getAll()).contains(
                "ServiceConfigCustomizer(props) methodConfig[0].retryPolicy.maxAttempts = 9 is above the max-attempts-cap 4");
    }

    static void call(GrpcClientContext client, String channel, String key) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> client.stub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).unaryRpc(request(key)));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    }

    /** A customizer whose output breaks a rule: start-up fails, and the report names the customizer and the field. */
    static class Breaking {
        @Bean
        ServiceConfigCustomizer oneAttempt() {
            return (channel, config) -> new ServiceConfig(List.of(new MethodConfig(List.of(MethodName.of(SVC, null)), null,
                    null, null, null, retry(1), null)), null);
        }
    }

    @Test
    void aCustomizersOutputIsValidatedAndNamedInTheReport() {
        Throwable failure = catchThrowable(() -> GrpcClientContext.start(List.of(Breaking.class),
                "spring.grpc.client.channel.props.target=" + server.nettyTarget(),
                "grpc.retry.clients.props.per-rpc-buffer-limit=1MB").close());
        assertThat(failure).isNotNull();
        assertThat(FailureReports.report(failure))
                .contains("ServiceConfigCustomizer(props) methodConfig[0].retryPolicy.maxAttempts");
    }
}
