package io.github.grpcretry.autoconfigure.deadline;

import io.grpc.Context;
import org.springframework.core.task.TaskDecorator;

/**
 * Runs each task in the gRPC {@code Context} current when it was submitted, so {@code @Async} methods
 * and Spring task executors keep the deadline and cancellation of the inbound call (or HTTP request)
 * that submitted them.
 */
public class GrpcContextTaskDecorator implements TaskDecorator {

    @Override
    public Runnable decorate(Runnable runnable) {
        return Context.current().wrap(runnable);
    }
}
