package io.github.grpcretry.sample.lab;

import io.github.grpcretry.sample.proto.FeedItem;
import io.github.grpcretry.sample.proto.FeedRequest;
import io.github.grpcretry.sample.proto.FlakyGrpc;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Iterator;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/** Reads one {@code Feed} stream to its end, checking the offsets as they come. */
public final class FeedReader {

    private FeedReader() {
    }

    /**
     * What one stream delivered.
     *
     * @param received items received
     * @param inOrderOnce whether the items were the offsets {@code from}, {@code from + 1}, ... in order, each once
     * @param ended the status the stream ended with
     * @param attempts the attempt (as the server counted them) that sent the last item; 0 when none came
     * @param nanos from the call's start to its end
     */
    public record Read(long received, boolean inOrderOnce, Status.Code ended, int attempts, long nanos) {

        /** Whether the stream delivered {@code count} items, in order, each once, and ended OK. */
        public boolean complete(long count) {
            return ended == Status.Code.OK && received == count && inOrderOnce;
        }

        public double millis() {
            return nanos / 1e6;
        }

        /** {@code 30 items, each once in order, OK} or what went otherwise. */
        public String text() {
            return String.format(Locale.ROOT, "%,d items%s, %s", received, inOrderOnce ? ", each once in order"
                    : ", not each once in order", ended);
        }
    }

    /** Reads the stream {@code request} asks for on {@code channel}, within {@code deadlineMs}. */
    public static Read read(Channel channel, FeedRequest request, long deadlineMs) {
        long start = System.nanoTime();
        long received = 0;
        boolean inOrder = true;
        int attempt = 0;
        Status.Code ended = Status.Code.OK;
        try {
            Iterator<FeedItem> items = FlakyGrpc.newBlockingStub(channel).withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS)
                    .feed(request);
            while (items.hasNext()) {
                FeedItem item = items.next();
                inOrder &= item.getOffset() == request.getFrom() + received;
                attempt = item.getAttempt();
                received++;
            }
        } catch (StatusRuntimeException e) {
            ended = e.getStatus().getCode();
        }
        return new Read(received, inOrder, ended, attempt, System.nanoTime() - start);
    }
}
