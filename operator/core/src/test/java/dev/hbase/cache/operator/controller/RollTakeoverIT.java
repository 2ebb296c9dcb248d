package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.BlockCacheOperator;
import dev.hbase.cache.operator.render.SiteXml;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Who takes over a roll or a StatefulSet on a real API server: the operator restarted or failed
 * over mid-roll, a new policy on the StatefulSet a deleted one left, and a second policy on the
 * same StatefulSet refused before it touches anything. Split from RollFaultsIT so that failsafe
 * runs the two halves in parallel forks.
 */
@EnableKubeAPIServer
class RollTakeoverIT extends OperatorHarness {
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
}
