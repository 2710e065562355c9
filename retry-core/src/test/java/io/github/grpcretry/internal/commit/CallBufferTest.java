package io.github.grpcretry.internal.commit;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ClientCall;
import io.grpc.Metadata;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The replay record logs the application's operations in order, and replays each as it was made. */
class CallBufferTest {

    /** Writes down what a call below is sent. */
    private static final class Recording extends ClientCall<Object, Object> {
        final List<String> sent = new ArrayList<>();

        @Override
        public void start(Listener<Object> listener, Metadata headers) {
        }

        @Override
        public void request(int n) {
            sent.add("request " + n);
        }

        @Override
        public void cancel(String message, Throwable cause) {
        }

        @Override
        public void halfClose() {
            sent.add("halfClose");
        }

        @Override
        public void sendMessage(Object message) {
            sent.add("message " + message + " (" + message.getClass().getSimpleName() + ")");
        }

        @Override
        public void setMessageCompression(boolean enabled) {
            sent.add("compression " + enabled);
        }
    }

    @Test
    void aReplayAsksForTheMessagesThenSendsEveryOtherOperationInOrderEachMessageWithItsCompression() {
        CallBuffer b = new CallBuffer();
        b.add(2);
        b.add(CallBuffer.message("plain"));
        b.add(false);
        b.add(CallBuffer.message("secret"));
        b.add(true);
        for (int i = 0; i < 5; i++) { // past the log's first growth
            b.add(CallBuffer.message("on " + i));
        }
        b.add(CallBuffer.message(7)); // a message that is an Integer is no request
        b.add(CallBuffer.message(Boolean.TRUE)); // nor one that is a Boolean a compression setting
        b.add(1);
        b.add(CallBuffer.HALF_CLOSE);

        Recording call = new Recording();
        CallBuffer.replay(call, b.demand()); // what a drain sends first
        for (int i = 0; i < b.size(); i++) {
            CallBuffer.replay(call, b.entry(i));
        }
        assertThat(call.sent).containsExactly("request 3", "message plain (String)", "compression false",
                "message secret (String)", "compression true", "message on 0 (String)", "message on 1 (String)",
                "message on 2 (String)", "message on 3 (String)", "message on 4 (String)", "message 7 (Integer)",
                "message true (Boolean)", "halfClose");
        assertThat(b.size()).as("requests are counted, not logged").isEqualTo(12);
        assertThat(b.entry(b.size() - 1)).isSameAs(CallBuffer.HALF_CLOSE);
    }

    @Test
    void eachEntryNamesHowTheCallEndsWhenTheCallBelowThrowsFromIt() {
        assertThat(CallBuffer.failure(CallBuffer.message("m"))).isEqualTo("Failed to stream message");
        assertThat(CallBuffer.failure(CallBuffer.message(3))).isEqualTo("Failed to stream message");
        assertThat(CallBuffer.failure(3)).isEqualTo("Failed to request messages");
        assertThat(CallBuffer.failure(true)).isEqualTo("Failed to set message compression");
        assertThat(CallBuffer.failure(CallBuffer.HALF_CLOSE)).isEqualTo("Failed to half-close");
        assertThat(CallBuffer.isMessage(CallBuffer.message(3))).isTrue();
        assertThat(CallBuffer.isMessage(3)).isFalse();
        assertThat(CallBuffer.isMessage(CallBuffer.HALF_CLOSE)).isFalse();
    }

    @Test
    void releaseDropsTheLogAndItsBytes() {
        RetryBufferPool pool = new RetryBufferPool(100);
        CallBuffer b = new CallBuffer();
        b.add(CallBuffer.message("a"));
        b.add(CallBuffer.HALF_CLOSE);
        assertThat(b.tryAdd(10, 50, pool)).isTrue();
        b.release(pool);
        assertThat(b.size()).isZero();
        assertThat(pool.used()).isZero();
    }

    @Test
    void demandSaturatesAtMaxValue() {
        CallBuffer b = new CallBuffer();
        b.add(Integer.MAX_VALUE - 1);
        b.add(5);
        assertThat(b.demand()).isEqualTo(Integer.MAX_VALUE);
    }
}
