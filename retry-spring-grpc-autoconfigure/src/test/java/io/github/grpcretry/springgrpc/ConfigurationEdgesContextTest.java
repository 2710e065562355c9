package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static io.github.grpcretry.springgrpc.testing.ScriptedService.fail;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.spring.testing.ConfigurationEdgesContract;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.springgrpc.testing.GrpcServerContext;
import io.github.grpcretry.springgrpc.testing.ScriptedService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * Configuration at its edges on Spring Boot 4.1 (Spring gRPC): the cases of
 * {@link ConfigurationEdgesContract}, each a real client application whose channels go to a Spring gRPC
 * server (Netty on loopback) that fails every call with UNAVAILABLE; and Boot's own service config of a
 * channel named {@code global}.
 */
class ConfigurationEdgesContextTest extends ConfigurationEdgesContract {

    private static final AtomicInteger KEYS = new AtomicInteger();

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

    /** Creates the channel {@code global} while the application starts, as a client bean would. */
    static final class GlobalClient implements SmartInitializingSingleton, BeanFactoryAware {

        private BeanFactory beanFactory;

        @Override
        public void setBeanFactory(BeanFactory beanFactory) {
            this.beanFactory = beanFactory;
        }

        @Override
        public void afterSingletonsInstantiated() {
            beanFactory.getBean(GrpcChannelFactory.class).createChannel("global");
        }
    }

    @Override
    protected String channelProperty(String channel) {
        return "spring.grpc.client.channel." + channel + ".target=" + server.nettyTarget();
    }

    @Override
    protected int arrivals(List<String> properties, Map<String, Object> environment, String channel) {
        try (GrpcClientContext client = GrpcClientContext.start(List.of(), environment, properties.toArray(String[]::new))) {
            String key = "edges-" + KEYS.incrementAndGet();
            StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                    () -> SimpleServiceGrpc.newBlockingStub(client.channel(channel)).unaryRpc(request(key)));
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            return service.count(key);
        }
    }

    @Override
    protected Throwable failure(List<String> properties, Map<String, Object> environment, boolean globalChannel) {
        List<Object> beans = globalChannel ? List.of(new GlobalClient()) : List.of();
        Throwable failure = catchThrowable(() -> GrpcClientContext.start(beans, environment,
                properties.toArray(String[]::new)).close());
        assertThat(failure).as("start-up fails").isNotNull();
        return failure;
    }

    @Override
    protected String report(Throwable failure) {
        return FailureReports.report(failure);
    }

    @Test
    void bootsOwnServiceConfigOfAChannelNamedGlobalIsReportedWhenTheApplicationStarts() {
        String b = "spring.grpc.client.channel.global.service-config.method[0].";
        assertThat(report(with(fourAttempts("global", "global"), b + "name[0].service=grpc.testing.SimpleService",
                b + "wait-for-ready=false")))
                .contains("Property: grpc.retry.clients.global\n", "it cannot be the entry of the channel global");
    }
}
