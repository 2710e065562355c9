package io.github.grpcretry.deadline;

import io.grpc.Context;
import io.micrometer.context.ThreadLocalAccessor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Carries the gRPC {@code Context} (its deadline, its cancellation and its values) across threads.
 * grpc-java propagates it only within a thread: a call made while serving an inbound call inherits
 * that call's deadline, but work handed to an executor does not. The wrappers here capture
 * {@link Context#current()} when a task is submitted and run the task in it, so deadlines reach the
 * downstream calls made there and {@code Context.current().isCancelled()} turns true there when the
 * inbound call is cancelled or its deadline passes.
 *
 * <p>For Micrometer context-propagation (Reactor's automatic context propagation, Spring's
 * {@code ContextPropagatingTaskDecorator}) register {@link #threadLocalAccessor()} (key
 * {@value #THREAD_LOCAL_KEY}) with {@code ContextRegistry}; the Spring Boot auto-configuration does.
 */
public final class GrpcContextPropagation {

    /** Key of the gRPC Context in Micrometer context-propagation. */
    public static final String THREAD_LOCAL_KEY = "grpc.context";

    private GrpcContextPropagation() {
    }

    /** An executor that runs each task in the gRPC Context current when it was submitted. */
    public static Executor wrap(Executor executor) {
        Objects.requireNonNull(executor, "executor");
        if (executor instanceof ExecutorService service) {
            return wrap(service);
        }
        if (executor instanceof ContextExecutor) {
            return executor;
        }
        return new ContextExecutor(executor);
    }

    /**
     * An executor service that runs each task (execute, submit, invokeAll, invokeAny) in the gRPC
     * Context current when it was submitted. Lifecycle methods go to {@code service}.
     */
    public static ExecutorService wrap(ExecutorService service) {
        Objects.requireNonNull(service, "service");
        if (service instanceof ContextExecutorService) {
            return service;
        }
        return new ContextExecutorService(service);
    }

    /** {@code task} bound to the gRPC Context current now. */
    public static Runnable wrapRunnable(Runnable task) {
        return Context.current().wrap(Objects.requireNonNull(task, "task"));
    }

    /** {@code task} bound to the gRPC Context current now. */
    public static <T> Callable<T> wrapCallable(Callable<T> task) {
        return Context.current().wrap(Objects.requireNonNull(task, "task"));
    }

    /** {@code supplier} bound to the gRPC Context current now (for {@code CompletableFuture.supplyAsync}). */
    public static <T> Supplier<T> wrapSupplier(Supplier<T> supplier) {
        Objects.requireNonNull(supplier, "supplier");
        Context context = Context.current();
        return () -> context.supply(supplier);
    }

    /**
     * A Micrometer context-propagation {@code ThreadLocalAccessor} for the gRPC Context. Only call
     * this when {@code io.micrometer:context-propagation} is on the classpath.
     */
    @SuppressWarnings("unchecked")
    public static ThreadLocalAccessor<Context> threadLocalAccessor() {
        // through Object: the checkcast runs only when called, so loading and verifying this class never
        // needs context-propagation on the class path
        Object accessor = new GrpcContextThreadLocalAccessor();
        return (ThreadLocalAccessor<Context>) accessor;
    }

    /**
     * Registers {@link #threadLocalAccessor()} with {@code ContextRegistry.getInstance()} (replacing
     * an accessor with the same key). Only call this when context-propagation is on the classpath.
     */
    public static void registerThreadLocalAccessor() {
        io.micrometer.context.ContextRegistry.getInstance().registerThreadLocalAccessor(threadLocalAccessor());
    }

    /** Whether io.micrometer:context-propagation is on the classpath of this class's loader. */
    public static boolean isContextPropagationPresent() {
        try {
            Class.forName("io.micrometer.context.ThreadLocalAccessor", false,
                    GrpcContextPropagation.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    static class ContextExecutor implements Executor {
        final Executor delegate;

        ContextExecutor(Executor delegate) {
            this.delegate = delegate;
        }

        @Override
        public void execute(Runnable command) {
            delegate.execute(Context.current().wrap(command));
        }

        @Override
        public String toString() {
            return "GrpcContextPropagation[" + delegate + "]";
        }
    }

    static final class ContextExecutorService extends ContextExecutor implements ExecutorService {
        private final ExecutorService service;

        ContextExecutorService(ExecutorService service) {
            super(service);
            this.service = service;
        }

        private static <T> List<Callable<T>> wrapAll(Collection<? extends Callable<T>> tasks) {
            Context context = Context.current();
            List<Callable<T>> out = new ArrayList<>(tasks.size());
            for (Callable<T> task : tasks) {
                out.add(context.wrap(task));
            }
            return out;
        }

        @Override
        public void shutdown() {
            service.shutdown();
        }

        @Override
        public List<Runnable> shutdownNow() {
            return service.shutdownNow();
        }

        @Override
        public boolean isShutdown() {
            return service.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return service.isTerminated();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return service.awaitTermination(timeout, unit);
        }

        @Override
        public <T> Future<T> submit(Callable<T> task) {
            return service.submit(Context.current().wrap(task));
        }

        @Override
        public <T> Future<T> submit(Runnable task, T result) {
            return service.submit(Context.current().wrap(task), result);
        }

        @Override
        public Future<?> submit(Runnable task) {
            return service.submit(Context.current().wrap(task));
        }

        @Override
        public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks) throws InterruptedException {
            return service.invokeAll(wrapAll(tasks));
        }

        @Override
        public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
                throws InterruptedException {
            return service.invokeAll(wrapAll(tasks), timeout, unit);
        }

        @Override
        public <T> T invokeAny(Collection<? extends Callable<T>> tasks)
                throws InterruptedException, ExecutionException {
            return service.invokeAny(wrapAll(tasks));
        }

        @Override
        public <T> T invokeAny(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
                throws InterruptedException, ExecutionException, TimeoutException {
            return service.invokeAny(wrapAll(tasks), timeout, unit);
        }
    }
}
