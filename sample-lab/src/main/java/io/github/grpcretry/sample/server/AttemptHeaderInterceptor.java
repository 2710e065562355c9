package io.github.grpcretry.sample.server;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Puts the {@code grpc-previous-rpc-attempts} request header into the gRPC Context for the service,
 * and lets the service ask for response headers to go out before a failure (which commits the call
 * on an A6 client, so it is not retried).
 */
public class AttemptHeaderInterceptor implements ServerInterceptor {

    static final Metadata.Key<String> PREVIOUS_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);
    private static final Context.Key<Integer> PREVIOUS = Context.key("previous-attempts");
    private static final Context.Key<AtomicBoolean> HEADERS_FIRST = Context.key("headers-before-close");

    /** The header's value for the current call, -1 when absent or malformed. */
    static int previousAttempts() {
        Integer v = PREVIOUS.get();
        return v == null ? -1 : v;
    }

    static void requestHeadersBeforeClose() {
        AtomicBoolean flag = HEADERS_FIRST.get();
        if (flag != null) {
            flag.set(true);
        }
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        int previous = -1;
        String raw = headers.get(PREVIOUS_ATTEMPTS);
        if (raw != null) {
            try {
                previous = Integer.parseInt(raw);
            } catch (NumberFormatException ignored) {
                previous = -1;
            }
        }
        AtomicBoolean headersFirst = new AtomicBoolean();
        ServerCall<Q, R> wrapped = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            private boolean headersSent;

            @Override
            public void sendHeaders(Metadata responseHeaders) {
                headersSent = true;
                super.sendHeaders(responseHeaders);
            }

            @Override
            public void close(Status status, Metadata trailers) {
                if (!status.isOk() && headersFirst.get() && !headersSent) {
                    sendHeaders(new Metadata());
                }
                super.close(status, trailers);
            }
        };
        Context ctx = Context.current().withValues(PREVIOUS, previous, HEADERS_FIRST, headersFirst);
        return Contexts.interceptCall(ctx, wrapped, headers, next);
    }
}
