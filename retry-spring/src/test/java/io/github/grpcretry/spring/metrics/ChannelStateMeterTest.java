package io.github.grpcretry.spring.metrics;

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

    /**
     * A second channel of the same name (Spring gRPC builds one per createChannel) takes the name's gauges
     * over: they report the new channel, not the first one (two ChannelStateMeter.watch calls would leave
     * Micrometer's first registration, the first channel, in place).
     */
    @Test
    void aLaterChannelOfTheSameNameTakesItsGaugesOver() throws Exception {
        try (ScriptedServer server = ScriptedServer.start("state-meters");
             ChannelStateMeters meters = new ChannelStateMeters(registry)) {
            ManagedChannel first = InProcessChannelBuilder.forName("state-meters").build();
            ManagedChannel second = InProcessChannelBuilder.forName("state-meters").build();
            try {
                meters.watch("inventory", first);
                SimpleServiceGrpc.newBlockingStub(first).unaryRpc(SimpleRequest.getDefaultInstance());
                await().atMost(Duration.ofSeconds(5)).until(() -> onlyOne("inventory", ConnectivityState.READY));

                meters.watch("inventory", second);
                assertThat(registry.find("grpc.client.channel.state").gauges()).hasSize(5);
                assertThat(onlyOne("inventory", ConnectivityState.IDLE)).isTrue();

                // the first channel's shutdown no longer shows; the second's connection does
                first.shutdownNow();
                first.awaitTermination(5, TimeUnit.SECONDS);
                SimpleServiceGrpc.newBlockingStub(second).unaryRpc(SimpleRequest.getDefaultInstance());
                await().atMost(Duration.ofSeconds(5)).until(() -> onlyOne("inventory", ConnectivityState.READY));
                assertThat(meters.channels()).containsExactly("inventory");
            } finally {
                first.shutdownNow();
                second.shutdownNow();
            }
        }
        assertThat(registry.find("grpc.client.channel.state").gauges()).isEmpty();
    }

    @Test
    void pollRegistersANameOnce() {
        AtomicReference<ConnectivityState> state = new AtomicReference<>(ConnectivityState.CONNECTING);
        try (ChannelStateMeters meters = new ChannelStateMeters(registry)) {
            meters.poll("orders", state::get);
            meters.poll("orders", () -> ConnectivityState.SHUTDOWN);
            assertThat(registry.find("grpc.client.channel.state").gauges()).hasSize(5);
            assertThat(onlyOne("orders", ConnectivityState.CONNECTING)).isTrue();
        }
        assertThat(registry.find("grpc.client.channel.state").gauges()).isEmpty();
    }
}
