package io.github.grpcretry.attempt;

import io.github.grpcretry.testing.LoopbackHttp2;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2DataFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Error;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameStream;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2HeadersFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ResetFrame;
import io.grpc.netty.shaded.io.netty.util.ReferenceCountUtil;
import io.grpc.testing.protobuf.SimpleResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A raw HTTP/2 server on loopback (Netty frame codec) that answers each gRPC stream the way a script
 * says, byte by byte: trailers-only or headers then trailers with any header values (repeated, blank, junk), RST_STREAM
 * with any code, GOAWAY. It exists to send what no well-behaved grpc-java server sends. Streams are numbered from 1 in
 * the order their headers arrive; it records each stream's request headers and whether the client reset it.
 */
final class HostileHttp2Server implements AutoCloseable {

    /** What the server does with stream {@code n} (1-based), given its request headers. */
    interface Script {
        void answer(int n, Http2Headers request, Reply reply);
    }

    /** The frames the script may write on one stream. */
    static final class Reply {
        final ChannelHandlerContext ctx;
        final Http2FrameStream stream;

        Reply(ChannelHandlerContext ctx, Http2FrameStream stream) {
            this.ctx = ctx;
            this.stream = stream;
        }

        static Http2Headers responseHeaders() {
            return new DefaultHttp2Headers().status("200").set("content-type", "application/grpc");
        }

        /** Trailers-only: {@code :status 200}, content-type and these headers (grpc-status among them), end of stream. */
        void trailersOnly(Http2Headers extra) {
            Http2Headers h = responseHeaders();
            h.add(extra);
            ctx.writeAndFlush(new DefaultHttp2HeadersFrame(h, true).stream(stream));
        }

        void headers(Http2Headers extra) {
            Http2Headers h = responseHeaders();
            h.add(extra);
            ctx.writeAndFlush(new DefaultHttp2HeadersFrame(h, false).stream(stream));
        }

        void message(String text) {
            byte[] body = SimpleResponse.newBuilder().setResponseMessage(text).build().toByteArray();
            ByteBuf b = Unpooled.buffer(5 + body.length);
            b.writeByte(0).writeInt(body.length).writeBytes(body);
            ctx.writeAndFlush(new DefaultHttp2DataFrame(b, false).stream(stream));
        }

        void trailers(Http2Headers trailers) {
            ctx.writeAndFlush(new DefaultHttp2HeadersFrame(trailers, true).stream(stream));
        }

        /** A plain answer: headers, one message, OK. */
        void ok(String text) {
            headers(new DefaultHttp2Headers());
            message(text);
            trailers(status(0));
        }

        void rst(Http2Error code) {
            ctx.writeAndFlush(new DefaultHttp2ResetFrame(code).stream(stream));
        }

        /** GOAWAY with {@code error}, the last stream processed being this one, minus {@code back} streams. */
        void goAway(Http2Error error, int back) {
            DefaultHttp2GoAwayFrame f = new DefaultHttp2GoAwayFrame(error);
            f.setExtraStreamIds(0);
            ctx.writeAndFlush(f);
        }

        void closeConnection() {
            ctx.channel().close();
        }
    }

    static Http2Headers status(int code, String... pairs) {
        Http2Headers h = new DefaultHttp2Headers().set("grpc-status", String.valueOf(code));
        for (int i = 0; i < pairs.length; i += 2) {
            h.add(pairs[i], pairs[i + 1]);
        }
        return h;
    }

    private final LoopbackHttp2 server;
    final AtomicInteger streams = new AtomicInteger();
    final AtomicInteger connections = new AtomicInteger();
    final List<Http2Headers> requests = new CopyOnWriteArrayList<>();
    final List<Integer> resetByClient = new CopyOnWriteArrayList<>();
    private volatile Script script = (n, req, r) -> r.ok("ok");

    HostileHttp2Server() throws InterruptedException {
        server = new LoopbackHttp2(() -> {
            connections.incrementAndGet();
            return new Handler();
        });
    }

    HostileHttp2Server script(Script s) {
        this.script = s;
        return this;
    }

    void reset() {
        streams.set(0);
        requests.clear();
        resetByClient.clear();
    }

    String target() {
        return server.target();
    }

    @Override
    public void close() {
        server.close();
    }

    private final class Handler extends ChannelInboundHandlerAdapter {
        private final java.util.Map<Integer, Integer> numbers = new java.util.HashMap<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof Http2HeadersFrame headers && headers.stream() != null
                        && headers.headers().path() != null) {
                    int n = streams.incrementAndGet();
                    numbers.put(headers.stream().id(), n);
                    requests.add(headers.headers());
                    script.answer(n, headers.headers(), new Reply(ctx, headers.stream()));
                } else if (msg instanceof Http2ResetFrame rst && rst.stream() != null) {
                    Integer n = numbers.get(rst.stream().id());
                    if (n != null) {
                        resetByClient.add(n);
                    }
                } else if (msg instanceof Http2DataFrame) {
                    // request bodies are not read
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
