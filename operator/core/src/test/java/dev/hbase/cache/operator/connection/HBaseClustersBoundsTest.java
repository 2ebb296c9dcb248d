package dev.hbase.cache.operator.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.HBaseSpec;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.RecommissionResult;
import dev.hbase.cache.operator.hbase.ServerId;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The connection cache is bounded (issue 49, point 5): by what policies name, by idleness, by caps;
 * and a connect or a call that never answers holds its own caller for its deadline, nobody else.
 * The connector counts opens and closes, and each connection starts a pool of 4 threads as {@code
 * AdminHBaseCluster}'s warm moves do.
 */
class HBaseClustersBoundsTest {
  final AtomicInteger opened = new AtomicInteger();
  final AtomicInteger closed = new AtomicInteger();
  final CountDownLatch never = new CountDownLatch(1);
  HBaseClusters clusters;

  /** A thread per caller (the common pool may have too few for callers that block). */
  final ExecutorService callers = Executors.newCachedThreadPool();

  @AfterEach
  void close() {
    never.countDown();
    callers.shutdownNow();
    if (clusters != null) {
      clusters.close();
    }
  }

  /** A connection with a 4-thread pool (named "fake-move"), shut down by its close. */
  final class Fake implements HBaseCluster {
    final ExecutorService pool =
        Executors.newFixedThreadPool(
            4,
            r -> {
              Thread t = new Thread(r, "fake-move");
              t.setDaemon(true);
              return t;
            });
    final boolean stuck;

    Fake(boolean stuck) {
      this.stuck = stuck;
      for (int i = 0; i < 4; i++) {
        pool.execute(() -> {}); // the pool's threads exist from here on
      }
    }

    @Override
    public ClusterSnapshot snapshot() {
      if (stuck) {
        block(never); // a master that never answers
      }
      return new ClusterSnapshot(
          Instant.now(), true, null, List.of(), List.of(), 0, null, List.of(), true);
    }

    @Override
    public void drain(ServerId server, Map<String, ServerId> targets) {}

    @Override
    public RecommissionResult recommission(ServerId server, List<String> regions) {
      return null;
    }

    @Override
    public void move(String region, ServerId target) {}

    @Override
    public boolean balancer(boolean on) {
      return true;
    }

    @Override
    public List<ServerId> decommissioned() {
      return List.of();
    }

    @Override
    public void stopServer(ServerId server, String why) {}

    @Override
    public dev.hbase.cache.operator.hbase.ExpireResult expire(ServerId server) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
      pool.shutdownNow();
      try {
        pool.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      closed.incrementAndGet();
    }
  }

  static void block(CountDownLatch l) {
    try {
      l.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Quorum "stuck" never connects, "hangs" connects and never answers a call; others answer. */
  HBaseConnector connector() {
    return (settings, login) -> {
      opened.incrementAndGet();
      String quorum = settings.get(HBaseClusters.QUORUM);
      if (quorum.equals("stuck")) {
        block(never); // a ZooKeeper that never answers
      }
      return new Fake(quorum.equals("hangs"));
    };
  }

  static BlockCachePolicy policy(String ns, String name, String quorum, String znodeParent) {
    BlockCachePolicy p = HBaseClustersTest.policy(ns, name);
    p.getSpec()
        .setHbase(new HBaseSpec().setZookeeperQuorum(quorum).setZookeeperZnodeParent(znodeParent));
    return p;
  }

  static ConfigMap base(String ns) {
    ConfigMap c = HBaseClustersTest.base("");
    c.getMetadata().setNamespace(ns);
    return c;
  }

  static long threads(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .filter(t -> t.getName().startsWith(name))
        .count();
  }

  @Test
  void aPolicyChurningItsClientSettingsKeepsOneConnectionOpen() {
    clusters = new HBaseClusters(connector());
    long before = threads("fake-move");
    for (int i = 0; i < 200; i++) {
      BlockCachePolicy p = policy("team-a", "churn", "zk.team-a", "/hbase-" + i);
      assertThat(clusters.of(p, base("team-a")).snapshot().masterReachable()).isTrue();
    }
    assertThat(opened).hasValue(200);
    assertThat(clusters.size()).as("connections cached").isEqualTo(1);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(opened.get() - closed.get()).as("connections open").isEqualTo(1);
              assertThat(threads("fake-move") - before)
                  .as("move-pool threads")
                  .isLessThanOrEqualTo(4);
              assertThat(threads("hbase-connection namespace team-a"))
                  .as("connection threads")
                  .isLessThanOrEqualTo(1);
            });
  }

  @Test
  void aDeletedPolicysConnectionClosesOnceNoOtherPolicyUsesIt() {
    clusters = new HBaseClusters(connector());
    BlockCachePolicy a = policy("team-a", "a", "zk.team-a", null);
    BlockCachePolicy b = policy("team-a", "b", "zk.team-a", null);
    HBaseCluster shared = clusters.of(a, base("team-a"));
    assertThat(clusters.of(b, base("team-a"))).isSameAs(shared);
    clusters.forget(a);
    assertThat(clusters.size()).as("b still uses it").isEqualTo(1);
    clusters.forget(b);
    assertThat(clusters.size()).isZero();
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(closed).hasValue(1));
  }

  @Test
  void anIdleConnectionIsClosedAndTheCapsHold() {
    AtomicLong now = new AtomicLong();
    clusters =
        new HBaseClusters(
            connector(),
            new HBaseClusters.Limits(
                Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMinutes(10), 2, 5),
            now::get);
    clusters.of(policy("idle", "p", "zk.idle", null), base("idle"));
    now.addAndGet(Duration.ofMinutes(11).toNanos());
    clusters.of(policy("busy", "p", "zk.busy", null), base("busy"));
    assertThat(clusters.size()).as("the idle one closed at the next use").isEqualTo(1);

    // one namespace naming many clusters keeps 2 of them; many namespaces, 5 in all
    for (int i = 0; i < 10; i++) {
      now.addAndGet(1);
      clusters.of(policy("greedy", "p" + i, "zk-" + i, null), base("greedy"));
    }
    assertThat(clusters.size()).isEqualTo(3); // busy's and greedy's last two
    for (int i = 0; i < 10; i++) {
      now.addAndGet(1);
      clusters.of(policy("ns-" + i, "p", "zk", null), base("ns-" + i));
    }
    assertThat(clusters.size()).isEqualTo(5);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(opened.get() - closed.get()).isEqualTo(5));
  }

  @Test
  void aConnectThatNeverAnswersHoldsOnlyItsOwnCallersForTheDeadline() throws Exception {
    clusters =
        new HBaseClusters(
            connector(),
            new HBaseClusters.Limits(
                Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofMinutes(10), 8, 128),
            System::nanoTime);
    BlockCachePolicy stuck = policy("team-s", "p", "stuck", null);
    long t0 = System.nanoTime();
    CompletableFuture<ClusterSnapshot> first =
        CompletableFuture.supplyAsync(() -> clusters.of(stuck, base("team-s")).snapshot(), callers);
    Thread.sleep(200); // its connect is under way
    CompletableFuture<ClusterSnapshot> second =
        CompletableFuture.supplyAsync(() -> clusters.of(stuck, base("team-s")).snapshot(), callers);

    // another policy's cluster meanwhile: at once (a map locked during the stuck connect would
    // hold this call for as long: bounded here so that such a map fails the test, not hangs it)
    long o0 = System.nanoTime();
    ClusterSnapshot other =
        CompletableFuture.supplyAsync(
                () ->
                    clusters.of(policy("team-o", "p", "zk.other", null), base("team-o")).snapshot(),
                callers)
            .get(10, TimeUnit.SECONDS);
    assertThat(other.masterReachable()).isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - o0)).isLessThan(Duration.ofSeconds(5));
    assertThat(first).as("still waiting for its own connect").isNotDone();

    ClusterSnapshot s1 = first.get(60, TimeUnit.SECONDS);
    ClusterSnapshot s2 = second.get(60, TimeUnit.SECONDS);
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    assertThat(s1.masterReachable()).isFalse();
    assertThat(s1.error()).contains("did not finish within 10 s").contains("quorum stuck");
    assertThat(s2.masterReachable()).isFalse();
    assertThat(took).as("both at the connect deadline").isLessThan(Duration.ofSeconds(40));
    assertThat(opened).as("one connect for the stuck cluster, none started again").hasValue(2);

    // while it is still connecting its callers fail at once, without a second connect
    long r0 = System.nanoTime();
    assertThat(clusters.of(stuck, base("team-s")).snapshot().masterReachable()).isFalse();
    assertThat(Duration.ofNanos(System.nanoTime() - r0)).isLessThan(Duration.ofSeconds(5));
    assertThat(opened).hasValue(2);
  }

  @Test
  void aCallThatNeverAnswersEndsAtItsDeadlineAndTheNextUseConnectsAfresh() throws Exception {
    clusters =
        new HBaseClusters(
            connector(),
            new HBaseClusters.Limits(
                Duration.ofSeconds(2), Duration.ofSeconds(2), Duration.ofMinutes(10), 8, 128),
            System::nanoTime);
    BlockCachePolicy p = policy("team-h", "p", "hangs", null);
    long t0 = System.nanoTime();
    // bounded here too, so that an unbounded call fails the test instead of hanging it
    ClusterSnapshot s =
        CompletableFuture.supplyAsync(() -> clusters.of(p, base("team-h")).snapshot(), callers)
            .get(60, TimeUnit.SECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(30));
    assertThat(s.masterReachable()).isFalse();
    assertThat(s.error()).contains("did not answer within 2 s");
    clusters.of(p, base("team-h"));
    assertThat(opened).as("the broken one replaced").hasValue(2);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(closed).hasValue(1));
  }

  /**
   * A namespace runs at most 2 HBase calls at once and the operator 3 here (6 by default): each
   * call's answer may take a sixteenth of the heap, and one tenant's 8 connections would otherwise
   * hold half of it. A call that finds no slot fails within a third of its deadline, saying why,
   * and does not break its connection.
   */
  @Test
  void aNamespaceHoldsAtMostItsShareOfTheCallsAtOnce() throws Exception {
    clusters =
        new HBaseClusters(
            connector(),
            new HBaseClusters.Limits(
                Duration.ofSeconds(5), Duration.ofSeconds(6), Duration.ofMinutes(10), 8, 128, 2, 3),
            System::nanoTime);
    List<CompletableFuture<ClusterSnapshot>> stuck = new java.util.ArrayList<>();
    for (String[] c :
        new String[][] {{"greedy", "hangs-1"}, {"greedy", "hangs-2"}, {"other", "hangs"}}) {
      BlockCachePolicy p =
          policy(c[0], c[1], c[1].startsWith("hangs") ? "hangs" : c[1], "/" + c[1]);
      stuck.add(
          CompletableFuture.supplyAsync(() -> clusters.of(p, base(c[0])).snapshot(), callers));
    }
    Thread.sleep(500); // the three are in their calls, holding their slots

    // the greedy namespace's third cluster: no slot of its own namespace
    long t0 = System.nanoTime();
    ClusterSnapshot third =
        clusters.of(policy("greedy", "p3", "zk.greedy-3", null), base("greedy")).snapshot();
    assertThat(third.masterReachable()).isFalse();
    assertThat(third.error())
        .contains("no HBase call slot")
        .contains("2 at a time for namespace greedy")
        .contains("within 2 s"); // a third of the call deadline
    // failed at its slot wait, not at the call's deadline (6 s): a behaviour bound, 3x the wait
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(6));
    // a quiet namespace: every slot of the operator's taken
    ClusterSnapshot quiet =
        clusters.of(policy("quiet", "p", "zk.quiet", null), base("quiet")).snapshot();
    assertThat(quiet.masterReachable()).isFalse();
    assertThat(quiet.error()).contains("all its slots taken");
    int openedBefore = opened.get();

    // the stuck calls end at their deadline and give their slots back: the quiet one goes on, on
    // the connection it had (a busy operator broke nothing)
    for (CompletableFuture<ClusterSnapshot> f : stuck) {
      assertThat(f.get(60, TimeUnit.SECONDS).error()).contains("did not answer within 6 s");
    }
    assertThat(
            clusters
                .of(policy("quiet", "p", "zk.quiet", null), base("quiet"))
                .snapshot()
                .masterReachable())
        .isTrue();
    assertThat(opened).hasValue(openedBefore);
  }

  @Test
  void policiesOfTwoNamespacesWithoutABaseShareNeitherSlotsNorConnections() throws Exception {
    clusters =
        new HBaseClusters(
            connector(),
            new HBaseClusters.Limits(
                Duration.ofSeconds(5), Duration.ofSeconds(6), Duration.ofMinutes(10), 8, 128, 1, 3),
            System::nanoTime);
    // the same cluster named by two namespaces, no base ConfigMap: a connection each
    clusters.of(policy("a", "p", "zk.same", null), null).snapshot();
    clusters.of(policy("b", "p", "zk.same", null), null).snapshot();
    assertThat(opened).hasValue(2);

    // namespace a's one slot held by a call that never answers: namespace b's call goes on
    BlockCachePolicy stuck = policy("a", "hangs", "hangs", null);
    CompletableFuture<ClusterSnapshot> held =
        CompletableFuture.supplyAsync(() -> clusters.of(stuck, null).snapshot(), callers);
    Thread.sleep(500); // in its call, holding a's slot
    ClusterSnapshot other = clusters.of(policy("b", "q", "zk.b", null), null).snapshot();
    assertThat(other.error()).isNull();
    assertThat(other.masterReachable()).isTrue();
    // and namespace a's next call is the one turned away
    ClusterSnapshot same = clusters.of(policy("a", "q", "zk.a", null), null).snapshot();
    assertThat(same.masterReachable()).isFalse();
    assertThat(same.error()).contains("1 at a time for namespace a");
    assertThat(held.get(60, TimeUnit.SECONDS).error()).contains("did not answer within 6 s");
  }
}
