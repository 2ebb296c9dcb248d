package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Sizing advice in Apply mode: the advice written into the spec and rolled. */
@EnableKubeAPIServer
class AdviceApplyIT extends AdviceHarness {
  @Test
  void inApplyModeTheOperatorFollowsItsAdviceThroughTheSafeRoll() throws Exception {
    // volumes with room for a bigger L2: Apply never grows storage (a PVC never shrinks)
    String revision =
        rolledOut(
            "apply",
            "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n  storage:\n    size: 4Gi\n"
                + "  autoTune:\n    mode: Apply\n    window: 1m\n");
    int deletes = kube.deletes.size();
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
}
