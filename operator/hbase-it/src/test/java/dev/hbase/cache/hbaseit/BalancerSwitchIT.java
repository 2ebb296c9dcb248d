package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.MasterRef;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.Planner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.junit.jupiter.api.Test;

/**
 * Why {@link AdminHBaseCluster#balancer} switches asynchronously. HMaster.balance holds the
 * balancer's lock for its whole run, and the CacheAwareLoadBalancer (which the planner configures
 * on the master for PersistentFile) sleeps {@code hbase.master.balancer.move.throttlingMillis} (60
 * s by default) after each move of a region without cache affinity. A synchronous switch waits for
 * that lock: on kind, the "balancer off" at the start of a roll timed out for ~4.5 min.
 *
 * <p>Here, with the planner's master keys on a real HMaster and two RegionServers: all regions of a
 * table born on one server before the other starts, balancer on, the balancer chore starts moving
 * them and sleeps after the first move. The operator's switch answers and the balancer is off; a
 * synchronous switch at the same moment still times out.
 */
class BalancerSwitchIT {

  @Test
  void switchingTheBalancerOffDoesNotWaitForACacheAwareBalanceRun() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeFalse(
        LocalHBase.line25(),
        "HBase "
            + LocalHBase.SERVER_VERSION
            + " has no CacheAwareLoadBalancer: the planner configures none (HBaseLineIT shows a 2.5"
            + " master with it does not start)");
    // the master keys the operator applies through spec.masterRef
    Plan plan =
        (Plan)
            Planner.plan(
                Plans.policy(CacheMode.PersistentFile, Path.of("/unused"))
                    .setMasterRef(new MasterRef().setName("hbase-master")),
                Plans.MEMORY_LIMIT,
                null);
    Map<String, String> masterSite = new LinkedHashMap<>(plan.masterSite());
    assertThat(masterSite)
        .containsEntry(
            "hbase.master.loadbalancer.class",
            "org.apache.hadoop.hbase.master.balancer.CacheAwareLoadBalancer");
    masterSite.put("hbase.balancer.period", "3000"); // the chore runs soon after the switch
    masterSite.put("hbase.balancer.max.balancing", "300000");

    try (LocalHBase hbase = LocalHBase.start("balancer", 2, masterSite)) {
      for (int i = 0; i < 2; i++) {
        hbase.startRegionServer(
            i,
            Plans.settings(
                Plans.plan(
                    CacheMode.PersistentFile,
                    Files.createDirectories(hbase.dir.resolve("cache-rs" + i)))));
        if (i == 0) {
          // the table's regions are born on rs0 and have never been on rs1: the balancer's moves
          // to rs1 have no cache affinity there, so each is throttled. (Moving them onto rs0 from
          // rs1 made rs1 their "old server": a move back, with their blocks cached there as the
          // server had reported by then, is not throttled; on a loaded machine those reports came
          // in before the balance run, the run ended in seconds and held no lock to wait for.)
          try (AdminHBaseCluster early = hbase.admin()) {
            hbase.awaitRegionServerReported(early, 0, Duration.ofSeconds(90));
            early.balancer(false);
          }
          TestTable.create(hbase.connection(), "skew", 600, 6);
        }
      }
      try (AdminHBaseCluster admin = hbase.admin()) {
        ServerId rs0 = hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
        hbase.awaitRegionServerReported(admin, 1, Duration.ofSeconds(90));
        List<String> regions = tableRegions(hbase, "skew");
        assertThat(admin.snapshot().live(rs0).orElseThrow().regions()).containsAll(regions);

        // The chore's balance run moves one region (hbase:meta or a table region), then sleeps
        // 60 s holding the lock. The witness's client is opened before the run starts: opening a
        // connection took long enough on a loaded machine (.ci/run with two lanes on 2 cores) for
        // the run to end first, and then a synchronous switch has nothing to wait for.
        try (Connection c = shortTimeouts(hbase);
            Admin raw = c.getAdmin()) {
          raw.isBalancerEnabled(); // the master's stub, ready before the timed part
          Map<String, ServerId> before = admin.snapshot().locations();
          assertThat(admin.balancer(true)).isFalse();
          await("the balancer's first move")
              .atMost(Duration.ofSeconds(90))
              .pollInterval(Duration.ofMillis(250))
              .until(() -> !admin.snapshot().locations().equals(before));
          Instant moved1 = Instant.now();

          Instant t0 = Instant.now();
          boolean wasOn = admin.balancer(false);
          Duration took = Duration.between(t0, Instant.now());
          assertThat(wasOn).isTrue();
          assertThat(raw.isBalancerEnabled()).as("off at once").isFalse();
          // What the operator did before: the synchronous switch waits for the running balance
          // (the witness that the run held the lock while the operator's switch answered).
          Instant w0 = Instant.now();
          assertThatThrownBy(() -> raw.balancerSwitch(false, true))
              .as(
                  "a synchronous switch %d ms after the balancer's first move: it must wait for the"
                      + " run that holds the lock",
                  Duration.between(moved1, w0).toMillis())
              .isInstanceOf(IOException.class);
          int moved = regionsOffRs0(admin.snapshot(), rs0, regions);
          System.out.printf(
              "RESULT balancer switch during a CacheAwareLoadBalancer run: asynchronous off answered in %d ms"
                  + " (%d of %d regions moved so far); a synchronous switch %d ms after the first"
                  + " move timed out%n",
              took.toMillis(), moved, regions.size(), Duration.between(moved1, w0).toMillis());
        }
      }
    }
  }

  private static int regionsOffRs0(ClusterSnapshot s, ServerId rs0, List<String> regions) {
    return (int)
        s.live().stream()
            .filter(x -> !x.id().equals(rs0))
            .flatMap(x -> x.regions().stream())
            .filter(regions::contains)
            .count();
  }

  private static List<String> tableRegions(LocalHBase hbase, String table) throws IOException {
    try (Admin a = hbase.connection().getAdmin()) {
      return a.getRegions(TableName.valueOf(table)).stream()
          .map(RegionInfo::getEncodedName)
          .toList();
    }
  }

  /** A client that gives up on a master call after a few seconds. */
  private static Connection shortTimeouts(LocalHBase hbase) throws IOException {
    Configuration conf = HBaseConfiguration.create();
    hbase.clientSettings().forEach(conf::set);
    conf.setInt("hbase.client.retries.number", 1);
    conf.setInt("hbase.rpc.timeout", 3000);
    conf.setInt("hbase.client.operation.timeout", 5000);
    return ConnectionFactory.createConnection(conf);
  }
}
