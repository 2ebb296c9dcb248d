package dev.hbase.cache.operator.controller;

import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.plan.Sizes;
import java.time.Duration;

/**
 * Sizing advice (spec.autoTune) on a real API server, on the shortest window the CRD allows (1m)
 * and the shortest metrics interval (10s). Each case waits out at least one window, so each is a
 * class of its own (AdviceRecommendIT, AdviceApplyIT, AdviceGrowIT): failsafe runs classes in
 * parallel forks, and the three windows pass side by side instead of one after another.
 */
abstract class AdviceHarness extends OperatorHarness {
  /**
   * Three RegionServers with a 4Gi limit and a full 1Gi L2, the operator, and the policy {@code
   * name} ({@code specYaml}) applied and Idle; the servers then report the planned LRU (advice is
   * only given on a window of the plan's sizes). Returns the revision rolled out.
   */
  String rolledOut(String name, String specYaml) throws Exception {
    cluster("4Gi", false);
    hbase.l2Capacity = 1L << 30;
    operator(null);
    policy(name, specYaml);
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied(name));
    BlockCachePolicy p = get(name);
    hbase.l1Capacity = Sizes.parse(p.getStatus().getPlan().getL1Size());
    return p.getStatus().getRollout().getRevision();
  }

  /**
   * Per pod and second: 50 reads from cache, 50 cold ones (each evicting a block), 100 ms of GC,
   * until the test ends.
   */
  void churnOnEveryServer() {
    var load = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    closeAfter.add(0, load::shutdownNow);
    load.scheduleAtFixedRate(
        () -> {
          for (int i = 0; i < 3; i++) {
            hbase.churn(STS + "-" + i, 50, 50, 100);
          }
        },
        0,
        1,
        java.util.concurrent.TimeUnit.SECONDS);
  }
}
