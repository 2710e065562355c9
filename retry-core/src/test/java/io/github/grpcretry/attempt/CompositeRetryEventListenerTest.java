package io.github.grpcretry.attempt;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.RetryEventListener;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompositeRetryEventListenerTest {

    @Test
    void ofOthersLeavesOtherCompositesOutAndKeepsTheOrder() {
        RetryEventListener first = new RetryEventListener() { };
        RetryEventListener second = new RetryEventListener() { };
        RetryEventListener inner = new RetryEventListener() { };
        CompositeRetryEventListener other = new CompositeRetryEventListener(List.of(inner));

        CompositeRetryEventListener composite = CompositeRetryEventListener.ofOthers(List.of(first, other, second));

        assertThat(composite.delegates()).containsExactly(first, second);
    }
}
