package io.github.grpcretry.testing;

import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A raw HTTP/2 server socket on loopback (Netty's frame codec, one event loop), for test peers that answer gRPC
 * streams frame by frame: {@link RefusingHttp2Server}, and the hostile peer of the engine's side-by-side tests.
 */
public final class LoopbackHttp2 implements AutoCloseable {

    private final EventLoopGroup group = new NioEventLoopGroup(1);
    private final Channel server;

    /** Binds an ephemeral port; each connection gets the frame codec and then a handler from {@code handlers}. */
    public LoopbackHttp2(Supplier<ChannelHandler> handlers) throws InterruptedException {
        server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(Http2FrameCodecBuilder.forServer().build(), handlers.get());
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    /** The address a channel builder's {@code forTarget} takes. */
    public String target() {
        return "127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
