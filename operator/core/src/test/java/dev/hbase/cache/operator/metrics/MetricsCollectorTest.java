package dev.hbase.cache.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.spec.MetricsSpec;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.MDCUtils;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** The roll's own figure: every RegionServer's data reads while it runs, restarts included. */
class MetricsCollectorTest {
  Instant now = Instant.parse("2026-11-23T10:00:00Z");
  final SimulatedHBase hbase = new SimulatedHBase(() -> now);
  final MetricsCollector metrics = new MetricsCollector();
  final InfoServers info = InfoServers.byIp(hbase.probe(), 16030);

  static PodView pod(String name, String ip, boolean ready) {
    return new PodView(name, name + "-uid", 0, "rev", ready, false, null, ip, false, false);
  }

  @Test
  void aRollCountsEveryServersReadsFromItsFirstDrainToItsEndRestartsIncluded() {
    BlockCachePolicy policy = new BlockCachePolicy();
    policy.setMetadata(new ObjectMetaBuilder().withName("p").withUid("uid-1").build());
    policy.setSpec(new BlockCachePolicySpec().setMetrics(new MetricsSpec().setInterval("30s")));
    hbase.register("rs-0", "rs-0.x", "10.0.0.1", List.of());
    hbase.register("rs-1", "rs-1.x", "10.0.0.2", List.of());
    hbase.reads("rs-0", 1000, 0); // before the roll: not its business
    hbase.reads("rs-1", 1000, 0);
    List<PodView> pods = List.of(pod("rs-0", "10.0.0.1", true), pod("rs-1", "10.0.0.2", true));
    BlockCachePolicyStatus status = new BlockCachePolicyStatus();
    metrics.update(policy, info, status, pods, true, now); // an ordinary interval sample
    RollSummary roll = new RollSummary().setStartedAt(now.plusSeconds(2).toString());
    status.setRollout(new RolloutStatus().setCurrent(roll));

    now = now.plusSeconds(3); // the roll started: its baseline, however recent the last sample
    hbase.reads("rs-0", 500, 0);
    metrics.update(policy, info, status, pods, true, now);
    assertThat(roll.getDataReads()).isZero();

    now = now.plusSeconds(5); // sampled every 5 s during a roll, not every 30 s
    hbase.reads("rs-0", 90, 10); // rs-1 drained: its regions cold on rs-0 for now
    metrics.update(policy, info, status, pods, true, now);
    assertThat(roll.getDataReads()).isEqualTo(100);
    assertThat(roll.getCachedReads()).isEqualTo(90);

    // rs-1 restarts: down for a sample, then its new instance counts from its start
    hbase.unregister("rs-1");
    now = now.plusSeconds(5);
    hbase.reads("rs-0", 100, 0);
    metrics.update(
        policy, info, status, List.of(pods.get(0), pod("rs-1", "10.0.0.2", false)), true, now);
    hbase.register("rs-1", "rs-1.x", "10.0.0.2", List.of());
    hbase.reads("rs-1", 300, 0);
    now = now.plusSeconds(5);
    metrics.update(policy, info, status, pods, true, now);
    assertThat(roll.getDataReads()).isEqualTo(500);
    assertThat(roll.getCachedReads()).isEqualTo(490);
    assertThat(roll.getCachedReadRatio()).isEqualTo(0.98);

    // the operator restarts mid-roll: no sample in memory, so its first one is a baseline (rs-1's
    // 300 reads since its start are in the figure already)
    MetricsCollector restarted = new MetricsCollector();
    now = now.plusSeconds(5);
    hbase.reads("rs-1", 50, 0);
    restarted.update(policy, info, status, pods, true, now);
    assertThat(roll.getDataReads()).isEqualTo(500);
    now = now.plusSeconds(5);
    hbase.reads("rs-1", 100, 0);
    restarted.update(policy, info, status, pods, true, now);
    assertThat(roll.getDataReads()).isEqualTo(600);
  }

  /**
   * Each RegionServer's own counters in its row (the per-pod counters on /metrics): a pod that is
   * not Ready keeps its last figures (not scraped, its row as it was), and its restart starts them
   * from 0 as its RegionServer's do. Nothing else about the other pods changes.
   */
  @Test
  void eachPodsCountersAreItsOwnAndGoDownOnlyWhenItRestarts() {
    BlockCachePolicy policy = new BlockCachePolicy();
    policy.setMetadata(new ObjectMetaBuilder().withName("p").withUid("uid-3").build());
    policy.setSpec(new BlockCachePolicySpec().setMetrics(new MetricsSpec().setInterval("30s")));
    hbase.register("rs-0", "rs-0.x", "10.0.0.1", List.of());
    hbase.register("rs-1", "rs-1.x", "10.0.0.2", List.of());
    hbase.churn("rs-0", 100, 40, 0);
    hbase.churn("rs-1", 100, 25, 0);
    List<PodView> pods = List.of(pod("rs-0", "10.0.0.1", true), pod("rs-1", "10.0.0.2", true));
    BlockCachePolicyStatus status = new BlockCachePolicyStatus();
    metrics.update(policy, info, status, pods, false, now);
    assertThat(status.getRegionServers())
        .extracting(RegionServerStatus::getPod, RegionServerStatus::getEvictions)
        .containsExactly(tuple("rs-0", 40L), tuple("rs-1", 25L));

    // rs-1 goes down: its row keeps 25 (the cluster's sum in status.cache drops: not a counter)
    hbase.unregister("rs-1");
    hbase.churn("rs-0", 100, 10, 0);
    now = now.plusSeconds(30);
    metrics.update(
        policy, info, status, List.of(pods.get(0), pod("rs-1", "10.0.0.2", false)), false, now);
    assertThat(status.getRegionServers())
        .extracting(RegionServerStatus::getPod, RegionServerStatus::getEvictions)
        .containsExactly(tuple("rs-0", 50L), tuple("rs-1", 25L));

    // its new instance counts from its own start
    hbase.register("rs-1", "rs-1.x", "10.0.0.2", List.of());
    hbase.churn("rs-1", 100, 3, 0);
    now = now.plusSeconds(30);
    metrics.update(policy, info, status, pods, false, now);
    assertThat(status.getRegionServers())
        .extracting(RegionServerStatus::getPod, RegionServerStatus::getEvictions)
        .containsExactly(tuple("rs-0", 50L), tuple("rs-1", 3L));
    assertThat(status.getRegionServers())
        .allSatisfy(r -> assertThat(r.getFailedInsertions()).as(r.getPod()).isNotNull());
  }

  /**
   * A policy's servers are scraped at once: rs-0's /jmx answers only once the other two servers'
   * scrapes have begun. Scraped one after the other, rs-0 (first) would wait its 10 s out and
   * report nothing.
   */
  @Test
  void aSlowServerDoesNotHoldBackTheOtherServersScrapes() {
    BlockCachePolicy policy = new BlockCachePolicy();
    policy.setMetadata(new ObjectMetaBuilder().withName("p").withUid("uid-2").build());
    policy.setSpec(new BlockCachePolicySpec().setMetrics(new MetricsSpec().setInterval("30s")));
    List<PodView> pods = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      hbase.register("rs-" + i, "rs-" + i + ".x", "10.0.0." + (i + 1), List.of());
      hbase.reads("rs-" + i, 100, 0);
      pods.add(pod("rs-" + i, "10.0.0." + (i + 1), true));
    }
    CacheProbe fast = hbase.probe();
    java.util.concurrent.CountDownLatch others = new java.util.concurrent.CountDownLatch(2);
    CacheProbe slow =
        (host, port) -> {
          if (host.equals("10.0.0.1")) {
            try {
              if (!others.await(10, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new java.io.IOException("no answer: the others were not asked meanwhile");
              }
            } catch (InterruptedException e) {
              throw new java.io.IOException(e);
            }
          } else {
            others.countDown();
          }
          return fast.scrape(host, port);
        };
    MetricsCollector parallel = new MetricsCollector();
    BlockCachePolicyStatus status = new BlockCachePolicyStatus();
    parallel.update(policy, InfoServers.byIp(slow, 16030), status, pods, true, now);
    assertThat(status.getRegionServers())
        .allSatisfy(r -> assertThat(r.getCumulativeHitRatio()).as(r.getPod()).isEqualTo(1.0));
    assertThat(parallel.probeNow(InfoServers.byIp(slow, 16030), pods))
        .containsOnlyKeys("rs-0", "rs-1", "rs-2");
    parallel.close();
  }

  /** A scrape's lines (on the scrape pool) name the policy, as the reconcile's own lines do. */
  @Test
  void aScrapeRunsInTheLoggingContextOfTheReconcile() {
    BlockCachePolicy policy = new BlockCachePolicy();
    policy.setMetadata(
        new ObjectMetaBuilder().withName("hot-cache").withNamespace("shop").withUid("u").build());
    policy.setSpec(new BlockCachePolicySpec().setMetrics(new MetricsSpec().setInterval("30s")));
    hbase.register("rs-0", "rs-0.x", "10.0.0.1", List.of());
    CacheProbe probe = hbase.probe();
    List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    MetricsCollector tagged = new MetricsCollector();
    CacheProbe recording =
        (host, port) -> {
          seen.add(
              Thread.currentThread().getName()
                  + " "
                  + MDC.get("resource.namespace")
                  + "/"
                  + MDC.get("resource.name"));
          return probe.scrape(host, port);
        };
    MDCUtils.addResourceInfo(policy); // as JOSDK does around a reconcile
    try {
      tagged.probeNow(InfoServers.byIp(recording, 16030), List.of(pod("rs-0", "10.0.0.1", true)));
    } finally {
      MDCUtils.removeResourceInfo();
      tagged.close();
    }
    assertThat(seen).singleElement().asString().matches("jmx-scrape-\\d+ shop/hot-cache");
  }
}
