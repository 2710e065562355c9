package io.github.grpcretry.attempt;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Every scenario of {@link HedgedUsageSideBySideTest} again, with our engine's channels given a generous
 * {@code streams.idle-timeout} and a {@link StreamResumption} of the server-streaming method
 * ({@link Engines#longStreams}): a hedged call is never resumed and an idle timeout that does not fire changes
 * nothing, so grpc-java's own hedging stays the reference.
 */
class LongStreamHedgedUsageSideBySideTest extends HedgedUsageSideBySideTest {

    @BeforeAll
    static void longStreamsOn() {
        Engines.longStreams = true;
    }

    @AfterAll
    static void longStreamsOff() {
        Engines.longStreams = false;
    }
}
