package io.github.grpcretry.testing;

import io.grpc.Status;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Error;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameStream;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2HeadersFrame;
import io.grpc.netty.shaded.io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * A plain HTTP/2 server on loopback that speaks just enough of the gRPC wire protocol to answer
 * unary calls from a script, stream by stream: refuse the stream ({@code RST_STREAM REFUSED_STREAM},
 * which a gRPC client treats as "never processed" and retries transparently), answer Trailers-Only
 * with a status, or answer OK with one empty message. It exists because no real gRPC server refuses
 * streams on demand, and transparent retries can only be observed when one does.
 */
public final class RefusingHttp2Server implements AutoCloseable {

    /** What to do with the n-th stream (1-based). */
    public sealed interface Answer permits Refuse, Fail, Ok {
    }

    public record Refuse() implements Answer {
    }

    public record Fail(Status.Code code) implements Answer {
    }

    public record Ok() implements Answer {
    }

    private final LoopbackHttp2 server;
    private final AtomicInteger streams = new AtomicInteger();
    private final List<String> paths = new CopyOnWriteArrayList<>();
    private volatile IntFunction<Answer> script = n -> new Ok();

    public RefusingHttp2Server() throws InterruptedException {
        server = new LoopbackHttp2(Handler::new);
    }

    public RefusingHttp2Server script(IntFunction<Answer> script) {
        this.script = script;
        return this;
    }

    /** Streams received so far (refused ones included). */
    public int streams() {
        return streams.get();
    }

    public List<String> paths() {
        return List.copyOf(paths);
    }

    public String target() {
        return server.target();
    }

    @Override
    public void close() {
        server.close();
    }

    private final class Handler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof Http2HeadersFrame headers && headers.stream() != null
                        && headers.headers().path() != null) {
                    paths.add(headers.headers().path().toString());
                    answer(ctx, headers.stream(), script.apply(streams.incrementAndGet()));
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        private void answer(ChannelHandlerContext ctx, Http2FrameStream stream, Answer answer) {
            if (answer instanceof Refuse) {
                ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.REFUSED_STREAM).stream(stream));
            } else if (answer instanceof Fail fail) {
                Http2Headers h = responseHeaders().set("grpc-status", String.valueOf(fail.code().value()))
                        .set("grpc-message", "scripted");
                ctx.writeAndFlush(new DefaultHttp2HeadersFrame(h, true).stream(stream));
            } else {
                ctx.write(new DefaultHttp2HeadersFrame(responseHeaders(), false).stream(stream));
                // one message: not compressed, length 0 (an empty protobuf)
                ctx.write(new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(new byte[5]), false).stream(stream));
                ctx.writeAndFlush(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().set("grpc-status", "0"), true)
                        .stream(stream));
            }
        }

        private Http2Headers responseHeaders() {
            return new DefaultHttp2Headers().status("200").set("content-type", "application/grpc");
        }
    }
}
