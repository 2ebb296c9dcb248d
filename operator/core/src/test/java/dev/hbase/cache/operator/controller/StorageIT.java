package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.render.Desired;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Cache storage and disruption budgets on a real API server: PersistentFile recreates the
 * StatefulSet with claim templates (pods kept, no PVC ever deleted), PVCs grown when their
 * StorageClass allows and a block when it does not, a cache reset announced before the roll, and
 * the PodDisruptionBudget the operator keeps unless another one selects the pods.
 */
@EnableKubeAPIServer
class StorageIT extends OperatorHarness {
  @Test
  void persistentFileRecreatesTheStatefulSetKeepingPodsAndNeverDeletesAPvc() {
    cluster("4Gi", false);
    // the servers already run the planned 1Gi L2: what they cache is expected back after the roll
    hbase.l2Capacity = 1L << 30;
    var podUids =
        client.pods().inNamespace(ns).list().getItems().stream()
            .map(x -> x.getMetadata().getUid())
            .toList();
    String oldStsUid = sts().getMetadata().getUid();
    operator(null);
    policy(
        "pfile",
        "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n  rollout:\n    paused: true\n");

    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              StatefulSet s = sts();
              return s != null
                  && !s.getMetadata().getUid().equals(oldStsUid)
                  && s.getSpec().getVolumeClaimTemplates() != null
                  && s.getSpec().getVolumeClaimTemplates().stream()
                      .anyMatch(t -> t.getMetadata().getName().equals("bucketcache"));
            });
    var vct = sts().getSpec().getVolumeClaimTemplates().get(0);
    assertThat(vct.getSpec().getResources().getRequests().get("storage"))
        .isEqualTo(new Quantity("2Gi"));
    assertThat(client.pods().inNamespace(ns).list().getItems())
        .extracting(x -> x.getMetadata().getUid())
        .containsExactlyInAnyOrderElementsOf(podUids);
    assertThat(client.configMaps().inNamespace(ns).withName("pfile-sts-backup").get()).isNull();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                get("pfile").getStatus().getRollout() != null
                    && get("pfile").getStatus().getRollout().getPhase() == Phase.Paused);
    assertThat(kube.deletes).isEmpty();

    // unpause: the pods roll onto their cache PVCs
    editPolicy(
        "pfile",
        x -> {
          x.getSpec().getRollout().setPaused(false);
          return x;
        });
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("pfile"));
    var pvcs = client.persistentVolumeClaims().inNamespace(ns).list().getItems();
    assertThat(pvcs)
        .extracting(x -> x.getMetadata().getName())
        .containsExactlyInAnyOrder("bucketcache-rs-0", "bucketcache-rs-1", "bucketcache-rs-2");
    assertThat(get("pfile").getStatus().getRegionServers())
        .allSatisfy(r -> assertThat(r.getRetainedFraction()).isEqualTo(1.0));

    // deleting the policy leaves the StatefulSet, its pods and PVCs
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("pfile").delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> get("pfile") == null);
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> true);
    assertThat(sts()).isNotNull();
    assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(3);
    assertThat(client.persistentVolumeClaims().inNamespace(ns).list().getItems())
        .extracting(x -> x.getMetadata().getUid())
        .containsExactlyInAnyOrderElementsOf(
            pvcs.stream().map(x -> x.getMetadata().getUid()).toList());
    assertThat(kube.pvcUidsSeen).hasSize(3); // no PVC was ever replaced
    assertThat(hbase.balancerOn).isTrue();
  }

  /**
   * The recreate of {@link #persistentFileRecreatesTheStatefulSetKeepingPodsAndNeverDeletesAPvc},
   * its operator stopped between the orphan delete and the create (its creates of StatefulSets fail
   * meanwhile): the next operator, another process as after a restart or a leader's failover,
   * finishes it from the policy's status, which its record of recreates in the operator's own
   * namespace vouches for ({@link RecreateLedger}); the record is dropped once the StatefulSet
   * exists again. A status the operator did not record creates nothing: {@link
   * ConfinedDeputyIT#aRecreateTheOperatorDidNotRecordCreatesNothing}.
   */
  @Test
  void anHonestRecreateInterruptedByARestartFinishes() throws Exception {
    operatorNamespace = "op-" + NS.incrementAndGet();
    client
        .resource(
            new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                .withNewMetadata()
                .withName(operatorNamespace)
                .endMetadata()
                .build())
        .create();
    cluster("4Gi", false);
    var podUids =
        client.pods().inNamespace(ns).list().getItems().stream()
            .map(x -> x.getMetadata().getUid())
            .toList();
    String oldUid = sts().getMetadata().getUid();
    // the first operator's creates of StatefulSets go nowhere: it dies before it can create one
    String creates = "/apis/apps/v1/namespaces/" + ns + "/statefulsets";
    var refusing =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(client.getConfiguration())
            .withHttpClientBuilderConsumer(
                b ->
                    b.addOrReplaceInterceptor(
                        "refuse-creates",
                        new io.fabric8.kubernetes.client.http.Interceptor() {
                          @Override
                          public void before(
                              io.fabric8.kubernetes.client.http.BasicBuilder builder,
                              io.fabric8.kubernetes.client.http.HttpRequest request,
                              io.fabric8.kubernetes.client.http.Interceptor.RequestTags tags) {
                            if ("POST".equals(request.method())
                                && request.uri().getPath().equals(creates)) {
                              builder.uri(
                                  java.net.URI.create(request.uri().toString() + "-refused"));
                            }
                          }
                        }))
            .build();
    closeAfter.add(refusing::close);
    operator(null, refusing);
    AutoCloseable first = closeAfter.remove(0);
    BlockCachePolicy p =
        policy(
            "restart",
            "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n  rollout:\n    paused: true\n");
    String key = p.getMetadata().getUid();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                sts() == null
                    && get("restart").getStatus() != null
                    && get("restart").getStatus().getRecreate() != null);
    assertThat(ledger().getData()).containsKey(key);
    first.close(); // the operator dies between the delete and the create

    operator(null); // the next one: a restart, or the standby that takes the lease
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              StatefulSet s = sts();
              return s != null
                  && !s.getMetadata().getUid().equals(oldUid)
                  && s.getSpec().getVolumeClaimTemplates() != null
                  && s.getSpec().getVolumeClaimTemplates().stream()
                      .anyMatch(t -> t.getMetadata().getName().equals("bucketcache"));
            });
    assertThat(client.pods().inNamespace(ns).list().getItems())
        .extracting(x -> x.getMetadata().getUid())
        .containsExactlyInAnyOrderElementsOf(podUids);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                get("restart").getStatus().getRecreate() == null
                    && (ledger().getData() == null || !ledger().getData().containsKey(key)));
    assertThat(condition("restart", "Degraded", "True")).isFalse();
  }

  io.fabric8.kubernetes.api.model.ConfigMap ledger() {
    return client.configMaps().inNamespace(operatorNamespace).withName(RecreateLedger.NAME).get();
  }

  @Test
  void aChangeThatDropsPersistedCachesIsAnnouncedBeforeTheRoll() {
    cluster("4Gi", false);
    operator(null);
    policy(
        "reset",
        "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n  rollout:\n    paused: true\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                get("reset").getStatus() != null
                    && get("reset").getStatus().getRollout() != null
                    && get("reset").getStatus().getRollout().getPhase() == Phase.Paused);
    assertThat(condition("reset", "CacheResetPending", "True")).isFalse();
    editPolicy(
        "reset",
        p -> {
          p.getSpec().setMode(dev.hbase.cache.api.v1alpha1.CacheMode.Offheap);
          return p;
        });
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> condition("reset", "CacheResetPending", "True"));
    assertThat(
            Conditions.find(get("reset").getStatus().getConditions(), "CacheResetPending")
                .orElseThrow()
                .getMessage())
        .contains("persistence is turned off (mode Offheap)");
    eventually(() -> assertThat(events()).anyMatch(e -> "CacheResetPending".equals(e.getReason())));
    assertThat(kube.deletes).isEmpty(); // announced before any pod restarts
  }

  /** Cache PVCs as a previous roll left them: 2Gi, bound, of StorageClass {@code cls}. */
  void existingCacheVolumes(String cls, boolean expandable) {
    client
        .resource(
            new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder()
                .withNewMetadata()
                .withName(cls)
                .endMetadata()
                .withProvisioner("example.com/disk")
                .withAllowVolumeExpansion(expandable)
                .build())
        .serverSideApply();
    var vct =
        new io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder()
            .withNewMetadata()
            .withName("bucketcache")
            .addToLabels(Desired.MANAGED_BY, Desired.FIELD_MANAGER)
            .endMetadata()
            .withNewSpec()
            .withAccessModes("ReadWriteOnce")
            .withStorageClassName(cls)
            .withNewResources()
            .addToRequests("storage", new Quantity("2Gi"))
            .endResources()
            .endSpec()
            .build();
    StatefulSet s = sts();
    s.getMetadata().setResourceVersion(null);
    s.getMetadata().setUid(null);
    s.getMetadata().setManagedFields(null);
    s.setStatus(null);
    s.getSpec().setVolumeClaimTemplates(List.of(vct));
    client
        .apps()
        .statefulSets()
        .inNamespace(ns)
        .withName(STS)
        .withPropagationPolicy(io.fabric8.kubernetes.api.model.DeletionPropagation.ORPHAN)
        .delete();
    await().atMost(Duration.ofSeconds(20)).until(() -> sts() == null);
    client.resource(s).create();
    for (int i = 0; i < 3; i++) {
      var pvc =
          client
              .resource(
                  new io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder()
                      .withNewMetadata()
                      .withName("bucketcache-rs-" + i)
                      .withNamespace(ns)
                      // as the StatefulSet controller labels a claim: its template's labels
                      .addToLabels(Desired.MANAGED_BY, Desired.FIELD_MANAGER)
                      .endMetadata()
                      .withSpec(vct.getSpec())
                      .build())
              .create();
      pvc.getSpec().setVolumeName("pv-" + ns + "-" + i);
      pvc = client.resource(pvc).update();
      pvc.setStatus(
          new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder()
              .withPhase("Bound")
              .addToCapacity("storage", new Quantity("2Gi"))
              .build());
      client.resource(pvc).updateStatus();
    }
  }

  @Test
  void aBiggerCacheGrowsThePvcsWhenTheirStorageClassAllows() {
    cluster("4Gi", false);
    existingCacheVolumes("expandable-" + ns, true);
    var uids =
        client.persistentVolumeClaims().inNamespace(ns).list().getItems().stream()
            .map(x -> x.getMetadata().getUid())
            .toList();
    operator(null);
    // 2Gi L2 + 1Gi buffer: the 2Gi PVCs must grow to 3Gi
    policy(
        "grow",
        "  mode: PersistentFile\n  memory:\n    bucketCache: 2Gi\n  storage:\n    storageClassName: expandable-"
            + ns
            + "\n  rollout:\n    paused: true\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              // one read: the operator deletes (orphan) and recreates the StatefulSet meanwhile
              StatefulSet s = sts();
              return s != null
                  && s.getSpec()
                      .getVolumeClaimTemplates()
                      .get(0)
                      .getSpec()
                      .getResources()
                      .getRequests()
                      .get("storage")
                      .equals(new Quantity("3Gi"));
            });
    for (int i = 0; i < 3; i++) {
      assertThat(pvcSize(i)).isEqualTo(new Quantity("3Gi"));
    }
    assertThat(client.persistentVolumeClaims().inNamespace(ns).list().getItems())
        .extracting(x -> x.getMetadata().getUid())
        .containsExactlyInAnyOrderElementsOf(uids);
    eventually(
        () -> assertThat(events()).anyMatch(e -> "CacheVolumeExpanding".equals(e.getReason())));
  }

  @Test
  void aBiggerCacheOnAFixedSizeStorageClassBlocksAndChangesNothing() {
    cluster("4Gi", false);
    existingCacheVolumes("fixed-" + ns, false);
    String stsUid = sts().getMetadata().getUid();
    operator(null);
    policy(
        "nogrow",
        "  mode: PersistentFile\n  memory:\n    bucketCache: 2Gi\n  storage:\n    storageClassName: fixed-"
            + ns
            + "\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> condition("nogrow", "Degraded", "True"));
    var degraded =
        Conditions.find(get("nogrow").getStatus().getConditions(), "Degraded").orElseThrow();
    assertThat(degraded.getReason()).isEqualTo("StorageBlocked");
    assertThat(degraded.getMessage())
        .contains("PVC bucketcache-rs-0 has 2Gi")
        .contains("does not allow volume expansion");
    assertThat(get("nogrow").getStatus().getRollout().getPhase()).isEqualTo(Phase.Blocked);
    assertThat(condition("nogrow", "Ready", "False")).isTrue();
    assertThat(sts().getMetadata().getUid()).isEqualTo(stsUid);
    for (int i = 0; i < 3; i++) {
      assertThat(pvcSize(i)).isEqualTo(new Quantity("2Gi"));
    }
    assertThat(kube.deletes).isEmpty();
  }

  PodDisruptionBudget budget(String name) {
    return client.policy().v1().podDisruptionBudget().inNamespace(ns).withName(name).get();
  }

  @Test
  void theRegionServersGetAPodDisruptionBudgetUnlessAnotherOneSelectsThem() {
    cluster("4Gi", false);
    operator(null);
    BlockCachePolicy p = policy("pdb", "  mode: Lru\n  rollout:\n    maxUnavailable: 2\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> budget("pdb-regionservers") != null);
    PodDisruptionBudget ours = budget("pdb-regionservers");
    assertThat(ours.getSpec().getSelector()).isEqualTo(sts().getSpec().getSelector());
    assertThat(ours.getSpec().getMaxUnavailable().getIntVal())
        .as("the roll's budget: min(maxUnavailable 2, replicas 3 - 1)")
        .isEqualTo(2);
    assertThat(ours.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo(p.getMetadata().getUid()));

    // another budget for the same pods (the chart's, say): two on one pod refuse every eviction
    client
        .resource(
            new io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName("theirs")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withNewSelector()
                .addNewMatchExpression()
                .withKey("app")
                .withOperator("In")
                .withValues("rs", "master")
                .endMatchExpression()
                .endSelector()
                .withMinAvailable(new io.fabric8.kubernetes.api.model.IntOrString(2))
                .endSpec()
                .build())
        .create();
    await().atMost(Duration.ofSeconds(30)).until(() -> budget("pdb-regionservers") == null);
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "PodDisruptionBudgetExists".equals(e.getReason())
                            && e.getMessage().contains("theirs")));
    client.policy().v1().podDisruptionBudget().inNamespace(ns).withName("theirs").delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> budget("pdb-regionservers") != null);

    // switched off by the policy, then the policy deleted with it on again
    mergePatch("pdb", "{\"spec\":{\"rollout\":{\"podDisruptionBudget\":false}}}");
    await().atMost(Duration.ofSeconds(30)).until(() -> budget("pdb-regionservers") == null);
    mergePatch("pdb", "{\"spec\":{\"rollout\":{\"podDisruptionBudget\":null}}}");
    await().atMost(Duration.ofSeconds(30)).until(() -> budget("pdb-regionservers") != null);
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("pdb").delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> get("pdb") == null);
    assertThat(budget("pdb-regionservers")).as("deleted with its policy").isNull();
    assertThat(sts()).as("the StatefulSet stays").isNotNull();
  }
}
