package io.github.grpcretry.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.attempt.RetryEventListener;
import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.spring.config.UnknownProperties;
import io.github.grpcretry.spring.report.RetryStatistics;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * The Spring glue both lines import, in real application contexts (ApplicationContextRunner). These
 * tests run on Spring Boot 3.5.7 here and on 4.1.2 in retry-spring-boot4-test.
 */
class SharedSpringGlueTest {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnGrpcRetryEnabled
    static class Switched {
        @Bean
        String switchedOn() {
            return "on";
        }
    }

    @ConfigurationProperties("test.codes")
    record Codes(Set<Status.Code> retryable) {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(Codes.class)
    @Import(StatusCodeBinding.class)
    static class CodesConfiguration {
    }

    /** An application's own properties bound inside the starter's tree. */
    @ConfigurationProperties("grpc.retry.team")
    record TeamProperties(String owner) {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(TeamProperties.class)
    static class TeamConfiguration {
    }

    static final class Recording implements RetryEventListener {
        final List<String> calls = new CopyOnWriteArrayList<>();

        @Override
        public void callStarted(CallTarget target) {
            calls.add(target.channel());
        }
    }

    static final class Throwing implements RetryEventListener {
        @Override
        public void callStarted(CallTarget target) {
            throw new IllegalStateException("listener bug");
        }
    }

    @Test
    void theSwitchIsOnUnlessGrpcRetryEnabledIsFalse() {
        ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Switched.class);
        runner.run(context -> assertThat(context).hasBean("switchedOn"));
        runner.withPropertyValues("grpc.retry.enabled=true").run(context -> assertThat(context).hasBean("switchedOn"));
        runner.withPropertyValues("grpc.retry.enabled=false").run(context -> assertThat(context).doesNotHaveBean("switchedOn"));
    }

    @Test
    void statusCodesBindByNameInAnyCaseAndByNumber() {
        new ApplicationContextRunner().withUserConfiguration(CodesConfiguration.class)
                .withPropertyValues("test.codes.retryable=unavailable,RESOURCE_EXHAUSTED,4")
                .run(context -> assertThat(context.getBean(Codes.class).retryable()).containsExactlyInAnyOrder(
                        Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED, Status.Code.DEADLINE_EXCEEDED));
    }

    @Test
    void theCompositeListenerHearsEveryListenerPastAThrowingOne() {
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryEventsConfiguration.class)
                .withBean("throwing", Throwing.class, Throwing::new)
                .withBean("recording", Recording.class, Recording::new)
                .run(context -> {
                    RetryEventListener engineListener = context.getBean(RetryEventListener.class);
                    assertThat(engineListener).isSameAs(context.getBean(GrpcRetryEventsConfiguration.EVENT_LISTENER_BEAN))
                            .isNotSameAs(context.getBean(Recording.class));
                    engineListener.callStarted(new CallTarget("inventory", "shop.Inventory/Reserve"));
                    assertThat(context.getBean(Recording.class).calls).containsExactly("inventory");
                    assertThat(context.getBean(RetryStatistics.class).counts("inventory").calls()).isEqualTo(1);
                });
    }

    @Test
    void anApplicationsCompositeBeanIsTakenApartSoEachListenerHearsAnEventOnce() {
        Recording inside = new Recording();
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryEventsConfiguration.class)
                .withBean("recording", Recording.class, Recording::new)
                .withBean("applicationComposite", RetryEventListener.class,
                        () -> RetryEventListener.composite(List.of(inside)))
                .run(context -> {
                    RetryEventListener engineListener = context.getBean(RetryEventListener.class);
                    assertThat(engineListener).isSameAs(context.getBean(GrpcRetryEventsConfiguration.EVENT_LISTENER_BEAN));
                    engineListener.callStarted(new CallTarget("inventory", "shop.Inventory/Reserve"));
                    assertThat(inside.calls).containsExactly("inventory");
                    assertThat(context.getBean(Recording.class).calls).containsExactly("inventory");
                    assertThat(context.getBean(RetryStatistics.class).counts("inventory").calls()).isEqualTo(1);
                });
    }

    @Test
    void theUsersOwnListenerBeanBacksTheCompositeOff() {
        new ApplicationContextRunner().withUserConfiguration(GrpcRetryEventsConfiguration.class)
                .withBean(GrpcRetryEventsConfiguration.EVENT_LISTENER_BEAN, RetryEventListener.class, Recording::new)
                .run(context -> assertThat(context.getBean(GrpcRetryEventsConfiguration.EVENT_LISTENER_BEAN))
                        .isInstanceOf(Recording.class));
    }

    @Test
    void theFailureReportNamesThePathValueAndOrigin() {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("test-source",
                Map.of("grpc.retry.clients.inventory.max-attempts-cap", "0")));
        InvalidRetryConfigurationException failure = new InvalidRetryConfigurationException(List.of(
                new ConfigProblem("grpc.retry.clients.inventory.max-attempts-cap", "0", "must be at least 2", "set 2 or more")));

        FailureAnalysis analysis = new InvalidRetryConfigurationFailureAnalyzer(environment).analyze(failure);

        assertThat(analysis.getDescription()).contains("grpc.retry.clients.inventory.max-attempts-cap")
                .contains("must be at least 2").contains("test-source");
        assertThat(analysis.getAction()).contains("set 2 or more");
    }

    @Test
    void propertyKeysReadEveryKeyInScopeWithItsOrigin() {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("test-source",
                Map.of("grpc.retry.clients.inventory.max-atempts-cap", "3", "other.key", "x")));
        UnknownProperties check = UnknownProperties.builder().scope("grpc.retry", Codes.class).build();

        List<UnknownProperties.Key> keys = PropertyKeys.keys(environment, check);

        assertThat(keys).extracting(UnknownProperties.Key::name).contains("grpc.retry.clients.inventory.max-atempts-cap")
                .doesNotContain("other.key");
    }

    @Test
    void unknownKeyCheckNamesATypoWithTheClosestKey() {
        new ApplicationContextRunner()
                .withPropertyValues("grpc.retry.clients.inventory.max-atempts-cap=3", "grpc.retry.engine=native")
                .run(context -> {
                    List<ConfigProblem> problems = PropertyKeys.unknownKeyProblems(context.getEnvironment(), context,
                            scopes -> scopes, false, warning -> { });

                    assertThat(problems).extracting(ConfigProblem::path)
                            .containsExactly("grpc.retry.clients.inventory.max-atempts-cap");
                    assertThat(problems.get(0).fix()).contains("grpc.retry.clients.inventory.max-attempts-cap");
                });
    }

    @Test
    void unknownKeyCheckLeavesKeysOfAnAppsOwnPropertiesBean() {
        new ApplicationContextRunner().withUserConfiguration(TeamConfiguration.class)
                .withPropertyValues("grpc.retry.team.owner=payments", "grpc.retry.team.ownr=x")
                .run(context -> {
                    List<ConfigProblem> problems = PropertyKeys.unknownKeyProblems(context.getEnvironment(), context,
                            scopes -> scopes, false, warning -> { });

                    assertThat(problems).extracting(ConfigProblem::path).containsExactly("grpc.retry.team.ownr");
                    assertThat(problems.get(0).fix()).contains("grpc.retry.team.owner");
                });
    }

    @Test
    void validKeysAreCheckedWithoutListingTheBeanDefinitions() {
        new ApplicationContextRunner(() -> new AnnotationConfigApplicationContext(new CountingBeanFactory()))
                .withPropertyValues("grpc.retry.clients.inventory.max-attempts-cap=3", "grpc.retry.engine=native")
                .run(context -> {
                    CountingBeanFactory beans = (CountingBeanFactory) context.getBeanFactory();
                    beans.listed = 0;

                    List<ConfigProblem> problems = PropertyKeys.unknownKeyProblems(context.getEnvironment(), context,
                            scopes -> scopes, false, warning -> { });

                    assertThat(problems).isEmpty();
                    assertThat(beans.listed).isZero();
                });
    }

    /** A bean factory that counts how often its bean definitions are listed. */
    static final class CountingBeanFactory extends DefaultListableBeanFactory {
        int listed;

        @Override
        public String[] getBeanDefinitionNames() {
            listed++;
            return super.getBeanDefinitionNames();
        }
    }
}
