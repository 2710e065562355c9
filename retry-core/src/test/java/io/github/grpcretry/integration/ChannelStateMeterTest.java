package io.github.grpcretry.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.grpcretry.testing.ScriptedServer;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ChannelStateMeterTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private Map<ConnectivityState, Double> values(String client) {
        Map<ConnectivityState, Double> out = new EnumMap<>(ConnectivityState.class);
        for (Gauge g : registry.find("grpc.client.channel.state").tag("client", client).gauges()) {
            out.put(ConnectivityState.valueOf(g.getId().getTag("state")), g.value());
        }
        return out;
    }

    private boolean onlyOne(String client, ConnectivityState state) {
        Map<ConnectivityState, Double> v = values(client);
        return v.size() == ConnectivityState.values().length && v.get(state) == 1.0
                && v.values().stream().mapToDouble(Double::doubleValue).sum() == 1.0;
    }

    @Test
    void watchFollowsARealChannelFromIdleToReadyToShutdown() throws Exception {
        try (ScriptedServer server = ScriptedServer.start("state-meter")) {
            ManagedChannel channel = InProcessChannelBuilder.forName("state-meter").build();
            ChannelStateMeter meter = ChannelStateMeter.watch(registry, "inventory", channel);
            assertThat(registry.find("grpc.client.channel.state").gauges()).hasSize(5)
                    .allMatch(g -> g.getId().getTags().size() == 2);
            assertThat(onlyOne("inventory", ConnectivityState.IDLE)).isTrue();

            SimpleServiceGrpc.newBlockingStub(channel).unaryRpc(SimpleRequest.getDefaultInstance());
            await().atMost(Duration.ofSeconds(5)).until(() -> onlyOne("inventory", ConnectivityState.READY));

            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(5)).until(() -> onlyOne("inventory", ConnectivityState.SHUTDOWN));

            meter.close();
            assertThat(registry.find("grpc.client.channel.state").gauges()).isEmpty();
        }
    }

    @Test
    void pollReadsTheSupplierOnEveryScrape() {
        AtomicReference<ConnectivityState> state = new AtomicReference<>();
        ChannelStateMeter.poll(registry, "orders", state::get);
        assertThat(values("orders").values()).containsOnly(0.0);
        state.set(ConnectivityState.TRANSIENT_FAILURE);
        assertThat(onlyOne("orders", ConnectivityState.TRANSIENT_FAILURE)).isTrue();
        state.set(ConnectivityState.CONNECTING);
        assertThat(onlyOne("orders", ConnectivityState.CONNECTING)).isTrue();
    }
}
