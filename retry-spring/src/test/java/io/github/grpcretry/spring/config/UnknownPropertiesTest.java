package io.github.grpcretry.spring.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The key tree read from property classes, relaxed spellings, scopes, and the closest-key suggestion. */
class UnknownPropertiesTest {

    record Root(boolean enabled, Map<String, Client> clients, Deadline deadline) {
    }

    record Client(Integer maxAttemptsCap, Sc serviceConfig) {
    }

    record Sc(List<Method> method) {
    }

    record Method(List<Name> name, Retry retry) {
    }

    record Name(String service, String method) {
    }

    record Retry(Integer maxAttempts, Duration initialBackoff, List<String> retryableStatusCodes) {
    }

    record Deadline(Duration reserve) {
    }

    /** A JavaBean, as the Spring Boot 3.5 line's property classes are. */
    public static final class Extra {
        public Duration getMinRemaining() {
            return null;
        }

        public boolean isEnabled() {
            return true;
        }
    }

    static final UnknownProperties CHECK = UnknownProperties.builder()
            .scope("grpc.retry", Root.class)
            .scope("grpc.retry.extra", Extra.class)
            .scope("other.channel.*.sc.method[*].retry", Retry.class)
            .build();

    /** A key as Spring Boot names it: a.b[0].c → [a, b, [0], c]. */
    static UnknownProperties.Key key(String name) {
        List<String> elements = new ArrayList<>();
        for (String part : name.split("\\.")) {
            int bracket = part.indexOf('[');
            String head = bracket < 0 ? part : part.substring(0, bracket);
            if (!head.isEmpty()) {
                elements.add(head);
            }
            while (bracket >= 0) {
                int end = part.indexOf(']', bracket);
                elements.add(part.substring(bracket, end + 1));
                bracket = part.indexOf('[', end);
            }
        }
        return new UnknownProperties.Key(elements, name, "v", "here");
    }

    static List<UnknownProperties.Unknown> check(String... names) {
        return CHECK.check(List.of(names).stream().map(UnknownPropertiesTest::key).toList());
    }

    @Test
    void everySpellingOfAKnownKeyIsKnownAtEveryDepth() {
        assertThat(check("grpc.retry.enabled", "grpc.retry.clients.svc.max-attempts-cap", "grpc.retry.clients.svc.maxAttemptsCap",
                "grpc.retry.clients.svc.max_attempts_cap", "grpc.retry.clients.svc.maxattemptscap",
                "grpc.retry.clients.GLOBAL.service-config.method[0].retry.initial-backoff",
                "grpc.retry.clients.[in-process:x].serviceConfig.method[3].name[1].service",
                "grpc.retry.clients.svc.service-config.method[0].retry.retryable-status-codes",
                "grpc.retry.clients.svc.service-config.method[0].retry.retryable-status-codes[2]",
                "grpc.retry.deadline.reserve", "grpc.retry.extra.min-remaining", "grpc.retry.extra.enabled",
                "other.channel.svc.sc.method[0].retry.max-attempts", "other.channel.svc.sc.method[0].timeout",
                "unrelated.key")).isEmpty();
    }

    @Test
    void aTypoIsReportedWhereItLeavesTheTreeWithTheClosestKey() {
        List<UnknownProperties.Unknown> unknown = check("grpc.retry.clients.svc.service-config.method[0].retry.max-attempt",
                "grpc.retry.clients.svc.service-config.method[0].name[0].servce", "grpc.retry.clientz.svc.max-attempts-cap",
                "grpc.retry.clients.svc.max-attempt", "grpc.retry.extra.min-remainig", "other.channel.a.sc.method[1].retry.maxAtempts");
        assertThat(unknown).extracting(UnknownProperties.Unknown::element)
                .containsExactly("max-attempt", "servce", "clientz", "max-attempt", "min-remainig", "maxAtempts");
        assertThat(unknown).extracting(UnknownProperties.Unknown::suggestion)
                .containsExactly("max-attempts", "service", "clients", "max-attempts-cap", "min-remaining", "max-attempts");
        assertThat(unknown.get(2).suggestedKey()).isEqualTo("grpc.retry.clients.svc.max-attempts-cap");
        assertThat(unknown.get(0).problem().rule()).endsWith("did you mean `max-attempts`?");
        assertThat(unknown.get(0).warning()).startsWith("Ignored grpc.retry.clients.svc.service-config.method[0].retry.max-attempt (here): ");
    }

    @Test
    void noCloseKeyListsKnownKeysAndNothingIsKnownBelowAValue() {
        List<UnknownProperties.Unknown> unknown = check("grpc.retry.zzzzzzzz",
                "grpc.retry.clients.svc.service-config.method[0].retry.retryable-status-codes[0].x",
                "grpc.retry.enabled.really");
        assertThat(unknown).extracting(UnknownProperties.Unknown::suggestion).containsOnlyNulls();
        assertThat(unknown.get(0).known()).containsExactly("enabled", "clients", "deadline", "extra");
        assertThat(unknown.get(0).reason()).endsWith("the keys here are enabled, clients, deadline, extra");
        assertThat(unknown.get(1).element()).isEqualTo("x");
        assertThat(unknown.get(2).element()).isEqualTo("really");
    }

    @Test
    void oneReportPerKeyHoweverManySourcesSpellIt() {
        assertThat(check("grpc.retry.engin", "grpc.retry.ENGIN", "grpc.retry.en-gin")).hasSize(1);
    }

    @Test
    void ignoringTurnsEachProblemIntoOneWarning() {
        List<String> warnings = new ArrayList<>();
        assertThat(CHECK.problems(List.of(key("grpc.retry.engin"), key("grpc.retry.clients.a.x")), true, warnings::add)).isEmpty();
        assertThat(warnings).hasSize(2);
        assertThat(CHECK.problems(List.of(key("grpc.retry.enabld")), false, warnings::add)).singleElement()
                .satisfies(p -> assertThat(p.fix()).startsWith("rename it to grpc.retry.enabled").contains(UnknownProperties.IGNORE_PROPERTY));
    }
}
