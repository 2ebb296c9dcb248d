package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** {@link WarmMoves} against a master that holds each move until the test lets it go. */
class WarmMovesTest {

  static final ServerId SOURCE = new ServerId("rs-0", 16020, 1);
  static final ServerId TARGET = new ServerId("rs-1", 16020, 2);

  /** Moves wait on {@code gate}; the live, unmarked servers are {@code takers}. */
  static final class HeldMaster implements WarmMoves.Master {
    final CountDownLatch gate = new CountDownLatch(1);
    final List<String> started = new CopyOnWriteArrayList<>();
    final List<String> done = new CopyOnWriteArrayList<>();
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger mostAtOnce = new AtomicInteger();
    volatile Set<ServerId> takers = Set.of(SOURCE, TARGET);

    @Override
    public Collection<ServerId> takers() {
      return takers;
    }

    @Override
    public void move(String region, ServerId target) throws IOException {
      started.add(region);
      mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
      try {
        if (!gate.await(60, TimeUnit.SECONDS)) {
          throw new IOException("the test never let the move go");
        }
        done.add(region + "->" + target.host());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        running.decrementAndGet();
      }
    }
  }

  final HeldMaster master = new HeldMaster();
  final java.util.concurrent.atomic.AtomicBoolean leading =
      new java.util.concurrent.atomic.AtomicBoolean(true);
  final WarmMoves moves = new WarmMoves(leading::get, master);

  @AfterEach
  void close() {
    master.gate.countDown();
    moves.close();
  }

  /** A move's lines name the policy whose reconcile queued it (JOSDK's MDC of that thread). */
  @Test
  void aMoveRunsInTheLoggingContextOfTheReconcileThatQueuedIt() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    WarmMoves tagged =
        new WarmMoves(
            new WarmMoves.Master() {
              @Override
              public Collection<ServerId> takers() {
                return Set.of(TARGET);
              }

              @Override
              public void move(String region, ServerId target) {
                seen.add(
                    Thread.currentThread().getName()
                        + " "
                        + MDC.get("resource.namespace")
                        + "/"
                        + MDC.get("resource.name"));
              }
            });
    try {
      MDC.put("resource.namespace", "shop");
      MDC.put("resource.name", "hot-cache");
      tagged.send(TARGET, List.of("a"));
    } finally {
      MDC.clear();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> !seen.isEmpty());
    tagged.close();
    assertThat(seen).singleElement().asString().matches("hbase-region-move-\\d+ shop/hot-cache");
  }

  @Test
  void aRegionQueuedOrMovingIsNotSentTwice() throws Exception {
    moves.send(TARGET, List.of("a"));
    await().atMost(Duration.ofSeconds(10)).until(() -> master.started.contains("a"));
    moves.send(TARGET, List.of("a")); // moving
    moves.send(TARGET, List.of("b", "c", "d", "e"));
    moves.send(TARGET, List.of("e")); // queued
    assertThat(moves.regions()).containsExactlyInAnyOrder("a", "b", "c", "d", "e");

    master.gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> moves.regions().isEmpty());
    assertThat(master.done)
        .containsExactlyInAnyOrder("a->rs-1", "b->rs-1", "c->rs-1", "d->rs-1", "e->rs-1");
  }

  @Test
  void noMoreThanFourMovesRunAtOnce() throws Exception {
    moves.send(TARGET, List.of("a", "b", "c", "d", "e", "f", "g", "h", "i", "j"));
    await().atMost(Duration.ofSeconds(10)).until(() -> master.started.size() == WarmMoves.THREADS);
    assertThat(moves.regions()).hasSize(10);

    master.gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> master.done.size() == 10);
    assertThat(master.mostAtOnce.get()).isEqualTo(WarmMoves.THREADS);
  }

  @Test
  void ontoAServerJustStartedTheFirstRegionGoesAloneAndTheRestOnceItIsOpen() throws Exception {
    moves.sendFirstAlone(TARGET, List.of("a", "b", "c", "d", "e", "f"), false);
    await().atMost(Duration.ofSeconds(10)).until(() -> master.started.contains("a"));
    // the roller sends the same regions again meanwhile: nothing is queued beside the first
    moves.sendFirstAlone(TARGET, List.of("a", "b", "c", "d", "e", "f"), false);
    moves.send(TARGET, List.of("b", "c"));
    await()
        .during(Duration.ofMillis(700))
        .atMost(Duration.ofSeconds(5))
        .until(() -> master.started.size() == 1);
    assertThat(moves.regions())
        .as("the rest reserved")
        .containsExactlyInAnyOrder("a", "b", "c", "d", "e", "f");
    master.gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> master.done.size() == 6);
    assertThat(master.started).as("the first alone, then the rest").startsWith("a").hasSize(6);
    assertThat(master.mostAtOnce.get()).isLessThanOrEqualTo(WarmMoves.THREADS);
  }

  @Test
  void aServerThatServesRegionsByTheMastersReportGetsItsRegionsAtOnceAlsoFromANewOperator()
      throws Exception {
    // this WarmMoves has moved nothing to TARGET (an operator just started, mid-reload): the
    // master's report that TARGET serves a region is what says it is not fresh
    moves.sendFirstAlone(TARGET, List.of("a", "b", "c", "d", "e", "f"), true);
    await().atMost(Duration.ofSeconds(10)).until(() -> master.started.size() == WarmMoves.THREADS);
    master.gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> master.done.size() == 6);
    assertThat(master.mostAtOnce.get()).isEqualTo(WarmMoves.THREADS);
  }

  @Test
  void aFreshServersHeldRegionsAreCancelledLikeQueuedOnes() throws Exception {
    moves.sendFirstAlone(TARGET, List.of("a", "b", "c"), false);
    await().atMost(Duration.ofSeconds(10)).until(() -> master.started.contains("a"));
    assertThat(moves.cancelUnlessTo(SOURCE, List.of("a", "b", "c")))
        .as("the held ones; the running first is not stopped")
        .containsExactlyInAnyOrder("b", "c");
    master.gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> moves.regions().isEmpty());
    assertThat(master.started).containsExactly("a");
  }

  @Test
  void aDrainGivenUpCancelsItsQueuedMovesNotTheRunningOnes() throws Exception {
    moves.send(TARGET, List.of("a", "b", "c", "d", "e", "f"));
    await().atMost(Duration.ofSeconds(10)).until(() -> master.started.size() == WarmMoves.THREADS);
    List<String> running = List.copyOf(master.started);

    // the reload to the source's host:port (any start code) cancels what has not started
    List<String> cancelled =
        moves.cancelUnlessTo(
            new ServerId(SOURCE.host(), SOURCE.port(), 99), List.of("a", "b", "c", "d", "e", "f"));
    assertThat(cancelled).containsExactlyInAnyOrder("e", "f");
    assertThat(moves.regions()).containsExactlyInAnyOrderElementsOf(running);
    // moves to the server being reloaded are its own: not cancelled
    moves.send(SOURCE, List.of("e"));
    assertThat(moves.cancelUnlessTo(SOURCE, List.of("e"))).isEmpty();

    master.gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> moves.regions().isEmpty());
    assertThat(master.done)
        .containsExactlyInAnyOrder("a->rs-1", "b->rs-1", "c->rs-1", "d->rs-1", "e->rs-0");
  }

  @Test
  void aMoveWhoseTargetWentAwayOrWasMarkedIsNotSent() throws Exception {
    master.takers = Set.of(SOURCE, new ServerId(TARGET.host(), TARGET.port(), 3)); // restarted
    master.gate.countDown();
    moves.send(TARGET, List.of("a"));
    await().atMost(Duration.ofSeconds(10)).until(() -> moves.regions().isEmpty());
    assertThat(master.started).isEmpty();

    master.takers = Set.of(SOURCE, TARGET);
    moves.send(TARGET, List.of("a"));
    await().atMost(Duration.ofSeconds(10)).until(() -> moves.regions().isEmpty());
    assertThat(master.done).containsExactly("a->rs-1");
  }

  @Test
  void movesQueuedBeforeTheLeaderLeaseWasLostAreNotSent() throws Exception {
    moves.send(TARGET, List.of("a", "b", "c", "d", "e", "f"));
    await().atMost(Duration.ofSeconds(10)).until(() -> master.started.size() == WarmMoves.THREADS);
    List<String> running = List.copyOf(master.started);

    leading.set(false); // the lease lost: the operator exits, its queued moves must not go out
    master.gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> moves.regions().isEmpty());
    assertThat(master.started)
        .as("the moves already running end in the master; none queued starts")
        .containsExactlyInAnyOrderElementsOf(running);
  }

  @Test
  void afterCloseNothingIsQueued() {
    moves.close();
    assertThatThrownBy(() -> moves.send(TARGET, List.of("a")))
        .isInstanceOf(HBaseClusterException.class);
    assertThat(moves.regions()).isEmpty();
  }
}
