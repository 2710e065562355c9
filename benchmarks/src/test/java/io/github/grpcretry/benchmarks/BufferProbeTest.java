package io.github.grpcretry.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The heap a held request retains, measured as docs/benchmarks.md reports it (in-process, 4 client
 * streams of 1,000 requests, a second or two): the interceptor engine keeps the request the
 * application sent and a reference to it, nothing per request of its own, and gives every request
 * back when the call ends.
 */
class BufferProbeTest {

    /** The request's own objects: the message, its string and the string's bytes. */
    private static final Set<String> REQUEST_CLASSES =
            Set.of("io.grpc.testing.protobuf.SimpleRequest", "java.lang.String", "[B");

    @Test
    void heldRequestsAreRetainedAndReleasedWhenTheCallEnds() throws Exception {
        BufferProbe.Result bare = BufferProbe.measure(Variant.BARE, Transport.IN_PROCESS, 4, 1000);
        BufferProbe.Result engine = BufferProbe.measure(Variant.INTERCEPTOR, Transport.IN_PROCESS, 4, 1000);

        // a bare channel holds nothing once the server has read a request: only the open calls' own state
        assertThat(bare.retained()).as("bare, B per request").isLessThan(8);
        // a 64-character request is 144 B on a 64-bit JVM with compressed references
        assertThat(engine.retained() - bare.retained()).as("engine − bare, B per request").isBetween(100.0, 200.0);
        double request = 0;
        double other = 0;
        for (Map.Entry<String, Double> e : engine.byClass().entrySet()) {
            if (REQUEST_CLASSES.contains(e.getKey())) {
                request += e.getValue();
            } else {
                other += e.getValue();
            }
        }
        assertThat(request).as("the request's own objects, B per request").isGreaterThan(100);
        assertThat(other).as("the engine's own objects per held request: %s", engine.byClass()).isLessThan(16);
        assertThat(engine.left()).as("engine, B per request left after the calls").isBetween(-4.0, 4.0);
        assertThat(bare.left()).as("bare, B per request left after the calls").isBetween(-4.0, 4.0);
    }
}
