package io.github.grpcretry.springgrpc.testing;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;

/** Puts each inbound call's headers into its Context, for {@link ScriptedService}. */
public class HeaderCapture implements ServerInterceptor {
    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
            ServerCallHandler<ReqT, RespT> next) {
        return Contexts.interceptCall(Context.current().withValue(ScriptedService.HEADERS, headers), call, headers, next);
    }
}
