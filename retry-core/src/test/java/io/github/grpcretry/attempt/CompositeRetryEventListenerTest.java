package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link RetryEventListener#composite}: what the engine and both Spring Boot lines' listener bean are given. */
class CompositeRetryEventListenerTest {

    private static final CallTarget A = new CallTarget("a", "svc/M");

    @Test
    void takesCompositesApartLeavesNoopAndNullOutAndKeepsTheOrder() {
        RetryEventListener first = new RetryEventListener() { };
        RetryEventListener second = new RetryEventListener() { };
        RetryEventListener inner = new RetryEventListener() { };
        RetryEventListener other = RetryEventListener.composite(List.of(inner, first));

        RetryEventListener composite = RetryEventListener.composite(
                Arrays.asList(first, other, null, RetryEventListener.NOOP, second));

        assertThat(composite).isInstanceOf(CompositeRetryEventListener.class);
        assertThat(((CompositeRetryEventListener) composite).delegates()).containsExactly(first, inner, first, second);
    }

    @Test
    void isAListenerOfItsOwnAlsoForOneOrNone() {
        RetryEventListener only = new RetryEventListener() { };

        RetryEventListener ofOne = RetryEventListener.composite(List.of(only));
        RetryEventListener ofNone = RetryEventListener.composite(List.of());

        assertThat(ofOne).isNotSameAs(only).isInstanceOf(CompositeRetryEventListener.class);
        assertThat(((CompositeRetryEventListener) ofOne).delegates()).containsExactly(only);
        assertThat(ofNone).isNotSameAs(RetryEventListener.NOOP);
        assertThat(((CompositeRetryEventListener) ofNone).delegates()).isEmpty();
        ofNone.callStarted(A); // nothing to call, nothing thrown
    }

    @Test
    void aListenerThatThrowsCostsTheOthersNothing() {
        List<String> seen = new ArrayList<>();
        RetryEventListener broken = new RetryEventListener() {
            @Override
            public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
                throw new IllegalStateException("boom");
            }
        };
        RetryEventListener recording = new RetryEventListener() {
            @Override
            public void attemptEnded(CallTarget target, AttemptKind kind, int attemptNumber, Status.Code code) {
                seen.add(target.channel() + "#" + attemptNumber + ":" + code);
            }
        };

        RetryEventListener composite = RetryEventListener.composite(List.of(broken, recording));
        composite.attemptEnded(A, AttemptKind.INITIAL, 1, Status.Code.UNAVAILABLE);
        composite.attemptEnded(A, AttemptKind.RETRY, 2, Status.Code.OK);

        assertThat(seen).containsExactly("a#1:UNAVAILABLE", "a#2:OK");
    }
}
