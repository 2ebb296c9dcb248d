package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The cache volumes of the suite's PersistentFile policy (step 2, again in step 18) on storage as a
 * CSI driver gives it: root-owned, not world-writable.
 */
final class RootOwnedVolumes {
  /** The StorageClass of {@link #create}. */
  static final String ROOT_OWNED_CLASS = "e2e-root-owned";

  /** Where the cache volumes of {@link #create} live on the kind node. */
  static final String ROOT_OWNED_DIR = "/var/lib/hbase-cache-e2e";

  /**
   * A StorageClass without a provisioner and one {@code local} PersistentVolume per RegionServer,
   * each a directory on the kind node owned by root with mode 0755, as a CSI driver's fresh volume
   * is (a local volume, unlike a hostPath one, gets the pod's fsGroup from the kubelet). Returns
   * the class's name.
   */
  static String create(KubernetesClient client, Settings settings, Report report, String size) {
    String node = settings.kindCluster() + "-control-plane";
    String cls = ROOT_OWNED_CLASS;
    Shell.Result mk =
        Shell.run(
            settings.repo(),
            60,
            settings.env(),
            List.of(
                "docker",
                "exec",
                node,
                "sh",
                "-c",
                "for i in $(seq 0 "
                    + (REPLICAS - 1)
                    + "); do d="
                    + ROOT_OWNED_DIR
                    + "/cache-$i; rm -rf $d && mkdir -p $d && chown 0:0 $d"
                    + " && chmod 0755 $d; done"));
    assertThat(mk.code()).as("directories on the node: %s", mk.output()).isZero();
    client
        .storage()
        .v1()
        .storageClasses()
        .resource(
            new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder()
                .withNewMetadata()
                .withName(cls)
                .endMetadata()
                .withProvisioner("kubernetes.io/no-provisioner")
                .withVolumeBindingMode("WaitForFirstConsumer")
                .withReclaimPolicy("Retain")
                .build())
        .serverSideApply();
    for (int i = 0; i < REPLICAS; i++) {
      // a cluster kept from an earlier run (REUSE_CLUSTER=1) still has its volume, Released by the
      // claim deleted with the
      // namespace: it would never bind again (its directory was emptied above)
      var old = client.persistentVolumes().withName(cls + "-" + i);
      if (old.get() != null
          && !"Bound"
              .equals(old.get().getStatus() == null ? null : old.get().getStatus().getPhase())) {
        old.delete();
        await(cls + "-" + i + " of an earlier run deleted")
            .atMost(Duration.ofMinutes(1))
            .pollInterval(Duration.ofSeconds(1))
            .until(() -> old.get() == null);
      }
      client
          .persistentVolumes()
          .resource(
              new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
                  .withNewMetadata()
                  .withName(cls + "-" + i)
                  .endMetadata()
                  .withNewSpec()
                  .withStorageClassName(cls)
                  .withCapacity(
                      Map.of("storage", new io.fabric8.kubernetes.api.model.Quantity(size)))
                  .withAccessModes("ReadWriteOnce")
                  .withPersistentVolumeReclaimPolicy("Retain")
                  .withNewLocal()
                  .withPath(ROOT_OWNED_DIR + "/cache-" + i)
                  .endLocal()
                  .withNewNodeAffinity()
                  .withNewRequired()
                  .addNewNodeSelectorTerm()
                  .addNewMatchExpression()
                  .withKey("kubernetes.io/hostname")
                  .withOperator("In")
                  .withValues(node)
                  .endMatchExpression()
                  .endNodeSelectorTerm()
                  .endRequired()
                  .endNodeAffinity()
                  .endSpec()
                  .build())
          .serverSideApply();
    }
    report.line(
        "- StorageClass `%s` (no provisioner): %d local PersistentVolumes of %s, directories on the node root:root 0755",
        cls, REPLICAS, size);
    return cls;
  }
}
