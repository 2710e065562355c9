package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.attempt.RetryScheduler;
import io.github.grpcretry.limiter.RetryLimiterRegistry;
import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.spring.channel.ChannelSetup;
import io.github.grpcretry.spring.reload.PolicySources;
import io.github.grpcretry.spring.report.ChannelStateSource;
import io.github.grpcretry.spring.report.RetryReport;
import io.github.grpcretry.spring.report.RetryStatistics;
import io.grpc.ManagedChannel;
import java.lang.reflect.Proxy;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanNotOfRequiredTypeException;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.grpc.client.GrpcChannelBuilderCustomizer;
import org.springframework.grpc.client.GrpcChannelFactory;
import org.springframework.grpc.client.NettyGrpcChannelFactory;

/** {@link GrpcRetryAutoConfiguration} in an ApplicationContextRunner, with Spring Boot's gRPC client. */
class GrpcRetryAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, GrpcClientAutoConfiguration.class,
                    GrpcRetryAutoConfiguration.class));

    @Test
    void enabledRegistersTheEngineAndTheChannelHooks() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(ChannelRetryConfigs.class).hasSingleBean(RetryReport.class)
                    .hasSingleBean(PolicySources.class).hasSingleBean(GrpcRetryChannelCustomizer.class)
                    .hasSingleBean(GrpcRetryServiceConfigCustomizer.class).hasSingleBean(GrpcRetryClientInterceptor.class)
                    .hasSingleBean(SpringGrpcChannelStates.class).hasSingleBean(RetryLimiterRegistry.class)
                    .hasSingleBean(RetryScheduler.class).hasSingleBean(RetryStatistics.class);
            assertThat(context).getBean(GrpcRetryAutoConfiguration.EVENT_LISTENER_BEAN)
                    .isInstanceOf(RetryEventListener.class).isNotSameAs(context.getBean(RetryStatistics.class));
        });
    }

    /**
     * Each Spring gRPC channel factory is seen through a JDK proxy over its interfaces (not a class-based
     * spring-aop proxy): it is still the {@code GrpcChannelFactory} and {@code DisposableBean} Spring gRPC uses,
     * the channels it builds reach the channel states, and its {@code destroy()} still shuts them down.
     */
    @Test
    void channelFactoriesAreInterfaceProxiesThatReportTheirChannels() {
        runner.run(context -> {
            String[] names = context.getBeanNamesForType(GrpcChannelFactory.class);
            assertThat(names).containsExactlyInAnyOrder("nettyGrpcChannelFactory", "inProcessGrpcChannelFactory");
            for (String name : names) {
                Object factory = context.getBean(name);
                assertThat(Proxy.isProxyClass(factory.getClass())).as(name).isTrue();
                assertThat(factory).as(name).isInstanceOf(DisposableBean.class);
            }
            ManagedChannel channel = context.getBean("inProcessGrpcChannelFactory", GrpcChannelFactory.class)
                    .createChannel("in-process:inv");
            assertThat(context.getBean(SpringGrpcChannelStates.class).states()).containsKey("in-process:inv");
            context.close();
            assertThat(channel.isShutdown()).as("the factory's destroy() reached it through the proxy").isTrue();
        });
    }

    /** What docs/spring-boot-4.md says of the proxy: a factory injected by its class is not found. */
    @Test
    void aFactoryInjectedByItsClassIsNotFound() {
        runner.withBean(NeedsTheNettyFactory.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOfAny(NoSuchBeanDefinitionException.class,
                    BeanNotOfRequiredTypeException.class).hasMessageContaining("NettyGrpcChannelFactory");
        });
        runner.withBean(NeedsAFactory.class).run(context -> assertThat(context).hasNotFailed());
    }

    record NeedsTheNettyFactory(NettyGrpcChannelFactory factory) {
    }

    record NeedsAFactory(@Qualifier("nettyGrpcChannelFactory")
            GrpcChannelFactory factory) {
    }

    @Test
    void disabledRegistersNothing() {
        runner.withPropertyValues("grpc.retry.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(GrpcRetryAutoConfiguration.class)
                    .doesNotHaveBean(ChannelRetryConfigs.class).doesNotHaveBean(GrpcRetryClientInterceptor.class)
                    .doesNotHaveBean(GrpcRetryChannelCustomizer.class).doesNotHaveBean(RetryScheduler.class);
        });
    }

    @Test
    void ownReportSourcesAndStatesBackTheStartersOff() {
        ChannelStateSource states = ChannelStateSource.NONE;
        PolicySources sources = new PolicySources(ChannelSetup.Engine.INTERCEPTOR, channel -> Set.of(), warning -> { });
        RetryReport report = new RetryReport(ChannelSetup.Engine.INTERCEPTOR, () -> null, () -> null, () -> null,
                () -> states);
        runner.withBean("ownStates", ChannelStateSource.class, () -> states)
                .withBean("ownSources", PolicySources.class, () -> sources)
                .withBean("ownReport", RetryReport.class, () -> report)
                .run(context -> {
                    assertThat(context).doesNotHaveBean(SpringGrpcChannelStates.class);
                    assertThat(context).getBean(PolicySources.class).isSameAs(sources);
                    assertThat(context).getBean(RetryReport.class).isSameAs(report);
                    assertThat(context).hasSingleBean(GrpcRetryClientInterceptor.class);
                });
    }

    @Test
    void withoutSpringGrpcClientNothingIsRegistered() {
        runner.withClassLoader(new FilteredClassLoader(GrpcChannelBuilderCustomizer.class)).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(GrpcRetryAutoConfiguration.Client.class)
                    .doesNotHaveBean(ChannelRetryConfigs.class);
        });
    }
}
