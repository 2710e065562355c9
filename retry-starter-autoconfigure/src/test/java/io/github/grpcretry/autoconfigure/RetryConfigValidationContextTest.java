package io.github.grpcretry.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.policy.ChannelRetryConfigs;
import io.github.grpcretry.policy.InvalidRetryConfigurationException;
import io.github.grpcretry.policy.MethodConfig;
import io.github.grpcretry.policy.RetryPolicy;
import io.github.grpcretry.policy.ServiceConfig;
import io.github.grpcretry.policy.ServiceConfigCustomizer;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Every validation rule, each in a real context that must fail to start with a FailureAnalyzer report
 * naming the full property path (or the file and its JSON path), the value and the rule.
 */
class RetryConfigValidationContextTest {

    private static final String C = "grpc.retry.clients.inventory.";
    private static final String M = C + "service-config.method[0].";

    private static List<String> retry(String... overrides) {
        List<String> props = new ArrayList<>(List.of(
                M + "name[0].service=shop.Inventory",
                M + "retry.max-attempts=3",
                M + "retry.initial-backoff=50ms",
                M + "retry.max-backoff=1s",
                M + "retry.backoff-multiplier=2",
                M + "retry.retryable-status-codes=UNAVAILABLE"));
        props.addAll(List.of(overrides));
        return props;
    }

    private static List<String> hedging(String... overrides) {
        List<String> props = new ArrayList<>(List.of(
                M + "name[0].service=shop.Inventory",
                M + "hedging.max-attempts=3",
                M + "hedging.delay=100ms"));
        props.addAll(List.of(overrides));
        return props;
    }

    private static Arguments row(String rule, List<String> props, String path, String value, String ruleText) {
        return Arguments.of(rule, props, path, value, ruleText);
    }

    static Stream<Arguments> rules() {
        return Stream.of(
                row("retry max-attempts >= 2", retry(M + "retry.max-attempts=1"),
                        M + "retry.max-attempts", "1", "must be >= 2"),
                row("hedging max-attempts >= 2", hedging(M + "hedging.max-attempts=1"),
                        M + "hedging.max-attempts", "1", "must be >= 2"),
                row("initial-backoff > 0", retry(M + "retry.initial-backoff=0s"),
                        M + "retry.initial-backoff", "0s", "initial-backoff must be > 0"),
                row("max-backoff > 0", retry(M + "retry.max-backoff=-1s"),
                        M + "retry.max-backoff", "-1s", "max-backoff must be > 0"),
                row("multiplier > 0", retry(M + "retry.backoff-multiplier=0"),
                        M + "retry.backoff-multiplier", "0.0", "backoff-multiplier must be > 0"),
                row("retryable codes not empty", retry(M + "retry.retryable-status-codes="),
                        M + "retry.retryable-status-codes", "[]", "must not be empty"),
                row("retryable codes without OK", retry(M + "retry.retryable-status-codes=unavailable,ok"),
                        M + "retry.retryable-status-codes", "[UNAVAILABLE, OK]", "OK can never be retried"),
                row("retry and hedging not both", retry(M + "hedging.max-attempts=2"),
                        "grpc.retry.clients.inventory.service-config.method[0]", "(not set)", "not both"),
                row("hedging delay >= 0", hedging(M + "hedging.delay=-5ms"),
                        M + "hedging.delay", "-0.005s", "must be >= 0"),
                row("required retry fields", List.of(M + "name[0].service=shop.Inventory", M + "retry.max-attempts=3"),
                        M + "retry.initial-backoff", "(not set)", "required"),
                row("per-attempt-receive-timeout > 0", retry(M + "retry.per-attempt-receive-timeout=0ms"),
                        M + "retry.per-attempt-receive-timeout", "0s", "must be > 0"),
                row("timeout > 0", retry(M + "timeout=0s"), M + "timeout", "0s", "must be > 0"),
                row("message limit > 0", retry(M + "max-request-message=0B"), M + "max-request-message", "0B",
                        "message size limit"),
                row("name with method needs service", List.of(M + "name[0].method=Reserve", M + "wait-for-ready=true"),
                        M + "name[0]", "*", "must also name its service"),
                row("duplicate method names", List.of(M + "name[0].service=shop.Inventory", M + "wait-for-ready=true",
                                C + "service-config.method[1].name[0].service=shop.Inventory",
                                C + "service-config.method[1].timeout=1s"),
                        C + "service-config.method[1].name[0]", "shop.Inventory/*", "duplicate method name"),
                row("max-tokens 0 (R2)", List.of(C + "service-config.retrythrottling.max-tokens=0",
                                C + "service-config.retrythrottling.token-ratio=0.1"),
                        C + "service-config.retrythrottling.max-tokens", "0.0", "must be in (0, 1000]"),
                row("max-tokens 1001 (R2)", List.of(C + "service-config.retrythrottling.max-tokens=1001",
                                C + "service-config.retrythrottling.token-ratio=0.1"),
                        C + "service-config.retrythrottling.max-tokens", "1001.0", "must be in (0, 1000]"),
                row("token-ratio 0 (R2)", List.of(C + "service-config.retrythrottling.max-tokens=10",
                                C + "service-config.retrythrottling.token-ratio=0"),
                        C + "service-config.retrythrottling.token-ratio", "0.0", "token-ratio must be > 0"),
                row("token-ratio below three decimals", List.of(C + "service-config.retrythrottling.max-tokens=10",
                                C + "service-config.retrythrottling.token-ratio=0.0004"),
                        C + "service-config.retrythrottling.token-ratio", "0.0004", "at least 0.001"),
                row("budget ratio > 0", List.of(C + "budget.ratio=0"), C + "budget.ratio", "0.0", "in (0, 1]"),
                row("budget ratio <= 1", List.of(C + "budget.ratio=1.5"), C + "budget.ratio", "1.5", "in (0, 1]"),
                row("min-retries-per-second >= 0", List.of(C + "budget.ratio=0.1", C + "budget.min-retries-per-second=-1"),
                        C + "budget.min-retries-per-second", "-1.0", "must be >= 0"),
                row("ttl >= 1s", List.of(C + "budget.ratio=0.1", C + "budget.ttl=500ms"),
                        C + "budget.ttl", "0.5s", "between 1s and 60s"),
                row("ttl <= 60s", List.of(C + "budget.ratio=0.1", C + "budget.ttl=61s"),
                        C + "budget.ttl", "61s", "between 1s and 60s"),
                row("max-attempts-cap >= 1", List.of(C + "max-attempts-cap=0"), C + "max-attempts-cap", "0", "must be >= 1"),
                row("per-rpc-buffer-limit > 0", List.of(C + "per-rpc-buffer-limit=0B"), C + "per-rpc-buffer-limit", "0B",
                        "must be > 0"),
                row("retry-buffer-size > 0", List.of(C + "retry-buffer-size=0B"), C + "retry-buffer-size", "0B",
                        "must be > 0"),
                row("connect-timeout > 0", List.of(C + "connect-timeout=0s"), C + "connect-timeout", "0s", "at least 1ms"),
                row("resilience4j-retry not blank", List.of(C + "resilience4j-retry= "), C + "resilience4j-retry", "\"\"",
                        "must name a resilience4j Retry instance"),
                row("GLOBAL values are named by their GLOBAL path", List.of("grpc.retry.clients.GLOBAL.budget.ratio=2"),
                        "grpc.retry.clients.GLOBAL.budget.ratio", "2.0", "in (0, 1]"),
                row("service-config-file must exist", List.of(C + "service-config-file=classpath:service-configs/nope.json"),
                        C + "service-config-file", "classpath:service-configs/nope.json", "does not exist"),
                row("service-config-file must be JSON",
                        List.of(C + "service-config-file=classpath:service-configs/malformed.json"),
                        "classpath:service-configs/malformed.json $.methodConfig[0].retryPolicy.initialBackoff",
                        "\"maxBackoff\": \"1s\"", "malformed JSON at line 7 column 8: Unterminated object"),
                row("file values are named by file and JSON path",
                        List.of(C + "service-config-file=classpath:service-configs/bad-values.json"),
                        "classpath:service-configs/bad-values.json $.methodConfig[0].retryPolicy.maxAttempts", "1",
                        "must be >= 2"),
                row("file durations are protobuf durations",
                        List.of(C + "service-config-file=classpath:service-configs/bad-values.json"),
                        "classpath:service-configs/bad-values.json $.methodConfig[0].retryPolicy.initialBackoff", "\"50ms\"",
                        "protobuf JSON duration"),
                row("file status codes are checked",
                        List.of(C + "service-config-file=classpath:service-configs/bad-values.json"),
                        "classpath:service-configs/bad-values.json $.methodConfig[0].retryPolicy.retryableStatusCodes[1]",
                        "NOT_A_CODE", "must be a gRPC status code"),
                row("file throttling is checked",
                        List.of(C + "service-config-file=classpath:service-configs/bad-values.json"),
                        "classpath:service-configs/bad-values.json $.retryThrottling.maxTokens", "1001",
                        "must be in (0, 1000]"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void invalidValueStopsStartUpWithAReportNamingTheProperty(String rule, List<String> props, String path, String value,
            String ruleText) {
        RetryTestContexts.runner().withPropertyValues(props.toArray(String[]::new)).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).hasRootCauseInstanceOf(InvalidRetryConfigurationException.class);
            String report = RetryTestContexts.failureReport(ctx.getStartupFailure());
            assertThat(report).contains("Property: " + path + "\n");
            assertThat(report).contains("Value:    " + value + "\n");
            assertThat(report).contains(ruleText);
            // the action part names the property and a fix
            assertThat(report.substring(report.indexOf("---"))).contains(path + ": ");
        });
    }

    @Test
    void allProblemsAreReportedTogether() {
        RetryTestContexts.runner()
                .withPropertyValues(M + "name[0].service=shop.Inventory", M + "retry.max-attempts=1",
                        M + "retry.initial-backoff=0s", M + "retry.max-backoff=1s", M + "retry.backoff-multiplier=2",
                        M + "retry.retryable-status-codes=OK", C + "budget.ttl=2m", C + "budget.ratio=0.2",
                        "grpc.retry.clients.other.max-attempts-cap=-3")
                .run(ctx -> {
                    InvalidRetryConfigurationException e = (InvalidRetryConfigurationException) rootCause(ctx.getStartupFailure());
                    assertThat(e.getProblems()).extracting(p -> p.path()).containsExactlyInAnyOrder(
                            M + "retry.max-attempts", M + "retry.initial-backoff", M + "retry.retryable-status-codes",
                            C + "budget.ttl", "grpc.retry.clients.other.max-attempts-cap");
                    String report = RetryTestContexts.failureReport(ctx.getStartupFailure());
                    assertThat(report).contains("has 5 invalid values");
                });
    }

    /**
     * Status codes are bound as {@code Status.Code} (names in any case, numbers through the starter's
     * converter): a value naming no code is a binding failure, reported by Spring Boot with the property,
     * the value, the converter's rule and the valid names.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "retry.retryable-status-codes[0]=unavailable | retry.retryable-status-codes[1]=unavailabel"
                    + " | retry.retryable-status-codes[1] | unavailabel",
            "hedging.non-fatal-status-codes[0]=14 | hedging.non-fatal-status-codes[1]=17"
                    + " | hedging.non-fatal-status-codes[1] | 17"})
    void unknownStatusCodeStopsStartUpWithBootsBindingReport(String first, String second, String path, String value) {
        List<String> props = first.startsWith("retry") ? retry() : hedging();
        props.removeIf(p -> p.startsWith(M + "retry.retryable-status-codes="));
        props.addAll(List.of(M + first, M + second));
        RetryTestContexts.runner().withPropertyValues(props.toArray(String[]::new)).run(ctx -> {
            assertThat(ctx).hasFailed();
            String report = RetryTestContexts.failureReport(ctx.getStartupFailure());
            assertThat(report).startsWith("Failed to bind properties under '" + M + path + "' to io.grpc.Status$Code");
            assertThat(report).contains("Property: " + M + path + "\n").contains("Value: \"" + value + "\"")
                    .contains("'" + value + "' is not a gRPC status code: use a name in any case (UNAVAILABLE,"
                            + " unavailable) or a number from 0 to 16 (14)");
            assertThat(report.substring(report.indexOf("---"))).contains("UNAVAILABLE").contains("DEADLINE_EXCEEDED");
        });
    }

    @Test
    void statusCodesBindByNameInAnyCaseAndByNumber() {
        RetryTestContexts.runner()
                .withPropertyValues(retry(M + "retry.retryable-status-codes[0]=deadline-exceeded",
                        M + "retry.retryable-status-codes[1]=14", M + "retry.retryable-status-codes[2]=Resource_Exhausted")
                        .stream().filter(p -> !p.startsWith(M + "retry.retryable-status-codes=")).toArray(String[]::new))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(ChannelRetryConfigs.class).forChannel("inventory").serviceConfig()
                            .methodConfigs().get(0).retryPolicy().retryableStatusCodes())
                            .containsExactlyInAnyOrder(Status.Code.DEADLINE_EXCEEDED, Status.Code.UNAVAILABLE,
                                    Status.Code.RESOURCE_EXHAUSTED);
                });
    }

    @Test
    void unconvertibleValueIsReportedByBootWithThePropertyPath() {
        RetryTestContexts.runner().withPropertyValues(retry(M + "retry.initial-backoff=abc").toArray(String[]::new))
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    String report = RetryTestContexts.failureReport(ctx.getStartupFailure());
                    assertThat(report).contains(M + "retry.initial-backoff").contains("abc");
                });
    }

    @Test
    void r2ValidThrottlingStarts() {
        RetryTestContexts.runner()
                .withPropertyValues(C + "service-config.retrythrottling.max-tokens=1000",
                        C + "service-config.retrythrottling.token-ratio=0.1")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    ServiceConfig sc = ctx.getBean(ChannelRetryConfigs.class).forChannel("inventory").serviceConfig();
                    assertThat(sc.retryThrottling().maxTokens()).isEqualTo(1000.0);
                    assertThat(sc.retryThrottling().tokenRatioMilli()).isEqualTo(100);
                });
    }

    @Test
    void customizerOutputIsValidatedToo() {
        ServiceConfigCustomizer breaking = (channel, config) -> {
            List<MethodConfig> out = new ArrayList<>();
            for (MethodConfig mc : config.methodConfigs()) {
                RetryPolicy r = mc.retryPolicy();
                out.add(new MethodConfig(mc.names(), mc.waitForReady(), mc.timeout(), mc.maxRequestMessageBytes(),
                        mc.maxResponseMessageBytes(), new RetryPolicy(1, r.initialBackoff(), r.maxBackoff(),
                        r.backoffMultiplier(), r.retryableStatusCodes(), null), null));
            }
            return new ServiceConfig(out, config.retryThrottling());
        };
        ApplicationContextRunner runner = RetryTestContexts.runner()
                .withBean(ServiceConfigCustomizer.class, () -> breaking)
                .withPropertyValues(retry().toArray(String[]::new));
        runner.run(ctx -> {
            String report = RetryTestContexts.failureReport(ctx.getStartupFailure());
            assertThat(report).contains("Property: ServiceConfigCustomizer(inventory) methodConfig[0].retryPolicy.maxAttempts");
        });
    }

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
