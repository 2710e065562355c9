package io.github.grpcretry.spring.channel;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The connect timeout both lines apply to a channel's builder ({@link ChannelSetup#applyConnectTimeout}). */
class ChannelSetupConnectTimeoutTest {

    @Test
    void connectTimeoutIsSetOnNettyBuildersOnly() {
        assertThat(ChannelSetup.applyConnectTimeout(NettyChannelBuilder.forTarget("127.0.0.1:1"),
                Duration.ofMillis(1500))).isTrue();
        assertThat(ChannelSetup.applyConnectTimeout(InProcessChannelBuilder.forName("x"),
                Duration.ofMillis(1500))).isFalse();
        assertThat(ChannelSetup.applyConnectTimeout(NettyChannelBuilder.forTarget("127.0.0.1:1"), null))
                .isFalse();
    }
}
