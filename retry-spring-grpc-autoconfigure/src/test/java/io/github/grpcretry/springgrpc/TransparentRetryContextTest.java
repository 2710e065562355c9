package io.github.grpcretry.springgrpc;

import static io.github.grpcretry.springgrpc.testing.GrpcClientContext.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.grpcretry.spring.report.RetryStatistics;
import io.github.grpcretry.springgrpc.testing.GrpcClientContext;
import io.github.grpcretry.testing.RefusingHttp2Server;
import io.github.grpcretry.testing.ServiceConfigResolverProvider;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import org.junit.jupiter.api.Test;

/**
 * The interceptor engine's channels keep grpc-java's transparent retry while grpc-java's own retry is
 * capped at one attempt and the name resolver supplies a retry policy of 5 attempts: a stream the server
 * refuses ({@code RST_STREAM REFUSED_STREAM}, never processed) is sent again by grpc-java inside the
 * engine's first attempt, and the engine's 3 attempts are all the server sees besides it.
 */
class TransparentRetryContextTest {

    @Test
    void aRefusedStreamIsRetriedTransparentlyUnderTheEnginesAttempts() throws Exception {
        try (RefusingHttp2Server server = new RefusingHttp2Server();
                ServiceConfigResolverProvider resolver = ServiceConfigResolverProvider.register("svcconfig-transparent",
                        Integer.parseInt(server.target().substring(server.target().lastIndexOf(':') + 1)),
                        ServiceConfigResolverProvider.retryPolicy(SimpleServiceGrpc.SERVICE_NAME, 5))) {
            server.script(n -> n == 1 ? new RefusingHttp2Server.Refuse() : new RefusingHttp2Server.Fail(Status.Code.UNAVAILABLE));
            String m = "grpc.retry.clients.svc.service-config.method[0].";
            // The entry names the service the resolver's policy names, so the entry's 3 attempts win (an entry
            // without a name would leave the resolver's more specific one running: 5 attempts).
            try (GrpcClientContext client = GrpcClientContext.start("spring.grpc.client.channel.svc.target=" + resolver.target(),
                    m + "name[0].service=" + SimpleServiceGrpc.SERVICE_NAME, m + "retry.max-attempts=3", m + "retry.initial-backoff=1ms", m + "retry.max-backoff=2ms",
                    m + "retry.backoff-multiplier=2", m + "retry.retryable-status-codes=UNAVAILABLE")) {
                StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                        () -> client.stub("svc").unaryRpc(request("transparent")));
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                // Stream 1 refused and re-sent transparently (stream 2) within attempt 1; attempts 2 and 3 are
                // streams 3 and 4. Without transparent retry the call would end after stream 1's refusal
                // counted as a failed attempt (3 streams); with grpc-java retrying as well, 15.
                assertThat(server.streams()).isEqualTo(4);
                assertThat(client.bean(RetryStatistics.class).counts("svc").attempts()).isEqualTo(3);
            }
        }
    }
}
