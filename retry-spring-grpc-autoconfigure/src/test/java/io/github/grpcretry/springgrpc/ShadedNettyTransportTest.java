package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link NettyTransportContract} on grpc-java's shaded Netty, which Spring Boot prefers when an application
 * has it. Runs in the pom's {@code shaded-netty} surefire execution, whose class path has
 * {@code grpc-netty-shaded} (the default execution's does not, so the other tests run on grpc-netty as a
 * Spring Boot 4.1 application does by default); that execution sets {@code grpcretry.shaded-netty}.
 */
class ShadedNettyTransportTest extends NettyTransportContract {

    static final boolean SHADED_EXECUTION = Boolean.getBoolean("grpcretry.shaded-netty");

    @BeforeAll
    static void onlyInTheShadedExecution() {
        assumeTrue(SHADED_EXECUTION, "runs in the shaded-netty surefire execution (./mvnw verify runs it)");
    }

    @Override
    String channelFactory() {
        return "ShadedNettyGrpcChannelFactory";
    }

    @Override
    String otherChannelFactory() {
        return "NettyGrpcChannelFactory";
    }

    @Test
    void theShadedNettyIsOnThisClassPath() throws Exception {
        assertThat(Class.forName("io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder")).isNotNull();
    }
}
