package io.github.grpcretry.springgrpc;

import io.github.grpcretry.spring.testing.StreamResumptionContract;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.grpc.Channel;
import io.grpc.ServerBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * {@code StreamResumption} beans on Spring Boot 4.1 (Spring gRPC): the cases of {@link StreamResumptionContract},
 * each an auto-configured application whose channel Spring gRPC's channel factory builds, to a Netty server on
 * 127.0.0.1.
 */
class StreamResumptionContextTest extends StreamResumptionContract {

    @Override
    protected ConfigurableApplicationContext start(List<String> properties, List<Class<?>> beans) {
        return GrpcClientContext.start(new ArrayList<>(beans), properties.toArray(String[]::new)).context();
    }

    @Override
    protected List<String> channelProperties(String channel, String hostAndPort) {
        return List.of("spring.grpc.client.channel." + channel + ".target=static://" + hostAndPort);
    }

    @Override
    protected Channel channel(ConfigurableApplicationContext context, String channel) {
        return context.getBean(GrpcChannelFactory.class).createChannel(channel);
    }

    @Override
    protected String report(Throwable failure) {
        return FailureReports.report(failure);
    }

    @Override
    protected ServerBuilder<?> loopbackServer() {
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0));
    }
}
