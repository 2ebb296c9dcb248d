package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.Evidence;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Sizing advice in Apply mode that would grow the cache volumes: left to the user, said once. */
@EnableKubeAPIServer
class AdviceGrowIT extends AdviceHarness {
  @Test
  void inApplyModeAdviceThatWouldGrowTheCacheVolumesIsLeftToTheUser() throws Exception {
    // storage sized from the L2 (2Gi): a 2560Mi L2 would need the volumes to grow
    String revision =
        rolledOut(
            "grow",
            "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n"
                + "  autoTune:\n    mode: Apply\n    window: 1m\n");
    List<String> deletes = List.copyOf(kube.deletes);
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
