package io.github.grpcretry.sample.lab;

import io.github.grpcretry.attempt.StreamResumption;
import io.github.grpcretry.sample.proto.FeedItem;
import io.github.grpcretry.sample.proto.FeedRequest;
import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.grpc.MethodDescriptor;

/**
 * Resumes {@code sample.flaky.Flaky/Feed}, a stream keyed by an offset, after the last item the application
 * received: the same request, from the next offset. The samples of both Spring Boot lines declare it as a bean;
 * lab R8 runs it.
 */
public final class FeedResumption implements StreamResumption<FeedRequest, FeedItem> {

    @Override
    public MethodDescriptor<FeedRequest, FeedItem> method() {
        return FlakyGrpc.getFeedMethod();
    }

    @Override
    public Resumer<FeedRequest, FeedItem> start(FeedRequest request) {
        return new Resumer<>() {
            private long next = request.getFrom();

            @Override
            public void delivered(FeedItem item) {
                next = item.getOffset() + 1;
            }

            @Override
            public FeedRequest resumeRequest() {
                return request.toBuilder().setFrom(next).build();
            }
        };
    }
}
