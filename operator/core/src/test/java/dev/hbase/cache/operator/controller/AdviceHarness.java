package dev.hbase.cache.operator.controller;

/**
 * Sizing advice (spec.autoTune) on a real API server, on the shortest window the CRD allows (1m)
 * and the shortest metrics interval (10s). Each case waits out at least one window, so each is a
 * class of its own (AdviceRecommendIT, AdviceApplyIT, AdviceGrowIT): failsafe runs classes in
 * parallel forks, and the three windows pass side by side instead of one after another.
 */
abstract class AdviceHarness extends OperatorHarness {
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
