package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.BlockCacheOperator;
import dev.hbase.cache.operator.render.SiteXml;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What stops, holds or takes over a roll on a real API server: a pod that never gets Ready, a
 * policy made invalid mid-roll, the operator restarted or failed over mid-roll, the policy deleted
 * mid-roll, a new policy on the StatefulSet a deleted one left, and the policies refused before
 * they touch anything (a second one on the same StatefulSet, a plan that cannot work).
 */
@EnableKubeAPIServer
class RollFaultsIT extends OperatorHarness {
  @Test
  void aPodThatNeverGetsReadyBlocksTheRoll() {
    cluster("4Gi", false);
    kube.neverReady.add("rs-1"); // first in line: fewest regions
    operator(null);
    policy("blocked", "  mode: Lru\n  rollout:\n    podReadyTimeout: 30s\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> condition("blocked", "Degraded", "True"));
    BlockCachePolicy p = get("blocked");
    assertThat(p.getStatus().getRollout().getPhase()).isEqualTo(Phase.Blocked);
    assertThat(p.getStatus().getRollout().getMessage()).contains("rs-1").contains("not Ready");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e -> "RollBlocked".equals(e.getReason()) && e.getMessage().contains("rs-1")));
    await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(8)).until(() -> true);
    assertThat(kube.deletes).containsExactly("rs-1");

    // the cause goes away: the roll finishes
    kube.neverReady.clear();
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("blocked"));
    assertThat(condition("blocked", "Degraded", "False")).isTrue();
    assertThat(kube.deleteCount)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
  }

  @Test
  void aPolicyMadeInvalidMidRollGivesTheBalancerBackAndTheRollResumesWhenValid() {
    cluster("4Gi", false);
    kube.readyAfter = Duration.ofSeconds(5);
    operator(null);
    policy("held", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> kube.deletes.size() == 1);
    assertThat(hbase.balancerOn).isFalse();
    mergePatch("held", "{\"spec\":{\"memory\":{\"heap\":\"64Gi\"}}}");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                condition("held", "Valid", "False")
                    && condition("held", "Degraded", "True")
                    && hbase.balancerOn);
    BlockCachePolicy held = get("held");
    assertThat(held.getStatus().getRollout().getPhase()).isEqualTo(Phase.Blocked);
    assertThat(held.getStatus().getRollout().getMessage()).contains("held while the policy");
    eventually(() -> assertThat(events()).anyMatch(e -> "RollHeld".equals(e.getReason())));
    await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(15)).until(() -> true);
    assertThat(kube.deletes).as("nothing restarted while invalid").hasSize(1);
    assertThat(hbase.balancerOn).as("the balancer stays as it was before the roll").isTrue();

    mergePatch("held", "{\"spec\":{\"memory\":{\"heap\":null}}}");
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("held"));
    assertThat(kube.deletes).as("each pod restarted once").hasSize(3);
    assertThat(hbase.balancerOn).isTrue();
    assertThat(hbase.snapshot().live()).noneMatch(x -> x.decommissioned());
    assertThat(condition("held", "Degraded", "False")).isTrue();
  }

  @Test
  void aRestartedOperatorResumesWithoutRestartingAPodTwice() {
    cluster("4Gi", false);
    BlockCacheOperator first = operator(null);
    policy("resume", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> kube.deletes.size() >= 1);
    first.stop(); // mid-roll
    int deletedSoFar = kube.deletes.size();
    assertThat(deletedSoFar).isLessThan(3);
    operator(null);
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("resume"));
    assertThat(kube.deleteCount)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
    assertThat(kube.maxDown).isEqualTo(1);
  }

  @Test
  void aSecondReplicaTakesOverAndTheRollContinues() {
    cluster("4Gi", false);
    var a = operator(leader("op-a"));
    await().atMost(Duration.ofSeconds(20)).until(() -> holder() != null);
    assertThat(holder()).isEqualTo("op-a");
    var b = operator(leader("op-b"));
    policy("ha", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> kube.deletes.size() >= 1);
    a.stop();
    await().atMost(Duration.ofSeconds(30)).until(() -> "op-b".equals(holder()));
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("ha"));
    assertThat(kube.deleteCount)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
    assertThat(b).isNotNull();
  }

  @Test
  void deletingThePolicyMidRollRestoresTheBalancerAndClearsMarks() {
    cluster("4Gi", false);
    kube.readyAfter = Duration.ofSeconds(5);
    operator(null);
    policy("gone", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> kube.deletes.size() == 1);
    assertThat(hbase.balancerOn).isFalse();
    assertThat(hbase.marks()).hasSize(1);
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("gone").delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> get("gone") == null);
    assertThat(hbase.balancerOn).isTrue();
    assertThat(sts()).isNotNull();
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> true);
    assertThat(kube.deletes).hasSize(1); // nothing restarted after the delete
    // the restarting pod came back unmarked; only its dead instance may keep a mark
    await().atMost(Duration.ofSeconds(20)).until(() -> hbase.registered("rs-1"));
    assertThat(hbase.snapshot().live()).noneMatch(x -> x.decommissioned());
  }

  @Test
  void aPolicyCreatedAfterAnotherWasDeletedTakesOverItsStatefulSet() {
    // the StatefulSet a deleted policy leaves mounts that policy's derived ConfigMap, not the base
    cluster("4Gi", false);
    operator(null);
    policy("before", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("before"));
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("before").delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> get("before") == null);
    assertThat(configVolumeOf(sts())).isEqualTo("before-rs-site");
    int deletes = kube.deletes.size();

    policy("after", "  mode: Lru\n  memory:\n    blockCacheFraction: 0.3\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("after"));
    assertThat(configVolumeOf(sts())).as("the config volume, repointed").isEqualTo("after-rs-site");
    assertThat(
            SiteXml.parse(
                client
                    .configMaps()
                    .inNamespace(ns)
                    .withName("after-rs-site")
                    .get()
                    .getData()
                    .get("hbase-site.xml")))
        .as("derived from the base, not from the deleted policy's derivation")
        .containsEntry("hbase.rootdir", "file:///data/hbase")
        .containsEntry("hfile.block.cache.size", "0.3");
    assertThat(kube.deletes.subList(deletes, kube.deletes.size()))
        .as("every pod restarted once onto the new policy's configuration")
        .containsExactlyInAnyOrder("rs-0", "rs-1", "rs-2");
    assertThat(client.configMaps().inNamespace(ns).withName("before-rs-site").get())
        .as("the deleted policy's ConfigMap is left alone")
        .isNotNull();
  }

  static String configVolumeOf(StatefulSet s) {
    return s.getSpec().getTemplate().getSpec().getVolumes().stream()
        .filter(v -> v.getName().equals("config"))
        .map(v -> v.getConfigMap().getName())
        .findFirst()
        .orElse(null);
  }

  @Test
  void aSecondPolicyOnTheSameStatefulSetIsRefusedAndTouchesNothing() {
    cluster("4Gi", false);
    operator(null);
    policy("first", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("first"));
    String rv = sts().getMetadata().getResourceVersion();
    int deletes = kube.deletes.size();

    policy("second", "  mode: Offheap\n  memory:\n    bucketCache: 1Gi\n");
    await().atMost(Duration.ofSeconds(30)).until(() -> condition("second", "Valid", "False"));
    var valid = Conditions.find(get("second").getStatus().getConditions(), "Valid").orElseThrow();
    assertThat(valid.getReason()).isEqualTo("Conflict");
    assertThat(valid.getMessage()).contains("BlockCachePolicy first");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "Conflict".equals(e.getReason())
                            && e.getInvolvedObject().getName().equals("second")));
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> true);
    assertThat(sts().getMetadata().getResourceVersion())
        .as("the StatefulSet is untouched")
        .isEqualTo(rv);
    assertThat(client.configMaps().inNamespace(ns).withName("second-rs-site").get()).isNull();
    assertThat(kube.deletes).hasSize(deletes);
    assertThat(idleAndApplied("first")).isTrue();
  }

  @Test
  void aPlanThatCannotWorkTouchesNothing() {
    cluster("2Gi", false);
    String rv = sts().getMetadata().getResourceVersion();
    operator(null);
    policy("too-big", "  mode: Offheap\n  memory:\n    bucketCache: 8Gi\n");

    await().atMost(Duration.ofSeconds(30)).until(() -> condition("too-big", "Valid", "False"));
    var valid = Conditions.find(get("too-big").getStatus().getConditions(), "Valid").orElseThrow();
    assertThat(valid.getReason()).isEqualTo("PlanRefused");
    assertThat(valid.getMessage()).contains("memory limit 2Gi").contains("raise the limit");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "PlanRefused".equals(e.getReason())
                            && "Warning".equals(e.getType())
                            && e.getMessage().contains("2Gi")));
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> true);
    assertThat(sts().getMetadata().getResourceVersion()).isEqualTo(rv);
    assertThat(client.configMaps().inNamespace(ns).withName("too-big-rs-site").get()).isNull();
    assertThat(kube.deletes).isEmpty();
  }
}
