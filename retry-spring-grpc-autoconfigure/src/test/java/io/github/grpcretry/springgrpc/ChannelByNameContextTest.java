package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * A channel created by a name no configuration mentions (Boot then uses the name itself as the target
 * and its {@code default} entry's service config) neither validates nor changes the configured
 * channels: {@code svc}, whose {@code grpc.retry.clients.svc} entry changes only {@code max-attempts}
 * of its Boot service config, keeps working, whether the extra channel is created while the application
 * starts or afterwards.
 */
class ChannelByNameContextTest {

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

    /** The name the extra channel is created with: the server's address, which Boot uses as its target. */
    static String byName() {
        return "127.0.0.1:" + server.port();
    }

    static String[] properties() {
        String d = "spring.grpc.client.channel.default.service-config.method[0].retry.";
        String s = "spring.grpc.client.channel.svc.service-config.method[0].retry.";
        return new String[] {
            d + "max-attempts=2", d + "initial-backoff=1ms", d + "max-backoff=2ms", d + "backoff-multiplier=2",
            d + "retryable-status-codes=UNAVAILABLE",
            "spring.grpc.client.channel.svc.target=" + server.nettyTarget(),
            s + "max-attempts=2", s + "initial-backoff=1ms", s + "max-backoff=2ms", s + "backoff-multiplier=2",
            s + "retryable-status-codes=UNAVAILABLE",
            "grpc.retry.clients.svc.service-config.method[0].retry.max-attempts=4"};
    }

    @SuppressWarnings("unchecked")
    static Object policySources(Map<String, Object> channels, String channel) {
        return ((Map<String, Object>) ((Map<String, Object>) channels.get(channel)).get("policy")).get("sources");
    }

    static int arrivals(ManagedChannel channel, String key) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> SimpleServiceGrpc.newBlockingStub(channel).unaryRpc(request(key)));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        return service.count(key);
    }

    @Test
    void aChannelCreatedByNameAfterStartUpLeavesTheOthersAlone() {
        try (GrpcClientContext client = GrpcClientContext.start(properties())) {
            ManagedChannel extra = client.channel(byName());
            assertThat(arrivals(extra, "late-extra")).isEqualTo(2);
            assertThat(arrivals(client.channel("svc"), "late-svc")).isEqualTo(4);
            // A second extra channel, after svc was used: nothing is resolved again.
            assertThat(arrivals(client.channel(byName()), "late-extra-2")).isEqualTo(2);
            Map<String, Object> endpoint = client.bean(RetryReport.class).endpoint();
            @SuppressWarnings("unchecked")
            Map<String, Object> channels = (Map<String, Object>) endpoint.get("channels");
            assertThat(channels).containsKeys("svc", byName()).doesNotContainKey("default");
            // Where each channel's policy comes from: svc's Boot service config with grpc.retry laid over it;
            // the extra channel's from Boot's default entry.
            assertThat(policySources(channels, "svc")).isEqualTo(List.of("boot-service-config", "yaml"));
            assertThat(policySources(channels, byName())).isEqualTo(List.of("boot-service-config"));
        }
    }

    @Test
    void aChannelMadeByNameDuringStartUpLeavesTheOthersAlone() {
        EarlyChannel early = new EarlyChannel();
        try (GrpcClientContext client = GrpcClientContext.start(List.of(early), properties())) {
            assertThat(early.channel).isNotNull();
            assertThat(arrivals(early.channel, "early-extra")).isEqualTo(2);
            assertThat(arrivals(client.channel("svc"), "early-svc")).isEqualTo(4);
        }
    }

    /** Creates the extra channel while the context is refreshed, as an {@code @ImportGrpcClients} target would be. */
    static final class EarlyChannel implements SmartInitializingSingleton,
            org.springframework.beans.factory.BeanFactoryAware {

        volatile ManagedChannel channel;
        private org.springframework.beans.factory.BeanFactory beanFactory;

        @Override
        public void setBeanFactory(org.springframework.beans.factory.BeanFactory beanFactory) {
            this.beanFactory = beanFactory;
        }

        @Override
        public void afterSingletonsInstantiated() {
            channel = beanFactory.getBean(GrpcChannelFactory.class).createChannel(byName());
        }
    }
}
