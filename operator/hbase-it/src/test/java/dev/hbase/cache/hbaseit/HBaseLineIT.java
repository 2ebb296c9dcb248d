package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.plan.HBaseLine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the planner's version awareness rests on, on the real release under test ({@link
 * LocalHBase#SERVER_VERSION}; {@code make test-hbase HBASE_VERSION=2.5.13-hadoop3} for the 2.5
 * line): the HMaster reports its version to the operator's 2.6.4 client (what the policy's
 * spec.hbase.version is compared with), and the master keys the planner writes for that line are
 * ones the master starts with. On 2.5, a master given 2.6's {@code CacheAwareLoadBalancer}, which
 * the planner wrote for every PersistentFile policy with a masterRef before it knew the line, does
 * not come up: the reason the planner writes no such key for 2.5.
 */
class HBaseLineIT {

  @Test
  void theMasterReportsItsVersionAndStartsWithThePlannersKeysForItsLine() throws Exception {
    Map<String, String> master;
    if (LocalHBase.line25()) {
      // PersistentFile is refused naming the line; File, what it offers instead, has no master keys
      assertThatThrownBy(() -> Plans.plan(CacheMode.PersistentFile, Path.of("/unused/cache")))
          .hasMessageContaining("mode PersistentFile: HBase 2.5's BucketCache");
      master = Plans.plan(Plans.persistentOrFile(), Path.of("/unused/cache")).masterSite();
      assertThat(master).isEmpty();
    } else {
      master = Plans.plan(CacheMode.PersistentFile, Path.of("/unused/cache")).masterSite();
      assertThat(master)
          .containsEntry(
              "hbase.master.loadbalancer.class",
              "org.apache.hadoop.hbase.master.balancer.CacheAwareLoadBalancer");
    }
    try (LocalHBase hbase = LocalHBase.start("line", 1, master)) {
      hbase.startRegionServer(
          0,
          Plans.settings(
              Plans.plan(
                  Plans.persistentOrFile(), Files.createDirectories(hbase.dir.resolve("cache")))));
      AdminHBaseCluster admin = hbase.admin();
      hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(120));
      ClusterSnapshot s = admin.snapshot();
      System.out.printf(
          "RESULT HBase %s: the master reports version %s%n",
          LocalHBase.SERVER_VERSION, s.masterVersion());
      assertThat(LocalHBase.SERVER_VERSION).startsWith(s.masterVersion());
      assertThat(HBaseLine.of(s.masterVersion()).map(l -> l.line))
          .contains(LocalHBase.serverLine());
      // the policy Plans makes names the line under test: no mismatch; the other line: one
      assertThat(HBaseLine.mismatch(Plans.policy(CacheMode.Lru, Path.of("/x")), s.masterVersion()))
          .isEmpty();
      assertThat(
              HBaseLine.mismatch(
                  Plans.policy(CacheMode.Lru, Path.of("/x"))
                      .setHbase(
                          new dev.hbase.cache.api.v1alpha1.spec.HBaseSpec()
                              .setVersion(LocalHBase.line25() ? "2.6" : "2.5")),
                  s.masterVersion()))
          .hasValueSatisfying(m -> assertThat(m).contains("reports HBase " + s.masterVersion()));
      assertThat(hbase.master().alive()).isTrue();
    }
  }

  @Test
  void aTwoFiveMasterGivenTheCacheAwareBalancerDoesNotStart() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        LocalHBase.line25(), "the 2.5 line only (2.6 has the CacheAwareLoadBalancer)");
    Map<String, String> master =
        Map.of(
            "hbase.master.loadbalancer.class",
            "org.apache.hadoop.hbase.master.balancer.CacheAwareLoadBalancer",
            "hbase.bucketcache.persistent.path",
            "/unused/bucketcache.map");
    LocalHBase hbase;
    try {
      hbase = LocalHBase.start("line-cacheaware", 1, master);
    } catch (RuntimeException exitedBeforeItsPort) {
      // it did not come up at all
      assertThat(exitedBeforeItsPort).hasMessageContaining("master exited");
      System.out.println(
          "RESULT HBase 2.5 master with CacheAwareLoadBalancer: " + exitedBeforeItsPort);
      return;
    }
    try (hbase) {
      hbase.startRegionServer(
          0, Plans.settings(Plans.plan(CacheMode.Lru, hbase.dir.resolve("cache"))));
      await("the 2.5 master with CacheAwareLoadBalancer exits")
          .atMost(Duration.ofMinutes(3))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> !hbase.master().alive());
      String log = Files.readString(hbase.master().log);
      assertThat(log).contains("CacheAwareLoadBalancer");
      System.out.println(
          "RESULT HBase 2.5 master with CacheAwareLoadBalancer: exited; "
              + log.lines()
                  .filter(l -> l.contains("CacheAwareLoadBalancer"))
                  .findFirst()
                  .orElse(""));
    }
  }
}
