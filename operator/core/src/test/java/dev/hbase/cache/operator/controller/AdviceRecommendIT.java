package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Sizing advice in Recommend mode: a recommendation with its evidence, and nothing applied. */
@EnableKubeAPIServer
class AdviceRecommendIT extends AdviceHarness {
  /**
   * Sizing advice on a real API server: an hour's rule in a one-minute window. Every RegionServer's
   * 1Gi L2 is full and evicts at a hit ratio of 0.5 (working set ~2Gi): the status recommends a
   * 2560Mi L2 (0.95 of 2Gi with a quarter to spare, in 256Mi steps) with its evidence, an event
   * says so, and nothing is applied; once the user follows it, it no longer differs.
   */
  @Test
  void aFullL2UnderChurnGetsABiggerOneRecommendedAndNothingIsApplied() throws Exception {
    String revision =
        rolledOut(
            "advice",
            "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n"
                + "  autoTune:\n    window: 1m\n");
    List<String> deletes = List.copyOf(kube.deletes);
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
}
