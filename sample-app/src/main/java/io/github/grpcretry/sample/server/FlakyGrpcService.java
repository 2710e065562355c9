package io.github.grpcretry.sample.server;

import net.devh.boot.grpc.server.service.GrpcService;

/** The flaky service (plain Java, shared with the Spring Boot 4.1 sample) as net.devh's server serves it. */
@GrpcService(interceptors = AttemptHeaderInterceptor.class)
public class FlakyGrpcService extends FlakyService {

    public FlakyGrpcService(ArrivalLog arrivals, FaultScript faults) {
        super(arrivals, faults);
    }
}
