package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.RecreateStatus;
import dev.hbase.cache.operator.BlockCacheOperator;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
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

  /** A namespace with the base ConfigMap and no StatefulSet: the policy's target is missing. */
  String namespaceWithoutTarget() {
    namespaceWithBaseConfig("cd-");
    hbase = new SimulatedHBase(Instant::now);
    return ns;
  }

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
   * A recreate interrupted between the orphan delete and the create (the operator died) is finished
   * from the policy's status, in the policy's namespace whatever the saved manifest says; a
   * recreate saved for another target (the policy edited since) creates nothing.
   */
  @Test
  void anInterruptedRecreateFinishesFromTheStatusInThePolicysNamespaceOnly() {
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

    // saved for the target, its manifest naming another namespace: created here, not there
    writeRecreate("rec", STS, evilStatefulSet(STS, other));
    nudge("rec", "12s");
    await().atMost(Duration.ofSeconds(30)).until(() -> sts() != null);
    assertThat(client.apps().statefulSets().inNamespace(other).list().getItems()).isEmpty();
    // once the target exists under a new UID, the saved recreate is dropped from the status
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> get("rec").getStatus().getRecreate() == null);
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

  /** The StatefulSet as the test made it: same generation, no field of the operator's. */
  void assertUntouched(Long generation) {
    StatefulSet s = sts();
    assertThat(s.getMetadata().getGeneration()).isEqualTo(generation);
    assertThat(s.getMetadata().getManagedFields())
        .noneMatch(
            m -> dev.hbase.cache.operator.render.Desired.FIELD_MANAGER.equals(m.getManager()));
    assertThat(kube.deletes).isEmpty();
  }

  /**
   * Another team's ConfigMap that happens to carry the name the policy derives ({@code
   * <policy>-rs-site}) is not written over: Degraded ObjectNotOwned names it, the StatefulSet is
   * untouched.
   */
  @Test
  void aConfigMapOfTheDerivedNameThatIsNotOursIsLeftAlone() {
    cluster("4Gi", false);
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("team-rs-site")
                .withNamespace(ns)
                .endMetadata()
                .addToData("secret-sauce", "1")
                .build())
        .create();
    Long before = sts().getMetadata().getGeneration();
    operator(null);
    policy("team", "  mode: Lru\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> reason("team", "Degraded", "True").equals("ObjectNotOwned"));
    assertThat(conditionMessage("team", "Degraded")).contains(ns + "/team-rs-site");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "ObjectNotOwned".equals(e.getReason())
                            && e.getMessage().contains("team-rs-site")));
    ConfigMap cm = client.configMaps().inNamespace(ns).withName("team-rs-site").get();
    assertThat(cm.getData()).containsExactly(Map.entry("secret-sauce", "1"));
    assertUntouched(before);
  }

  /**
   * A ConfigMap planted under the derived name with the operator's labels and a file of its own (it
   * would be mounted into every RegionServer, and a server-side apply leaves keys it does not
   * send): not written over, Degraded names it.
   */
  @Test
  void aLabelledConfigMapOfTheDerivedNameWithAFileOfItsOwnIsLeftAlone() {
    cluster("4Gi", false);
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("team-rs-site")
                .withNamespace(ns)
                .addToLabels(
                    dev.hbase.cache.operator.render.Desired.MANAGED_BY, "hbase-cache-operator")
                .addToLabels(dev.hbase.cache.operator.render.Desired.POLICY_LABEL, "team")
                .endMetadata()
                .addToData("log4j2.component.properties", "log4j2.configurationFile=http://x/l.xml")
                .build())
        .create();
    Long before = sts().getMetadata().getGeneration();
    operator(null);
    policy("team", "  mode: Lru\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> reason("team", "Degraded", "True").equals("ObjectNotOwned"));
    assertThat(client.configMaps().inNamespace(ns).withName("team-rs-site").get().getData())
        .containsOnlyKeys("log4j2.component.properties");
    assertUntouched(before);
  }

  /**
   * Once the RegionServers mount the derived ConfigMap, pointing spec.hbaseSiteConfigMap at another
   * ConfigMap of the author's does not carry its files into them: that takes an edit of the
   * StatefulSet's config volume.
   */
  @Test
  void anotherBaseConfigMapDoesNotReachRegionServersThatMountTheDerivedOne() {
    cluster("4Gi", false);
    operator(null);
    policy("base", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("base"));
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("evil-site")
                .withNamespace(ns)
                .endMetadata()
                .addToData("hbase-site.xml", BASE_SITE)
                .addToData("core-site.xml", "<configuration/>")
                .build())
        .create();
    Long before = sts().getMetadata().getGeneration();
    int deletes = kube.deletes.size();
    mergePatch("base", "{\"spec\":{\"hbaseSiteConfigMap\":\"evil-site\"}}");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> reason("base", "Valid", "False").equals("ConfigVolumeNotFound"));
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> true);
    assertThat(client.configMaps().inNamespace(ns).withName("base-rs-site").get().getData())
        .doesNotContainKey("core-site.xml");
    assertThat(sts().getMetadata().getGeneration()).isEqualTo(before);
    assertThat(kube.deletes).hasSize(deletes);
  }

  /**
   * A PodDisruptionBudget of the policy's budget name that is not the policy's is neither taken
   * over nor deleted; the roll goes on, Degraded names the budget.
   */
  @Test
  void aBudgetOfThePolicysNameThatIsNotOursIsLeftAlone() {
    cluster("4Gi", false);
    PodDisruptionBudget theirs =
        client
            .resource(
                new PodDisruptionBudgetBuilder()
                    .withNewMetadata()
                    .withName("pdb-regionservers")
                    .withNamespace(ns)
                    .endMetadata()
                    .withNewSpec()
                    .withNewSelector()
                    .addToMatchLabels("app", "someone-else")
                    .endSelector()
                    .withMinAvailable(new IntOrString(5))
                    .endSpec()
                    .build())
            .create();
    operator(null);
    policy("pdb", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> idle("pdb"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> reason("pdb", "Degraded", "True").equals("ObjectNotOwned"));
    assertThat(conditionMessage("pdb", "Degraded")).contains(ns + "/pdb-regionservers");
    PodDisruptionBudget now =
        client
            .policy()
            .v1()
            .podDisruptionBudget()
            .inNamespace(ns)
            .withName("pdb-regionservers")
            .get();
    assertThat(now.getMetadata().getUid()).isEqualTo(theirs.getMetadata().getUid());
    assertThat(now.getSpec()).isEqualTo(theirs.getSpec());
    assertThat(now.getMetadata().getOwnerReferences()).isNullOrEmpty();
  }

  /** The operator watches its namespaces only: a policy elsewhere gets no status, no write. */
  @Test
  void aPolicyInANamespaceTheOperatorDoesNotWatchIsLeftAlone() {
    cluster("4Gi", false);
    String watched = ns;
    operator(null); // watches `watched` only
    cluster("4Gi", false); // a second namespace, same objects
    Long before = sts().getMetadata().getGeneration();
    policy("elsewhere", "  mode: Lru\n");
    await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(10)).until(() -> true);
    assertThat(get("elsewhere").getStatus()).isNull();
    assertThat(client.configMaps().inNamespace(ns).withName("elsewhere-rs-site").get()).isNull();
    assertUntouched(before);
    assertThat(watched).isNotEqualTo(ns);
  }

  /**
   * A slow scrape (here: the policies' figures take forever) holds neither /healthz nor /readyz:
   * the HTTP server answers each exchange on a pool thread, with two kept for the probes.
   */
  @Test
  void aStuckScrapeDoesNotHoldTheHealthProbe() throws Exception {
    namespaceWithoutTarget();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch entered = new CountDownLatch(2);
    var reconciler =
        new BlockCachePolicyReconciler(Clock.systemUTC(), settings -> hbase, hbase.probe()) {
          @Override
          public List<BlockCachePolicy> policies() {
            entered.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return List.of();
          }
        };
    BlockCacheOperator op = new BlockCacheOperator(client, Set.of(ns), null, reconciler);
    op.start();
    closeAfter.add(0, op::stop);
    closeAfter.add(0, release::countDown);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    op.serveHttp(port, client);
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    String base = "http://127.0.0.1:" + port;
    List<CompletableFuture<HttpResponse<String>>> stuck =
        List.of(
            http.sendAsync(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()),
            http.sendAsync(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()));
    // both scrapes inside the handler (a fixed sleep raced on a slow machine)
    assertThat(entered.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    var third =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/metrics"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(third.statusCode()).as("a third scrape while two are stuck").isEqualTo(503);
    var health =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/healthz"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(stuck).noneMatch(CompletableFuture::isDone);
    release.countDown();
    for (var f : stuck) {
      assertThat(f.get().statusCode()).isEqualTo(200);
    }

    // clients that send a byte of a request and stall, one per pool thread: the server closes
    // them after maxReqTime, and /healthz answers again
    List<java.net.Socket> stalled = new java.util.ArrayList<>();
    for (int i = 0; i < BlockCacheOperator.SCRAPES + 2; i++) {
      var socket = new java.net.Socket("127.0.0.1", port);
      socket.getOutputStream().write('G');
      socket.getOutputStream().flush();
      stalled.add(socket);
      closeAfter.add(socket);
    }
    Thread.sleep(500);
    long t0 = System.nanoTime();
    var afterStall =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/healthz"))
                .timeout(Duration.ofSeconds(BlockCacheOperator.MAX_REQUEST_SECONDS * 4))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(afterStall.statusCode()).isEqualTo(200);
    assertThat(Duration.ofNanos(System.nanoTime() - t0))
        .isLessThan(Duration.ofSeconds(BlockCacheOperator.MAX_REQUEST_SECONDS * 3));
  }

  // ------------------------------------------------------------------ helpers

  boolean idle(String name) {
    BlockCachePolicy p = get(name);
    return p != null
        && p.getStatus() != null
        && p.getStatus().getRollout() != null
        && p.getStatus().getRollout().getPhase()
            == dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase.Idle;
  }

  /** The reason of condition {@code type} when it has {@code status}, else "". */
  String reason(String name, String type, String status) {
    BlockCachePolicy p = get(name);
    if (p == null || p.getStatus() == null) {
      return "";
    }
    return Conditions.find(p.getStatus().getConditions(), type)
        .filter(c -> status.equals(c.getStatus()))
        .map(c -> c.getReason())
        .orElse("");
  }

  String conditionMessage(String name, String type) {
    return Conditions.find(get(name).getStatus().getConditions(), type)
        .map(c -> c.getMessage())
        .orElse("");
  }
}
