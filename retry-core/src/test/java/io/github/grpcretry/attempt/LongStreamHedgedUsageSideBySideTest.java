package io.github.grpcretry.attempt;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every scenario of {@link HedgedUsageSideBySideTest} again, with our engine's channels given a generous
 * {@code streams.idle-timeout} and a {@link StreamResumption} of the server-streaming method
 * ({@link Engines#longStreams}): a hedged call is never resumed and an idle timeout that does not fire changes
 * nothing, so grpc-java's own hedging stays the reference.
 */
@ExtendWith(Engines.LongStreams.class)
class LongStreamHedgedUsageSideBySideTest extends HedgedUsageSideBySideTest {
}
