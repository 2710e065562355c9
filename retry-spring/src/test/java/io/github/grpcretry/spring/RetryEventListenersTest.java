package io.github.grpcretry.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.grpcretry.attempt.CallTarget;
import io.github.grpcretry.deadline.DeadlineEventListener;
import io.github.grpcretry.guard.GuardEventListener;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The deadline and guard composites both lines use: one listener's exception never reaches the others. */
class RetryEventListenersTest {

    private static final CallTarget TARGET = new CallTarget("inventory", "shop.Inventory/Reserve");

    @Test
    void aThrowingDeadlineListenerDoesNotStopTheOthers() {
        List<String> heard = new CopyOnWriteArrayList<>();
        DeadlineEventListener throwing = new DeadlineEventListener() {
            @Override
            public void fastFail(CallTarget target) {
                throw new IllegalStateException("listener bug");
            }
        };
        DeadlineEventListener recording = new DeadlineEventListener() {
            @Override
            public void fastFail(CallTarget target) {
                heard.add(target.channel());
            }
        };

        DeadlineEventListener composite = RetryEventListeners.deadlines(List.of(throwing, recording));
        composite.fastFail(TARGET);
        composite.fastFail(TARGET);

        assertThat(heard).containsExactly("inventory", "inventory");
        assertThat(RetryEventListeners.deadlines(List.of())).isNull();
    }

    @Test
    void aThrowingGuardListenerDoesNotStopTheOthers() {
        List<String> heard = new CopyOnWriteArrayList<>();
        GuardEventListener throwing = new GuardEventListener() {
            @Override
            public void responseGuarded(String fullMethodName, Status.Code code) {
                throw new IllegalStateException("listener bug");
            }
        };
        GuardEventListener recording = new GuardEventListener() {
            @Override
            public void responseGuarded(String fullMethodName, Status.Code code) {
                heard.add(fullMethodName + " " + code);
            }
        };

        RetryEventListeners.guard(List.of(throwing, recording)).responseGuarded("shop.Orders/Place", Status.Code.UNAVAILABLE);

        assertThat(heard).containsExactly("shop.Orders/Place UNAVAILABLE");
        assertThat(RetryEventListeners.guard(List.of())).isSameAs(GuardEventListener.NOOP);
    }
}
