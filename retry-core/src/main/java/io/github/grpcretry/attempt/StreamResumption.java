package io.github.grpcretry.attempt;

import io.grpc.MethodDescriptor;
import org.jspecify.annotations.Nullable;

/**
 * How a server-streaming call continues after a break that came after its first response: the engine asks the
 * call's {@link Resumer} for a request that starts after what the application already received, and sends it as
 * a new attempt of the same call (the application sees one stream: one set of headers, the messages in order,
 * one close). Without one, a server stream that breaks after its commit ends with the break's status, as in
 * gRFC A6.
 *
 * <p>A resumption applies only to a {@link MethodDescriptor.MethodType#SERVER_STREAMING server-streaming}
 * method: it is the only kind where one request describes the whole stream, so a new request can describe what
 * remains of it.
 *
 * @param <ReqT> the method's request type
 * @param <RespT> the method's response type
 */
public interface StreamResumption<ReqT, RespT> {

    /** The server-streaming method this resumes. */
    MethodDescriptor<ReqT, RespT> method();

    /**
     * One resumer per call, made when the application sends its (one) request; a call that sends null (its
     * marshaller takes null) gets none, and a break ends it with its status.
     *
     * @param request the request the application sent
     */
    Resumer<ReqT, RespT> start(ReqT request);

    /**
     * What one call has delivered so far, and the request that would continue it. Called on the call's
     * callback thread, one method at a time.
     *
     * @param <ReqT> the method's request type
     * @param <RespT> the method's response type
     */
    interface Resumer<ReqT, RespT> {

        /** Every response the application received, in order (null where the method's marshaller parsed one to null). */
        void delivered(RespT response);

        /** The request that continues the stream after what was delivered; null: cannot resume. */
        @Nullable ReqT resumeRequest();
    }
}
