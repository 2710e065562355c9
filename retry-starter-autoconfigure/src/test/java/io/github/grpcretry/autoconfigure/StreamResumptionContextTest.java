package io.github.grpcretry.autoconfigure;

import io.github.grpcretry.spring.testing.StreamResumptionContract;
import io.grpc.Channel;
import io.grpc.ServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;

/**
 * {@code StreamResumption} beans on Spring Boot 3.5 (net.devh): the cases of {@link StreamResumptionContract}, each
 * an auto-configured application whose channel net.devh's channel factory builds, to a Netty server on 127.0.0.1.
 */
class StreamResumptionContextTest extends StreamResumptionContract {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    @Override
    protected ConfigurableApplicationContext start(List<String> properties, List<Class<?>> beans) {
        Map<String, Object> p = new LinkedHashMap<>(Map.of("spring.main.banner-mode", "off", "grpc.server.port", "-1"));
        for (String property : properties) {
            p.put(property.substring(0, property.indexOf('=')), property.substring(property.indexOf('=') + 1));
        }
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .initializers(c -> beans.forEach(((GenericApplicationContext) c)::registerBean))
                .properties(p).run();
    }

    @Override
    protected List<String> channelProperties(String channel, String hostAndPort) {
        return List.of("grpc.client." + channel + ".address=static://" + hostAndPort,
                "grpc.client." + channel + ".negotiation-type=plaintext");
    }

    @Override
    protected Channel channel(ConfigurableApplicationContext context, String channel) {
        return context.getBean(GrpcChannelFactory.class).createChannel(channel);
    }

    @Override
    protected String report(Throwable failure) {
        return RetryTestContexts.failureReport(failure);
    }

    @Override
    protected ServerBuilder<?> loopbackServer() {
        return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0));
    }
}
