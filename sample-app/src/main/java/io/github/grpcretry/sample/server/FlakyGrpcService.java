package io.github.grpcretry.sample.server;

import net.devh.boot.grpc.server.service.GrpcService;

/**
 * The flaky service (plain Java, shared with the Spring Boot 4.1 sample) as net.devh's server serves it:
 * the demo's backend, in queue mode with the application's {@link QueueingBackend}.
 */
@GrpcService(interceptors = AttemptHeaderInterceptor.class)
public class FlakyGrpcService extends FlakyService {

    public FlakyGrpcService(ArrivalLog arrivals, FaultScript faults, QueueingBackend queue) {
        super(arrivals, faults, queue);
    }
}
