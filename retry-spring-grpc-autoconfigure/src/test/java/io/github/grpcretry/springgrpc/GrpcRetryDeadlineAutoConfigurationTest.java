package io.github.grpcretry.springgrpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.spring.GrpcDeadlineHttpRegistration;
import io.github.grpcretry.spring.web.GrpcDeadlineHttpFilter;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

/** {@link GrpcRetryAutoConfiguration} in (web) application context runners. */
class GrpcRetryDeadlineAutoConfigurationTest {

    private static final String HEADER = "grpc.retry.deadline.http.header=X-Request-Deadline";

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class));

    @Test
    void theHeaderPropertyRegistersTheHttpFilterEarly() {
        web.withPropertyValues(HEADER).run(context -> {
            assertThat(context).hasSingleBean(GrpcDeadlineHttpFilter.class);
            FilterRegistrationBean<?> registration = context.getBean(FilterRegistrationBean.class);
            assertThat(registration.getOrder()).isEqualTo(GrpcDeadlineHttpRegistration.HTTP_FILTER_ORDER);
            assertThat(context).hasBean("grpcContextThreadLocalAccessor");
        });
    }

    @Test
    void noHeaderPropertyNoFilter() {
        web.run(context -> assertThat(context).doesNotHaveBean(GrpcDeadlineHttpFilter.class)
                .hasBean("grpcContextThreadLocalAccessor"));
    }

    @Test
    void notAServletApplicationNoFilter() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(GrpcRetryAutoConfiguration.class))
                .withPropertyValues(HEADER)
                .run(context -> assertThat(context).doesNotHaveBean(GrpcDeadlineHttpFilter.class));
    }

    @Test
    void disabledRegistersNothing() {
        web.withPropertyValues(HEADER, "grpc.retry.enabled=false").run(context -> assertThat(context)
                .doesNotHaveBean(GrpcDeadlineHttpFilter.class).doesNotHaveBean("grpcContextThreadLocalAccessor"));
    }

    @Test
    void withoutContextPropagationTheFilterStays() {
        web.withPropertyValues(HEADER).withClassLoader(new FilteredClassLoader("io.micrometer.context"))
                .run(context -> assertThat(context).hasSingleBean(GrpcDeadlineHttpFilter.class)
                        .doesNotHaveBean("grpcContextThreadLocalAccessor"));
    }
}
