package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.RecreateStatus;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The operator as a confined deputy (issue 25), on a real API server: whatever a policy author
 * writes (a policy, a ConfigMap, JVM options, a mount path), the operator creates, patches and
 * deletes nothing beyond what that author could, and says why in Degraded or Valid and a Warning
 * event. Each test fails on the operator before the change.
 */
@EnableKubeAPIServer
class ConfinedDeputyIT extends OperatorHarness {

  static StatefulSet evilStatefulSet(String name, String namespace) {
    return Serialization.unmarshal(
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\""
            + name
            + "\",\"namespace\":\""
            + namespace
            + "\"},\"spec\":{\"serviceName\":\"x\",\"replicas\":1,\"selector\":{\"matchLabels\":"
            + "{\"app\":\"evil\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"evil\"}},"
            + "\"spec\":{\"containers\":[{\"name\":\"evil\",\"image\":\"evil:1\"}]}}}}",
        StatefulSet.class);
  }

  /**
   * Before: a ConfigMap {@code <policy>-sts-backup} was created as the StatefulSet it held, in
   * whatever namespace and under whatever name its JSON said. Now no ConfigMap ever becomes a
   * StatefulSet: the policy is Degraded (UntrustedBackup, naming the ConfigMap), a Warning says so.
   *
   * @param where the planted StatefulSet's namespace: another one, or the policy's own (under the
   *     target's name or another)
   */
  @ParameterizedTest
  @ValueSource(strings = {"other-namespace", "same-namespace-other-name", "same-namespace-target"})
  void aPlantedBackupConfigMapCreatesNothing(String where) {
    String victim = "victim-" + NS.incrementAndGet();
    client
        .resource(new NamespaceBuilder().withNewMetadata().withName(victim).endMetadata().build())
        .create();
    namespaceWithoutTarget();
    StatefulSet planted =
        switch (where) {
          case "other-namespace" -> evilStatefulSet(STS, victim);
          case "same-namespace-other-name" -> evilStatefulSet("evil", ns);
          default -> evilStatefulSet(STS, ns);
        };
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("evil-sts-backup")
                .withNamespace(ns)
                .endMetadata()
                .addToData("statefulset.json", Serialization.asJson(planted))
                .build())
        .create();
    operator(null);
    policy("evil", "  mode: Lru\n");

    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> reason("evil", "Degraded", "True").equals("UntrustedBackup"));
    assertThat(conditionMessage("evil", "Degraded")).contains(ns + "/evil-sts-backup");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "Warning".equals(e.getType())
                            && "UntrustedBackup".equals(e.getReason())
                            && e.getMessage().contains("evil-sts-backup")));
    // a few more reconciles: still nothing created anywhere
    await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(8)).until(() -> true);
    assertThat(client.apps().statefulSets().inNamespace(victim).list().getItems()).isEmpty();
    assertThat(client.apps().statefulSets().inNamespace(ns).list().getItems()).isEmpty();
    assertThat(client.configMaps().inNamespace(ns).withName("evil-sts-backup").get()).isNotNull();
  }

  /**
   * A recreate saved in the status but not recorded by the operator (issue 49): whoever may write a
   * policy's status (every namespace admin under {@code scope=Prerequisites}) could otherwise have
   * the operator create, under its own identity, a StatefulSet of their choosing. One saved for
   * another target creates nothing; one for the target whose manifest the operator never recorded
   * (a privileged pod of another image, naming another namespace) creates nothing either, anywhere:
   * Degraded/UntrustedBackup and a Warning say why. Before, the second was created as it said (in
   * the policy's namespace). The honest recreate, interrupted by a restart, finishes: {@link
   * StorageIT#anHonestRecreateInterruptedByARestartFinishes}.
   */
  @Test
  void aRecreateTheOperatorDidNotRecordCreatesNothing() {
    String other = "other-" + NS.incrementAndGet();
    client
        .resource(new NamespaceBuilder().withNewMetadata().withName(other).endMetadata().build())
        .create();
    namespaceWithoutTarget();
    operator(null);
    policy("rec", "  mode: Lru\n  rollout:\n    paused: true\n");
    await().atMost(Duration.ofSeconds(30)).until(() -> condition("rec", "Valid", "False"));

    // saved for another StatefulSet than the target: nothing
    writeRecreate("rec", "someone-else", evilStatefulSet("someone-else", ns));
    nudge("rec", "11s");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> reason("rec", "Degraded", "True").equals("UntrustedBackup"));
    assertThat(conditionMessage("rec", "Degraded")).contains("someone-else");
    assertThat(client.apps().statefulSets().inNamespace(ns).list().getItems()).isEmpty();

    // saved for the target: a privileged pod of another image, its manifest naming another
    // namespace; the operator recorded no such recreate
    StatefulSet forged = evilStatefulSet(STS, other);
    var container = forged.getSpec().getTemplate().getSpec().getContainers().get(0);
    container.setSecurityContext(
        new io.fabric8.kubernetes.api.model.SecurityContextBuilder().withPrivileged(true).build());
    writeRecreate("rec", STS, forged);
    nudge("rec", "12s");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> conditionMessage("rec", "Degraded").contains("operator's record"));
    assertThat(reason("rec", "Degraded", "True")).isEqualTo("UntrustedBackup");
    assertThat(conditionMessage("rec", "Degraded"))
        .contains("StatefulSet " + STS)
        .contains("holds none for this policy")
        .contains("not created");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "Warning".equals(e.getType())
                            && "UntrustedBackup".equals(e.getReason())
                            && e.getMessage().contains("operator's record")));
    // a few more reconciles: still nothing created, here or there
    await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(8)).until(() -> true);
    assertThat(client.apps().statefulSets().inNamespace(ns).list().getItems()).isEmpty();
    assertThat(client.apps().statefulSets().inNamespace(other).list().getItems()).isEmpty();
  }

  /**
   * A spec change: the operator's own status writes start no reconcile (PolicyChanges), so the
   * test's status write is followed by one.
   */
  void nudge(String policy, String interval) {
    mergePatch(policy, "{\"spec\":{\"metrics\":{\"interval\":\"" + interval + "\"}}}");
  }

  /**
   * What the operator writes into a policy's status before an orphan delete, written as the
   * operator writes its status (server-side apply of the whole status under its field manager), so
   * that the operator's next write can drop it as its own.
   */
  void writeRecreate(String policy, String target, StatefulSet manifest) {
    BlockCachePolicy p = get(policy);
    BlockCachePolicyStatus st = p.getStatus();
    st.setRecreate(
        new RecreateStatus()
            .setStatefulSet(target)
            .setUid("00000000-0000-0000-0000-000000000000")
            .setManifest(Serialization.asJson(manifest))
            .setSavedAt(Instant.now().toString()));
    BlockCachePolicy fresh = new BlockCachePolicy();
    fresh.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(policy)
            .withNamespace(ns)
            .build());
    fresh.setStatus(st);
    client
        .resources(BlockCachePolicy.class)
        .inNamespace(ns)
        .withName(policy)
        .subresource("status")
        .patch(
            new io.fabric8.kubernetes.client.dsl.base.PatchContext.Builder()
                .withPatchType(io.fabric8.kubernetes.client.dsl.base.PatchType.SERVER_SIDE_APPLY)
                .withFieldManager(BlockCachePolicyReconciler.NAME)
                .withForce(true)
                .build(),
            fresh);
  }

  /**
   * Options the API server cannot judge (the operator's install decides): refused by the planner
   * with the option and why, and the StatefulSet is not written at all.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "-XX:OnError=/tmp/x.sh",
        "-XX:OnOutOfMemoryError=/tmp/x.sh",
        "-Xlog:gc:file=/var/lib/hbase/bucketcache/bucketcache.map",
        "-XX:HeapDumpPath=/var/lib/hbase/bucketcache/bucketcache.map",
        "-XX:Flags=/tmp/flags",
        "-Dcom.sun.management.jmxremote.authenticate=false",
        "-javaagent:/tmp/a.jar"
      })
  void aJvmOptionOffTheAllowListIsRefusedAndTheStatefulSetIsUntouched(String option) {
    cluster("4Gi", false);
    Long before = sts().getMetadata().getGeneration();
    operator(null);
    policy("opts", "  mode: Lru\n  jvm:\n    extraOptions: [\"" + option + "\"]\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> reason("opts", "Valid", "False").equals("PlanRefused"));
    assertThat(conditionMessage("opts", "Valid")).contains(option);
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> true);
    assertUntouched(before);
  }

  /**
   * The cache volume over, under or around another mount of the container: a keytab volume at
   * /var/lib/hbase/keytab here (the config volume at /etc/hbase is refused by the CRD already: /etc
   * is a system directory).
   */
  @ParameterizedTest
  @ValueSource(strings = {"/var/lib/hbase/keytab", "/var/lib/hbase/keytab/cache", "/var/lib/hbase"})
  void aMountPathOverAnotherMountIsRefused(String path) {
    cluster("4Gi", false);
    client
        .apps()
        .statefulSets()
        .inNamespace(ns)
        .withName(STS)
        .edit(
            s -> {
              var spec = s.getSpec().getTemplate().getSpec();
              spec.getVolumes()
                  .add(
                      new io.fabric8.kubernetes.api.model.VolumeBuilder()
                          .withName("keytab")
                          .withNewEmptyDir()
                          .endEmptyDir()
                          .build());
              spec.getContainers()
                  .get(0)
                  .getVolumeMounts()
                  .add(
                      new io.fabric8.kubernetes.api.model.VolumeMount(
                          "/var/lib/hbase/keytab", null, "keytab", null, null, null, null));
              return s;
            });
    Long before = sts().getMetadata().getGeneration();
    operator(null);
    policy(
        "mnt",
        "  mode: File\n  memory:\n    bucketCache: 1Gi\n  storage:\n    mountPath: " + path + "\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> reason("mnt", "Valid", "False").equals("MountPathConflict"));
    assertThat(conditionMessage("mnt", "Valid"))
        .contains("/var/lib/hbase/keytab")
        .contains("volume keytab");
    assertUntouched(before);
  }
}
