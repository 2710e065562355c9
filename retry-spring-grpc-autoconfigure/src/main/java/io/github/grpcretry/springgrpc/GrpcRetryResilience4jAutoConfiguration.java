package io.github.grpcretry.springgrpc;

import io.github.grpcretry.policy.ConfigProblem;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.resilience4j.Resilience4jRetryDeciderSource;
import io.github.resilience4j.retry.RetryRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The resilience4j bridge: when the application has a resilience4j {@link RetryRegistry} bean, a
 * channel's {@code grpc.retry.clients.<name>.resilience4j-retry} names the Retry instance that decides
 * for the channel's methods without a policy of their own. Every name is checked at start-up; a name
 * the registry does not hold stops start-up, named by its property.
 */
@AutoConfiguration(before = GrpcRetryAutoConfiguration.class)
@ConditionalOnClass(RetryRegistry.class)
@ConditionalOnBean(RetryRegistry.class)
public class GrpcRetryResilience4jAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public Resilience4jRetryDeciderSource grpcRetryResilience4jDeciderSource(RetryRegistry registry,
            GrpcRetryProperties properties) {
        List<ConfigProblem> problems = new ArrayList<>();
        for (Map.Entry<String, GrpcRetryProperties.Client> e : properties.clients().entrySet()) {
            String name = e.getValue() == null ? null : e.getValue().resilience4jRetry();
            if (name != null && registry.find(name).isEmpty()) {
                problems.add(new ConfigProblem("grpc.retry.clients." + e.getKey() + ".resilience4j-retry", name,
                        "the RetryRegistry holds no Retry instance of that name",
                        "name an instance of the registry (resilience4j.retry.instances.<name>, or a Retry added in code), or remove the property"));
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidRetryConfigurationException(problems);
        }
        return new Resilience4jRetryDeciderSource(registry);
    }

}
