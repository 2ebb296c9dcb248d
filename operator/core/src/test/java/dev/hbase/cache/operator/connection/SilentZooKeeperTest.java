package dev.hbase.cache.operator.connection;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The operator's real HBase client ({@code AdminHBaseCluster}) against a ZooKeeper that accepts
 * connections and never answers (a tenant's quorum): through {@link HBaseClusters} its policy's
 * call ends at the connect deadline, and another policy's cluster is asked meanwhile. Without the
 * deadline (HBaseClusters before issue 49), {@code AdminHBaseCluster.connect} took 27 s there and
 * the first snapshot 10 s more, inside the cache's map lock (measured on the 2-core machine).
 */
class SilentZooKeeperTest {
  final List<Socket> held = new CopyOnWriteArrayList<>();
  ServerSocket silent;
  HBaseClusters clusters;
  final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void close() throws IOException {
    threads.shutdownNow();
    if (clusters != null) {
      clusters.close();
    }
    for (Socket s : held) {
      s.close();
    }
    if (silent != null) {
      silent.close();
    }
  }

  /** Accepts every connection and sends nothing, ever. */
  int silentZooKeeper() throws IOException {
    silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t =
        new Thread(
            () -> {
              while (!silent.isClosed()) {
                try {
                  held.add(silent.accept());
                } catch (IOException closed) {
                  return;
                }
              }
            },
            "silent-zookeeper");
    t.setDaemon(true);
    t.start();
    return silent.getLocalPort();
  }

  static HBaseConnector production() {
    return (settings, login) -> {
      try {
        return AdminHBaseCluster.connect(settings, AdminHBaseCluster.Options.defaults(), login);
      } catch (HBaseClusterException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
    };
  }

  static BlockCachePolicy at(String ns, String quorum) {
    return HBaseClustersBoundsTest.policy(ns, "p", quorum, null);
  }

  @Test
  void aSilentZooKeeperHoldsItsOwnPolicyForTheConnectDeadlineOnly() throws Exception {
    int port = silentZooKeeper();
    clusters =
        new HBaseClusters(
            production(),
            new HBaseClusters.Limits(
                Duration.ofSeconds(3), Duration.ofSeconds(5), Duration.ofMinutes(10), 8, 128),
            System::nanoTime);
    long t0 = System.nanoTime();
    CompletableFuture<Long> stuckDone = new CompletableFuture<>();
    CompletableFuture<ClusterSnapshot> stuck =
        CompletableFuture.supplyAsync(
            () -> {
              ClusterSnapshot x =
                  clusters
                      .of(at("team-s", "127.0.0.1:" + port), HBaseClustersBoundsTest.base("team-s"))
                      .snapshot();
              stuckDone.complete(System.nanoTime());
              return x;
            },
            threads);
    // meanwhile another policy's cluster (nothing listens there): its own answer, its own bound
    ClusterSnapshot refused =
        CompletableFuture.supplyAsync(
                () ->
                    clusters
                        .of(at("team-o", "127.0.0.1:1"), HBaseClustersBoundsTest.base("team-o"))
                        .snapshot(),
                threads)
            .get(60, TimeUnit.SECONDS);
    assertThat(refused.masterReachable()).isFalse();
    ClusterSnapshot s = stuck.get(60, TimeUnit.SECONDS);
    Duration took = Duration.ofNanos(stuckDone.get() - t0);
    assertThat(s.masterReachable()).isFalse();
    assertThat(s.error()).contains("did not finish within 3 s");
    // the deadline ended it (its message), not the client's own timeouts; time bound for sanity
    assertThat(took).as("the silent quorum's caller").isLessThan(Duration.ofSeconds(60));
    // the connect goes on in its own thread, into the silent ZooKeeper
    org.awaitility.Awaitility.await("the client connects to the silent ZooKeeper")
        .atMost(Duration.ofSeconds(60))
        .until(() -> !held.isEmpty());
    System.out.printf(
        "RESULT silent ZooKeeper: the policy's snapshot answered (unreachable) after %d ms"
            + " (connect deadline 3 s)%n",
        took.toMillis());
  }
}
