package io.github.grpcretry.internal.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RetryBufferPoolTest {

    @Test
    void reservesUpToCapacityAndRefusesBeyond() {
        RetryBufferPool pool = new RetryBufferPool(100);
        assertThat(pool.tryReserve(60)).isTrue();
        assertThat(pool.tryReserve(40)).isTrue();
        assertThat(pool.used()).isEqualTo(100);
        assertThat(pool.tryReserve(1)).isFalse();
        assertThat(pool.used()).isEqualTo(100);
        pool.release(60);
        assertThat(pool.tryReserve(50)).isTrue();
        assertThat(pool.used()).isEqualTo(90);
        assertThatThrownBy(() -> pool.tryReserve(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void concurrentReservationsStayWithinCapacityAndBalance() throws Exception {
        long capacity = 10_000;
        RetryBufferPool pool = new RetryBufferPool(capacity);
        AtomicLong granted = new AtomicLong();
        AtomicLong maxGranted = new AtomicLong();
        int threads = 8;
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            long seed = t;
            ex.execute(() -> {
                Random r = new Random(seed);
                try {
                    for (int i = 0; i < 50_000; i++) {
                        long n = 1 + r.nextInt(3000);
                        if (pool.tryReserve(n)) {
                            long g = granted.addAndGet(n);
                            maxGranted.accumulateAndGet(g, Math::max);
                            granted.addAndGet(-n);
                            pool.release(n);
                        }
                    }
                } finally {
                    done.countDown();
                }
            });
        }
        assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
        ex.shutdown();
        assertThat(pool.used()).isZero();
        assertThat(maxGranted.get()).isLessThanOrEqualTo(capacity).isGreaterThan(0);
    }

    @Test
    void callBufferCountsAgainstPerRpcLimitAndPoolAndReleasesOnce() {
        RetryBufferPool pool = new RetryBufferPool(1000);
        CallBuffer a = new CallBuffer();
        assertThat(a.tryAdd(300, 500, pool)).isTrue();
        assertThat(a.tryAdd(200, 500, pool)).isTrue();
        assertThat(a.held()).isEqualTo(500);
        assertThat(a.tryAdd(1, 500, pool)).as("per-RPC limit passed").isFalse();
        assertThat(a.isExceeded()).isTrue();
        assertThat(a.tryAdd(0, 500, pool)).as("stays exceeded").isFalse();
        assertThat(pool.used()).isEqualTo(500);

        CallBuffer b = new CallBuffer();
        assertThat(b.tryAdd(400, 800, pool)).isTrue();
        assertThat(b.tryAdd(200, 800, pool)).as("channel total passed").isFalse();
        assertThat(pool.used()).isEqualTo(900);

        a.release(pool);
        a.release(pool);
        assertThat(pool.used()).isEqualTo(400);
        b.release(pool);
        assertThat(pool.used()).isZero();
        assertThat(b.tryAdd(1, 800, pool)).as("released buffers take nothing more").isFalse();
    }
}
