package io.github.grpcretry.sample.lab;

import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.github.grpcretry.sample.proto.FlakyReply;
import io.github.grpcretry.sample.proto.FlakyRequest;
import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import net.devh.boot.grpc.server.service.GrpcService;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * One middle layer of the A→B→C chain: a Spring Boot application with a net.devh gRPC server whose
 * Flaky.Call forwards the request to the next layer through a net.devh client channel configured by
 * grpc.retry.* properties, and answers with the downstream's status when that call fails. The
 * request key's prefix ("variant:n") picks the channel {@code next-<variant>}, so one layer serves
 * every variant (unlimited, budget) with its own retry settings and limiters.
 */
final class Relay implements AutoCloseable {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(RelayService.class)
    public static class RelayApp {
    }

    @GrpcService
    public static class RelayService extends FlakyGrpc.FlakyImplBase {

        private final ObjectProvider<GrpcChannelFactory> channels;
        private final Map<String, Channel> byVariant = new ConcurrentHashMap<>();

        public RelayService(ObjectProvider<GrpcChannelFactory> channels) {
            this.channels = channels;
        }

        @Override
        public void call(FlakyRequest request, StreamObserver<FlakyReply> responses) {
            String key = request.getKey();
            String variant = key.substring(0, Math.max(0, key.indexOf(':')));
            Channel next = byVariant.computeIfAbsent(variant, v -> channels.getObject().createChannel("next-" + v));
            try {
                responses.onNext(FlakyGrpc.newBlockingStub(next).call(request));
                responses.onCompleted();
            } catch (StatusRuntimeException e) {
                responses.onError(e.getStatus().asRuntimeException());
            }
        }
    }

    private final ConfigurableApplicationContext context;
    private final int port;

    private Relay(ConfigurableApplicationContext context, int port) {
        this.context = context;
        this.port = port;
    }

    /**
     * Starts one layer.
     *
     * @param channels the next-&lt;variant&gt; channels to the layer below
     * @param extra more properties (e.g. grpc.retry.guard.enabled)
     */
    static Relay start(String engine, Iterable<ChannelSpec> channels, Map<String, ?> extra) {
        Map<String, Object> p = LabContexts.base(engine);
        p.put("grpc.server.port", "0");
        p.put("grpc.server.address", "127.0.0.1");
        channels.forEach(c -> p.putAll(c.properties(LabContexts.NAMING)));
        p.putAll(extra);
        AtomicInteger port = new AtomicInteger(-1);
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(RelayApp.class)
                .web(WebApplicationType.NONE)
                .properties(p)
                .listeners(e -> {
                    if (e instanceof GrpcServerStartedEvent started) {
                        port.set(started.getPort());
                    }
                })
                .run();
        if (port.get() <= 0) {
            ctx.close();
            throw new IllegalStateException("the relay's gRPC server did not report its port");
        }
        return new Relay(ctx, port.get());
    }

    String address() {
        return "static://127.0.0.1:" + port;
    }

    /** Whether this layer's net.devh server runs the starter's amplification guard (its server interceptor bean). */
    boolean hasGuard() {
        for (String name : context.getBeanDefinitionNames()) {
            Class<?> type = context.getType(name);
            if (type != null && type.getName().equals("io.github.grpcretry.guard.GuardServerInterceptor")) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        context.close();
    }
}
