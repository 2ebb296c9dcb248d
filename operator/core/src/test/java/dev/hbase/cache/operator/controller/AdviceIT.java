package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.Evidence;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Sizing advice (spec.autoTune) on a real API server, on the shortest window the CRD allows (1m)
 * and the shortest metrics interval (10s): a recommendation with its evidence and nothing applied
 * (Recommend), the advice written into the spec and rolled (Apply), and advice that would grow the
 * cache volumes left to the user (Apply).
 */
@EnableKubeAPIServer
class AdviceIT extends OperatorHarness {
  /**
   * Sizing advice on a real API server: an hour's rule in a one-minute window. Every RegionServer's
   * 1Gi L2 is full and evicts at a hit ratio of 0.5 (working set ~2Gi): the status recommends a
   * 2560Mi L2 (0.95 of 2Gi with a quarter to spare, in 256Mi steps) with its evidence, an event
   * says so, and nothing is applied; once the user follows it, it no longer differs.
   */
  @Test
  void aFullL2UnderChurnGetsABiggerOneRecommendedAndNothingIsApplied() throws Exception {
    cluster("4Gi", false);
    hbase.l2Capacity = 1L << 30;
    operator(null);
    policy(
        "advice",
        "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n"
            + "  autoTune:\n    window: 1m\n");
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("advice"));
    String revision = get("advice").getStatus().getRollout().getRevision();
    List<String> deletes = List.copyOf(kube.deletes);
    // the servers report the planned LRU (advice is only given on a window of the plan's sizes)
    hbase.l1Capacity =
        dev.hbase.cache.operator.plan.Sizes.parse(get("advice").getStatus().getPlan().getL1Size());
    assertThat(get("advice").getStatus().getRecommendation())
        .as("no recommendation before any read")
        .isNull();
    churnOnEveryServer();
    await()
        .atMost(Duration.ofSeconds(150))
        .pollInterval(Duration.ofSeconds(2))
        .until(
            () ->
                get("advice").getStatus().getRecommendation() != null
                    && get("advice").getStatus().getRecommendation().getMode() != null);
    var r = get("advice").getStatus().getRecommendation();
    assertThat(r.getMode()).isEqualTo("PersistentFile");
    assertThat(r.getBucketCache()).isEqualTo("2560Mi");
    assertThat(r.getDiffers()).isTrue();
    assertThat(r.getMessage())
        .contains("the L2 (1Gi per RegionServer) is full and evicting at a hit ratio of 0.500");
    var e = r.getEvidence();
    assertThat(e.getDataReads()).isGreaterThan(1000);
    assertThat(e.getDataHitRatio()).isEqualTo(0.5);
    assertThat(e.getL2UsedFraction()).isGreaterThan(0.99);
    assertThat(e.getGcTimeFraction()).isBetween(0.05, 0.15);
    assertThat(e.getWorkingSetBytes()).isEqualTo(2L << 30);
    assertThat(Duration.between(Instant.parse(e.getFrom()), Instant.parse(e.getTo())))
        .isGreaterThanOrEqualTo(Duration.ofMinutes(1));
    eventually(
        () ->
            assertThat(events())
                .filteredOn(x -> "RecommendationChanged".equals(x.getReason()))
                .singleElement()
                .satisfies(
                    x ->
                        assertThat(x.getMessage())
                            .startsWith(
                                "recommended: mode PersistentFile, memory.bucketCache 2560Mi: ")));
    // advice only: the spec, the plan and the pods stay
    BlockCachePolicy after = get("advice");
    assertThat(after.getSpec().getMemory().getBucketCache()).isEqualTo(new Quantity("1Gi"));
    assertThat(after.getStatus().getRollout().getRevision()).isEqualTo(revision);
    assertThat(after.getStatus().getRollout().getPhase()).isEqualTo(Phase.Idle);
    assertThat(kube.deletes).isEqualTo(deletes);
    // the user follows it: the standing recommendation no longer differs, at once (not after the
    // next window: the roll and a new window take longer)
    editPolicy(
        "advice",
        p -> {
          p.getSpec().getMemory().setBucketCache(new Quantity("2560Mi"));
          return p;
        });
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> Boolean.FALSE.equals(get("advice").getStatus().getRecommendation().getDiffers()));
    assertThat(get("advice").getStatus().getRecommendation().getBucketCache()).isEqualTo("2560Mi");
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

  @Test
  void inApplyModeTheOperatorFollowsItsAdviceThroughTheSafeRoll() throws Exception {
    cluster("4Gi", false);
    hbase.l2Capacity = 1L << 30;
    operator(null);
    // volumes with room for a bigger L2: Apply never grows storage (a PVC never shrinks)
    policy(
        "apply",
        "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n  storage:\n    size: 4Gi\n"
            + "  autoTune:\n    mode: Apply\n    window: 1m\n");
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("apply"));
    String revision = get("apply").getStatus().getRollout().getRevision();
    int deletes = kube.deletes.size();
    hbase.l1Capacity =
        dev.hbase.cache.operator.plan.Sizes.parse(get("apply").getStatus().getPlan().getL1Size());
    churnOnEveryServer();
    // the first window's advice (as in Recommend mode: a bigger L2) is written into the spec
    await()
        .atMost(Duration.ofSeconds(150))
        .pollInterval(Duration.ofSeconds(2))
        .until(
            () ->
                new Quantity("2560Mi").equals(get("apply").getSpec().getMemory().getBucketCache()));
    BlockCachePolicy applied = get("apply");
    assertThat(applied.getSpec().getMode())
        .isEqualTo(dev.hbase.cache.api.v1alpha1.CacheMode.PersistentFile);
    assertThat(applied.getSpec().getAutoTune().getMode())
        .isEqualTo(dev.hbase.cache.api.v1alpha1.spec.AutoTuneSpec.Mode.Apply);
    assertThat(applied.getSpec().getTargetRef().getName()).isEqualTo(STS);
    assertThat(applied.getSpec().getStorage().getSize()).isEqualTo(new Quantity("4Gi"));
    assertThat(applied.getMetadata().getManagedFields())
        .as("written by the operator's client, not by the test's apply")
        .anySatisfy(f -> assertThat(f.getOperation()).isEqualTo("Update"));
    eventually(
        () ->
            assertThat(events())
                .filteredOn(x -> "RecommendationApplied".equals(x.getReason()))
                .singleElement()
                .satisfies(
                    x ->
                        assertThat(x.getMessage())
                            .startsWith(
                                "recommended: mode PersistentFile, memory.bucketCache 2560Mi written to the"
                                    + " spec (autoTune mode Apply): the L2 (1Gi per RegionServer) is full")));
    // then the same roll as after a user's edit: the reset announced, every pod restarted once
    // onto the new plan, and the standing advice followed
    hbase.l2Capacity = 2560L << 20;
    await()
        .atMost(Duration.ofSeconds(180))
        .pollInterval(Duration.ofSeconds(2))
        .until(
            () ->
                idleAndApplied("apply")
                    && !revision.equals(get("apply").getStatus().getRollout().getRevision()));
    assertThat(get("apply").getStatus().getPlan().getBucketCacheSize()).isEqualTo("2560Mi");
    assertThat(kube.deletes.size() - deletes).as("pods restarted by the roll").isEqualTo(3);
    for (int i = 0; i < 3; i++) {
      assertThat(pvcSize(i)).as("the volumes as they were").isEqualTo(new Quantity("4Gi"));
    }
    eventually(
        () -> assertThat(events()).extracting(x -> x.getReason()).contains("CacheResetPending"));
    var r = get("apply").getStatus().getRecommendation();
    assertThat(r.getDiffers()).isFalse();
    assertThat(r.getApplied()).isNotNull();
  }

  @Test
  void inApplyModeAdviceThatWouldGrowTheCacheVolumesIsLeftToTheUser() throws Exception {
    cluster("4Gi", false);
    hbase.l2Capacity = 1L << 30;
    operator(null);
    // storage sized from the L2 (2Gi): a 2560Mi L2 would need the volumes to grow
    policy(
        "grow",
        "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n"
            + "  autoTune:\n    mode: Apply\n    window: 1m\n");
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("grow"));
    String revision = get("grow").getStatus().getRollout().getRevision();
    List<String> deletes = List.copyOf(kube.deletes);
    hbase.l1Capacity =
        dev.hbase.cache.operator.plan.Sizes.parse(get("grow").getStatus().getPlan().getL1Size());
    churnOnEveryServer();
    await()
        .atMost(Duration.ofSeconds(150))
        .pollInterval(Duration.ofSeconds(2))
        .until(
            () ->
                events().stream().anyMatch(x -> "RecommendationNotApplied".equals(x.getReason())));
    // Two more reconciles that refused the same advice: the warning is not repeated, nothing is
    // written. Each reconcile of an idle roll runs autoTune Apply while the recommendation differs
    // (asserted below) and, before it writes the status, adds its metrics sample to the
    // recommendation's window: status.recommendation.window.to (evidence.to when that sample
    // completed a window) is the time of its sample. A sample later than the moment the test saw
    // the warning belongs to a later reconcile than the one that warned (whose sample precedes its
    // event); two distinct ones prove two more reconciles went through the refusal, and the churn
    // puts reads in every sample. (It was a fixed 25 s, about two 10 s intervals, which a loaded
    // machine could fill with fewer reconciles.)
    Instant warned = Instant.now();
    Set<String> samplesAfter = new HashSet<>();
    await("two more reconciles after the RecommendationNotApplied warning")
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              var rec = get("grow").getStatus().getRecommendation();
              for (Evidence sample : Arrays.asList(rec.getWindow(), rec.getEvidence())) {
                if (sample != null
                    && sample.getTo() != null
                    && Instant.parse(sample.getTo()).isAfter(warned)) {
                  samplesAfter.add(sample.getTo());
                }
              }
              return samplesAfter.size() >= 2;
            });
    eventually(
        () ->
            assertThat(events())
                .filteredOn(x -> "RecommendationNotApplied".equals(x.getReason()))
                .singleElement()
                .satisfies(
                    x -> {
                      assertThat(x.getType()).isEqualTo("Warning");
                      assertThat(x.getCount()).isIn(null, 1);
                      assertThat(x.getMessage())
                          .isEqualTo(
                              "recommended: mode PersistentFile, memory.bucketCache 2560Mi (autoTune mode"
                                  + " Apply) is not written to the spec: its cache volumes would grow from"
                                  + " 2Gi to 4Gi per RegionServer; a volume never shrinks and the operator"
                                  + " never deletes one, so autoTune Apply leaves storage to you: give"
                                  + " storage.size room for it, or follow the advice yourself");
                    }));
    BlockCachePolicy after = get("grow");
    assertThat(after.getSpec().getMemory().getBucketCache()).isEqualTo(new Quantity("1Gi"));
    assertThat(after.getSpec().getStorage()).isNull();
    assertThat(after.getStatus().getRecommendation().getDiffers()).isTrue();
    assertThat(after.getStatus().getRecommendation().getApplied()).isNull();
    assertThat(after.getStatus().getRollout().getRevision()).isEqualTo(revision);
    assertThat(kube.deletes).isEqualTo(deletes);
    for (int i = 0; i < 3; i++) {
      assertThat(pvcSize(i)).isEqualTo(new Quantity("2Gi"));
    }
  }
}
