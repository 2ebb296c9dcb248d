package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.isTrue;
import static dev.hbase.cache.e2e.RollObserver.ROLL_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.MetricsSpec;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Event;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Step 19 (tag {@code advice}), the suite's last: sizing advice from real RegionServers, under an
 * Lru policy on the StatefulSet the deleted PersistentFile policy left (taken over: one roll onto
 * the Lru configuration). It runs after the namespace install (step 18, whose operator it runs
 * under), so that step 18 takes over pods that still hold the suite's PersistentFile caches and
 * measures that takeover roll (after Lru pods it would have had to refill them first: 90 s).
 */
@Tag("advice")
class AdviceScenarios extends KindScenario {
  /** Its start: an operator (the namespace-scoped one after the namespace step), the reader. */
  @Override
  List<Need> needs() {
    return List.of(Needs.HBASE_UP, Needs.AN_OPERATOR, Needs.READER);
  }

  /**
   * The Lru policy of step 19: its L1 is a small share of the heap, so the reader's working set
   * outgrows it.
   */
  static final String ADVICE_POLICY = "lru-advice";

  @Test
  @Order(1)
  void aWorkingSetThatOutgrowsTheLruGetsAnOffheapRecommendation() {
    step(
        "19. sizing advice from real RegionServers: an LRU the reader's working set outgrows gets an Offheap recommendation",
        () -> {
          // one policy per StatefulSet: the PersistentFile policy goes first (step 18's; the
          // operator that made it, whichever is installed, gives HBase back in its finalizer)
          deletePolicy(Cluster.POLICY);
          // examples/lru.yaml on the StatefulSet the deleted policy left, with an L1 of 2% of the
          // heap (the table's 200 MB of
          // values do not fit), the HMaster left alone, and a 1-minute advice window; the reader
          // goes on reading the whole table
          BlockCachePolicy p =
              client
                  .resources(BlockCachePolicy.class)
                  .load(repo.resolve("examples/lru.yaml").toFile())
                  .item();
          p.getMetadata().setName(ADVICE_POLICY);
          p.getMetadata().setNamespace(cluster.ns);
          p.getSpec().setMasterRef(null);
          p.getSpec().getMemory().setBlockCacheFraction(0.02);
          p.getSpec().setMetrics(new MetricsSpec().setInterval("10s"));
          p.getSpec()
              .setAutoTune(new dev.hbase.cache.api.v1alpha1.spec.AutoTuneSpec().setWindow("1m"));
          var lru =
              client
                  .resources(BlockCachePolicy.class)
                  .inNamespace(cluster.ns)
                  .withName(ADVICE_POLICY);
          watch.reset();
          Instant t0 = Instant.now();
          client.resource(p).create();
          // a policy the operator refuses does not become valid by waiting (CI once waited 25 min
          // on ConfigVolumeNotFound)
          BlockCachePolicy rolled =
              await("Lru policy rolled: Idle, Ready=True")
                  .atMost(ROLL_TIMEOUT)
                  .pollInterval(Duration.ofSeconds(2))
                  .failFast(
                      "the operator refused the policy",
                      () -> {
                        BlockCachePolicy x = lru.get();
                        var conditions =
                            x == null
                                    || x.getStatus() == null
                                    || x.getStatus().getConditions() == null
                                ? List.<io.fabric8.kubernetes.api.model.Condition>of()
                                : x.getStatus().getConditions();
                        assertThat(conditions)
                            .as("conditions of %s", ADVICE_POLICY)
                            .noneMatch(
                                c -> "Valid".equals(c.getType()) && "False".equals(c.getStatus()));
                      })
                  .ignoreExceptions()
                  .until(
                      lru::get,
                      x ->
                          x.getStatus() != null
                              && x.getStatus().getRollout() != null
                              && x.getStatus().getRollout().getPhase() == RolloutStatus.Phase.Idle
                              && isTrue(x, "Ready")
                              && x.getStatus().getRollout().getLastRoll() != null);
          Instant rolledAt = Instant.now();
          var plan = rolled.getStatus().getPlan();
          report.line(
              "- examples/lru.yaml as `%s`, memory.blockCacheFraction 0.02, autoTune.window 1m: rolled to Idle in %d s (max down at once %d); plan heap %s, L1 %s",
              ADVICE_POLICY,
              Duration.between(t0, rolledAt).toSeconds(),
              watch.maxDown(),
              plan.getHeap(),
              plan.getL1Size());
          assertThat(watch.maxDown())
              .as("RegionServers down at once in the switch to Lru")
              .isLessThanOrEqualTo(1);
          BlockCachePolicy advised =
              await("a recommendation from a complete window with reads")
                  .atMost(Duration.ofMinutes(5))
                  .pollInterval(Duration.ofSeconds(5))
                  .ignoreExceptions()
                  .until(
                      lru::get,
                      x ->
                          x.getStatus().getRecommendation() != null
                              && x.getStatus().getRecommendation().getEvidence() != null
                              && x.getStatus().getRecommendation().getEvidence().getDataReads()
                                  != null
                              && x.getStatus().getRecommendation().getEvidence().getDataReads()
                                  >= 1000);
          var advice = advised.getStatus().getRecommendation();
          var ev = advice.getEvidence();
          report.line(
              "- %d s after the roll: status.recommendation mode %s, bucketCache %s, differs %s: %s",
              Duration.between(rolledAt, Instant.now()).toSeconds(),
              advice.getMode(),
              advice.getBucketCache(),
              advice.getDiffers(),
              advice.getMessage());
          report.line(
              "- evidence (%s .. %s): %d data reads, hit ratio %s, %d evictions, L1 %s full of %.1f MiB, GC %s of the time, working set ~%.0f MiB",
              ev.getFrom(),
              ev.getTo(),
              ev.getDataReads(),
              Report.ratio(ev.getDataHitRatio()),
              ev.getEvictions(),
              ev.getL1UsedFraction() == null
                  ? "?"
                  : String.format("%.0f%%", 100 * ev.getL1UsedFraction()),
              ev.getL1CapacityBytes() == null ? 0.0 : ev.getL1CapacityBytes() / 1048576.0,
              ev.getGcTimeFraction() == null
                  ? "?"
                  : String.format("%.1f%%", 100 * ev.getGcTimeFraction()),
              ev.getWorkingSetBytes() == null ? 0.0 : ev.getWorkingSetBytes() / 1048576.0);
          List<Event> changed =
              await("RecommendationChanged event")
                  .atMost(Duration.ofSeconds(30))
                  .pollInterval(Duration.ofSeconds(2))
                  .until(
                      () ->
                          client.v1().events().inNamespace(cluster.ns).list().getItems().stream()
                              .filter(
                                  e ->
                                      e.getInvolvedObject() != null
                                          && ADVICE_POLICY.equals(e.getInvolvedObject().getName()))
                              .filter(e -> "RecommendationChanged".equals(e.getReason()))
                              .toList(),
                      l -> !l.isEmpty());
          changed.forEach(e -> report.line("- event RecommendationChanged: %s", e.getMessage()));
          assertThat(advice.getMode())
              .as("recommended mode for an LRU the working set outgrows")
              .isEqualTo("Offheap");
          assertThat(advice.getDiffers()).as("the advice differs from the spec").isTrue();
          assertThat(advice.getBucketCache()).as("the recommended L2").isNotBlank();
          assertThat(ev.getEvictions()).as("LRU evictions in the window").isPositive();
          assertThat(ev.getDataHitRatio()).as("data hit ratio in the window").isLessThan(0.95);
          assertThat(changed).as("RecommendationChanged events").isNotEmpty();
          assertThat(lru.get().getSpec().getMode().toString())
              .as("Recommend applies nothing")
              .isEqualTo("Lru");
          Workload.Stats s = Workload.stats(workload.log(READER), t0, Instant.now());
          report.line("- reader from the policy's create to the advice: %s", s.summary());
          assertThat(s.fail()).as("failed reads while the RegionServers switched to Lru").isZero();
          summary.add(
              String.format(
                  "sizing advice from real metrics: Lru with L1 %s, hit ratio %s, %d evictions in a 1 min window -> %s %s; 0 failed reads",
                  plan.getL1Size(),
                  Report.ratio(ev.getDataHitRatio()),
                  ev.getEvictions(),
                  advice.getMode(),
                  advice.getBucketCache()));
        });
  }
}
