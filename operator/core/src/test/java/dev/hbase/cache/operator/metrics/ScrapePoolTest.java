package dev.hbase.cache.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How the scrape threads are shared out: by namespace, in turns, one ask per pod. */
class ScrapePoolTest {
  final List<ScrapePool> pools = new ArrayList<>();
  final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void close() {
    release.countDown();
    pools.forEach(ScrapePool::close);
  }

  ScrapePool pool(int threads, int share) {
    ScrapePool p = new ScrapePool(threads, share);
    pools.add(p);
    return p;
  }

  /** Work that holds its thread until the test ends, as a stalled info server holds an ask. */
  Supplier<String> stalled(AtomicInteger started) {
    return () -> {
      started.incrementAndGet();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return "late";
    };
  }

  @Test
  void aNamespaceWhoseAsksAllStallHoldsItsShareAndTheOthersGoOn() throws Exception {
    ScrapePool pool = pool(ScrapePool.THREADS, ScrapePool.SHARE);
    AtomicInteger noisyStarted = new AtomicInteger();
    for (int i = 0; i < 40; i++) {
      pool.ask("noisy", "noisy/rs-" + i, stalled(noisyStarted));
    }
    Thread.sleep(200);
    assertThat(noisyStarted.get()).as("noisy asks running").isEqualTo(ScrapePool.SHARE);
    assertThat(pool.running("noisy")).isEqualTo(ScrapePool.SHARE);
    // every other namespace's asks run at once, up to the pool's threads less the noisy share
    List<ScrapePool.Job<String>> quiet = new ArrayList<>();
    for (int i = 0; i < ScrapePool.THREADS - ScrapePool.SHARE; i++) {
      quiet.add(pool.ask("quiet-" + i, "quiet-" + i + "/rs-0", () -> "ok"));
    }
    for (var j : quiet) {
      assertThat(j.answer().get(5, TimeUnit.SECONDS)).isEqualTo("ok");
    }
    assertThat(noisyStarted.get()).as("noisy asks running, still").isEqualTo(ScrapePool.SHARE);
  }

  @Test
  void aFreeThreadGoesToTheNamespacesInTurn() throws Exception {
    ScrapePool pool = pool(2, 2);
    CountDownLatch a1 = new CountDownLatch(1);
    CountDownLatch a2 = new CountDownLatch(1);
    List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
    pool.ask("a", "a/1", () -> wait(a1, "a1", order));
    pool.ask("a", "a/2", () -> wait(a2, "a2", order));
    var a3 = pool.ask("a", "a/3", () -> wait(release, "a3", order));
    var a4 = pool.ask("a", "a/4", () -> wait(release, "a4", order));
    var b1 = pool.ask("b", "b/1", () -> wait(release, "b1", order));
    Thread.sleep(100);
    assertThat(order).containsExactlyInAnyOrder("a1", "a2");
    a1.countDown(); // a's turn came first: a3
    await(() -> order.size() == 3);
    a2.countDown(); // then b's, though a queued more
    await(() -> order.size() == 4);
    assertThat(order.subList(2, 4)).containsExactly("a3", "b1");
    assertThat(a4.started()).isFalse();
    assertThat(a3.started() && b1.started()).isTrue();
  }

  @Test
  void onePodIsAskedOnceAtATime() throws Exception {
    ScrapePool pool = pool(4, 4);
    AtomicInteger runs = new AtomicInteger();
    var first = pool.ask("t", "t/rs-0", stalled(runs));
    var second = pool.ask("t", "t/rs-0", stalled(runs));
    Thread.sleep(100);
    assertThat(second).isSameAs(first);
    assertThat(runs.get()).isEqualTo(1);
    release.countDown();
    assertThat(first.answer().get(5, TimeUnit.SECONDS)).isEqualTo("late");
    // once it answered, the pod is asked anew
    var third = pool.ask("t", "t/rs-0", () -> "fresh");
    assertThat(third).isNotSameAs(first);
    assertThat(third.answer().get(5, TimeUnit.SECONDS)).isEqualTo("fresh");
  }

  @Test
  void aDroppedAskThatWaitsIsNeverRun() throws Exception {
    ScrapePool pool = pool(1, 1);
    AtomicInteger runs = new AtomicInteger();
    pool.ask("t", "t/rs-0", stalled(runs));
    var queued = pool.ask("t", "t/rs-1", () -> "never");
    Thread.sleep(100);
    pool.drop(queued);
    assertThat(queued.answer().isCancelled()).isTrue();
    release.countDown();
    Thread.sleep(200);
    assertThat(queued.started()).isFalse();
  }

  private static String wait(CountDownLatch l, String name, List<String> order) {
    order.add(name);
    try {
      l.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return name;
  }

  private static void await(java.util.function.BooleanSupplier c) throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!c.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waited 10 s").isLessThan(until);
      Thread.sleep(10);
    }
  }
}
