package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link NettyTransportContract} on grpc-netty, the Netty that Spring Boot's gRPC client starter brings. */
class GrpcNettyTransportTest extends NettyTransportContract {

    /** Not in the shaded-netty execution (which runs it too when -Dtest names it): Spring Boot would pick the shaded Netty there. */
    @BeforeAll
    static void notInTheShadedExecution() {
        assumeFalse(ShadedNettyTransportTest.SHADED_EXECUTION, "the default surefire execution runs it");
    }

    @Override
    String channelFactory() {
        return "NettyGrpcChannelFactory";
    }

    @Override
    String otherChannelFactory() {
        return "ShadedNettyGrpcChannelFactory";
    }

    /** This execution's class path has no shaded Netty (the pom keeps it for {@link ShadedNettyTransportTest}). */
    @Test
    void theShadedNettyIsNotOnThisClassPath() {
        assertThatThrownBy(() -> Class.forName("io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder"))
                .isInstanceOf(ClassNotFoundException.class);
    }
}
