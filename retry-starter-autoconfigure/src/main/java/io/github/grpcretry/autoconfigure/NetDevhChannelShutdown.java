package io.github.grpcretry.autoconfigure;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.devh.boot.grpc.client.channelfactory.GrpcChannelFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.util.ClassUtils;

/**
 * The shut-down of net.devh's channels, for the interceptor engine (docs/design.md §18). net.devh keeps each
 * {@link ManagedChannel} inside its {@link GrpcChannelFactory} (the application gets it wrapped in the global
 * interceptors, a channel configurer sees only its builder) and shuts its channels down only when the factory
 * closes, at the context's shut-down. So every factory bean is wrapped in a JDK proxy (over its interfaces) that notes when its
 * {@code close()} begins, and each channel's engine is told of {@link #channel its view}: a
 * {@code ManagedChannel} that is shut down from then on. A call waiting for a backoff then ends at once
 * {@code UNAVAILABLE} "Channel shutdown invoked" instead of when its backoff runs out.
 */
final class NetDevhChannelShutdown implements BeanPostProcessor {

    private final List<Runnable> onShutdown = new ArrayList<>();
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile boolean shutdown;

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof GrpcChannelFactory)) {
            return bean;
        }
        // a JDK proxy over every interface of the factory, as spring-aop would make it, without loading spring-aop
        Class<?>[] interfaces = ClassUtils.getAllInterfaces(bean);
        return Proxy.newProxyInstance(ClassUtils.getDefaultClassLoader(), interfaces, (proxy, method, args) -> {
            boolean close = method.getName().equals("close") && method.getParameterCount() == 0;
            if (close) {
                shutDown();
            }
            try {
                return method.invoke(bean, args);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                throw cause == null ? e : cause;
            } finally {
                if (close) {
                    closed.countDown();
                }
            }
        });
    }

    private void shutDown() {
        List<Runnable> run;
        synchronized (this) {
            if (shutdown) {
                return;
            }
            shutdown = true;
            run = new ArrayList<>(onShutdown);
            onShutdown.clear();
        }
        run.forEach(Runnable::run);
    }

    /** Runs {@code callback} once the factory's close begins (at once when it has begun). */
    private void whenShutDown(Runnable callback) {
        synchronized (this) {
            if (!shutdown) {
                onShutdown.add(callback);
                return;
            }
        }
        callback.run();
    }

    /** The channel {@code name} as far as its shut-down goes (what the engine is told of). */
    ManagedChannel channel(String name) {
        return new View(name);
    }

    /**
     * A net.devh channel seen from outside its factory: shut down once the factory's close began, terminated
     * once it returned; its state is {@code SHUTDOWN} from then on, {@code IDLE} (not known here) before. It
     * carries no calls: the engine's calls go down the channel's own interceptor chain.
     */
    private final class View extends ManagedChannel {
        private final String name;

        View(String name) {
            this.name = name;
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
            throw new UnsupportedOperationException("net.devh channel " + name + ": calls go through its factory's channel");
        }

        @Override
        public String authority() {
            return name;
        }

        @Override
        public ManagedChannel shutdown() {
            throw new UnsupportedOperationException("net.devh channel " + name + " is shut down by its factory's close()");
        }

        @Override
        public ManagedChannel shutdownNow() {
            return shutdown();
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return closed.getCount() == 0;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return closed.await(timeout, unit);
        }

        @Override
        public ConnectivityState getState(boolean requestConnection) {
            return shutdown ? ConnectivityState.SHUTDOWN : ConnectivityState.IDLE;
        }

        @Override
        public void notifyWhenStateChanged(ConnectivityState source, Runnable callback) {
            if (source == ConnectivityState.SHUTDOWN) {
                return; // no change follows SHUTDOWN
            }
            whenShutDown(callback);
        }

        @Override
        public String toString() {
            return "NetDevhChannelShutdown.View[" + name + "]";
        }
    }
}
