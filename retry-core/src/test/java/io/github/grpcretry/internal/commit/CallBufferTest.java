package io.github.grpcretry.internal.commit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The replay record keeps each message with the compression setting it was sent with. */
class CallBufferTest {

    private static void compression(CallBuffer b, boolean on) {
        b.record(CallBuffer.Op.COMPRESSION, on ? 1 : 0, null);
    }

    @Test
    void eachMessageKeepsTheCompressionItWasRecordedWith() {
        CallBuffer b = new CallBuffer();
        b.record(CallBuffer.Op.MESSAGE, 0, "never set");
        b.record(CallBuffer.Op.MESSAGE, 0, "still never set");
        compression(b, false);
        b.record(CallBuffer.Op.MESSAGE, 0, "off");
        compression(b, true);
        for (int i = 0; i < 6; i++) { // past the replay array's first growth
            b.record(CallBuffer.Op.MESSAGE, 0, "on " + i);
        }
        compression(b, false);
        b.record(CallBuffer.Op.MESSAGE, 0, "off again");
        compression(b, true); // after the last message: the call's setting, no message's

        assertThat(b.count()).isEqualTo(10);
        assertThat(b.message(2)).isEqualTo("off");
        assertThat(b.message(9)).isEqualTo("off again");
        byte[] expected = {0, 0, 1, 2, 2, 2, 2, 2, 2, 1};
        for (int i = 0; i < expected.length; i++) {
            assertThat(b.compressionOf(i)).as("message %d", i).isEqualTo(expected[i]);
        }
        assertThat(b.compression()).isEqualTo((byte) 2);
    }

    @Test
    void withoutASettingEveryMessageHasNoneAndASettingBeforeTheFirstIsItsOwn() {
        CallBuffer never = new CallBuffer();
        never.record(CallBuffer.Op.MESSAGE, 0, "a");
        never.record(CallBuffer.Op.MESSAGE, 0, "b");
        assertThat(never.compressionOf(0)).isZero();
        assertThat(never.compressionOf(1)).isZero();

        CallBuffer first = new CallBuffer();
        compression(first, true);
        first.record(CallBuffer.Op.MESSAGE, 0, "a");
        assertThat(first.compressionOf(0)).isEqualTo((byte) 2);
    }

    @Test
    void releaseDropsTheMessagesAndTheirSettingsButKeepsTheCallsSetting() {
        RetryBufferPool pool = new RetryBufferPool(100);
        CallBuffer b = new CallBuffer();
        compression(b, false);
        b.record(CallBuffer.Op.MESSAGE, 0, "a");
        compression(b, true);
        b.record(CallBuffer.Op.MESSAGE, 0, "b");
        b.release(pool);
        assertThat(b.count()).isZero();
        assertThat(b.compression()).isEqualTo((byte) 2);
    }
}
