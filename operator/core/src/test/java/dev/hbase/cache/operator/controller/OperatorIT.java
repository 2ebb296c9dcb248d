package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.BlockCacheOperator;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.SiteXml;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * The operator against a real kube-apiserver + etcd (kube-api-test). There is no kubelet: {@link
 * FakeKube} plays it, and the StatefulSet controller and garbage collector too, except in the tests
 * that start the real ones ({@link ControllerManager}, where revisions and ownership matter);
 * {@link SimulatedHBase} plays the HBase master.
 */
@EnableKubeAPIServer
class OperatorIT extends OperatorHarness {
  // ------------------------------------------------------------------ tests

  @Test
  void appliesThePolicyAndRollsThePodsOneAtATimeInOrder() throws Exception {
    cluster("4Gi", false);
    operator(null);
    policy("lru", "  mode: Lru\n");

    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("lru"));
    BlockCachePolicy p = get("lru");
    String revision =
        sts().getSpec().getTemplate().getMetadata().getAnnotations().get(Desired.HASH_ANNOTATION);

    // StatefulSet: our fields, under our field manager, by server-side apply
    StatefulSet s = sts();
    assertThat(s.getSpec().getUpdateStrategy().getType()).isEqualTo("OnDelete");
    var c = s.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(c.getEnv())
        .extracting(e -> e.getName() + "=" + e.getValue())
        .contains("HBASE_HEAPSIZE=" + p.getStatus().getPlan().getHeap().replace("Mi", "m"));
    assertThat(s.getSpec().getTemplate().getSpec().getVolumes())
        .filteredOn(v -> v.getName().equals("config"))
        .extracting(v -> v.getConfigMap().getName())
        .containsExactly("lru-rs-site");
    assertThat(s.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds())
        .isGreaterThanOrEqualTo(120);
    assertThat(s.getMetadata().getManagedFields())
        .anyMatch(
            m -> m.getManager().equals(Desired.FIELD_MANAGER) && m.getOperation().equals("Apply"));
    // the container keeps what the operator does not own
    assertThat(c.getImage()).isEqualTo("hbase:2.6.4");
    assertThat(c.getVolumeMounts()).extracting(v -> v.getMountPath()).contains("/etc/hbase");

    // derived ConfigMap: the base files, hbase-site.xml overlaid; the contradicting key removed
    ConfigMap derived = client.configMaps().inNamespace(ns).withName("lru-rs-site").get();
    assertThat(derived.getData()).containsKey("log4j2.properties");
    Map<String, String> site = SiteXml.parse(derived.getData().get("hbase-site.xml"));
    assertThat(site)
        .containsEntry("hbase.rootdir", "file:///data/hbase")
        .containsEntry("hfile.block.cache.size", "0.4")
        .doesNotContainKey("hbase.bucketcache.ioengine");

    // the roll: each pod once, never two down, fewest regions first, regions back home
    assertThat(kube.deleteCount)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
    assertThat(kube.deletes).containsExactly("rs-1", "rs-2", "rs-0");
    assertThat(kube.maxDown).isEqualTo(1);
    assertThat(hbase.regionsOf("rs-0")).containsExactlyInAnyOrder("r00", "r01", "r02");
    assertThat(hbase.regionsOf("rs-1")).containsExactly("r10");
    assertThat(hbase.balancerOn).isTrue();
    assertThat(hbase.marks()).isEmpty();
    assertThat(client.pods().inNamespace(ns).list().getItems())
        .allSatisfy(
            pod ->
                assertThat(pod.getMetadata().getAnnotations())
                    .containsEntry(Desired.HASH_ANNOTATION, revision));
    assertThat(p.getStatus().getRollout().getProgress()).isEqualTo("3/3");
    assertThat(p.getStatus().getObservedGeneration()).isEqualTo(p.getMetadata().getGeneration());
    assertThat(p.getStatus().getRegionServers())
        .extracting(r -> r.getPod())
        .containsExactly("rs-0", "rs-1", "rs-2");
    assertThat(p.getStatus().getRegionServers())
        .allSatisfy(r -> assertThat(r.getRestartedAt()).isNotNull());
    eventually(
        () ->
            assertThat(events())
                .extracting(e -> e.getReason())
                .contains("RollStarted", "RestartingPod", "PodRestarted", "RollFinished"));

    // hit ratios: reads on rs-0, the next sample shows them
    hbase.reads("rs-0", 90, 10);
    await()
        .atMost(Duration.ofSeconds(40))
        .until(
            () -> {
              var st = get("lru").getStatus();
              return st.getCache() != null
                  && st.getCache().getHitRatio() != null
                  && st.getCache().getHitRatio() == 0.9;
            });
    assertThat(get("lru").getStatus().getRegionServers().get(0).getHitRatio()).isEqualTo(0.9);

    // an edit of the base ConfigMap flows through: new revision, derived ConfigMap updated
    client
        .configMaps()
        .inNamespace(ns)
        .withName("hbase-site")
        .edit(
            cm -> {
              cm.getData()
                  .put(
                      "hbase-site.xml",
                      BASE_SITE.replace(
                          "</configuration>",
                          "<property><name>hbase.regionserver.handler.count</name><value>50</value></property>\n</configuration>"));
              return cm;
            });
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                SiteXml.parse(
                        client
                            .configMaps()
                            .inNamespace(ns)
                            .withName("lru-rs-site")
                            .get()
                            .getData()
                            .get("hbase-site.xml"))
                    .containsKey("hbase.regionserver.handler.count"));
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> kube.deletes.size() == 6 && idleAndApplied("lru"));
  }

  /**
   * Writes to the API server as the operator sends them (method and path), leases excluded: a
   * client with an interceptor, on the test API server.
   */
  static final class CountingClient {
    final List<String> writes = java.util.Collections.synchronizedList(new ArrayList<>());
    final KubernetesClient client =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(OperatorIT.client.getConfiguration())
            .withHttpClientBuilderConsumer(
                b ->
                    b.addOrReplaceInterceptor(
                        "count",
                        new io.fabric8.kubernetes.client.http.Interceptor() {
                          @Override
                          public void before(
                              io.fabric8.kubernetes.client.http.BasicBuilder builder,
                              io.fabric8.kubernetes.client.http.HttpRequest request,
                              io.fabric8.kubernetes.client.http.Interceptor.RequestTags tags) {
                            if (!"GET".equals(request.method())
                                && !request.uri().getPath().contains("/leases")) {
                              writes.add(request.method() + " " + request.uri().getPath());
                            }
                          }
                        }))
            .build();
  }

  @Test
  void anIdlePolicyMakesNoWritesToTheApiServer() {
    cluster("4Gi", true);
    CountingClient counting = new CountingClient();
    closeAfter.add(counting.client::close);
    operator(null, counting.client);
    policy("idle", "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n");
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("idle"));
    assertThat(counting.writes)
        .as("the roll itself writes")
        .anyMatch(w -> w.startsWith("PATCH") && w.contains("/statefulsets/"));

    // The last pod may turn Ready after the last metrics sample of the roll: its first sample adds
    // its cache to status.cache (one write). Wait until the status has not changed for one
    // metrics interval (10 s) + 1 s; an operator that keeps writing never gets there.
    String[] seen = {get("idle").getMetadata().getResourceVersion()};
    long[] since = {System.nanoTime()};
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              String rv = get("idle").getMetadata().getResourceVersion();
              if (!rv.equals(seen[0])) {
                seen[0] = rv;
                since[0] = System.nanoTime();
              }
              return System.nanoTime() - since[0] > Duration.ofSeconds(11).toNanos();
            });
    String settled = Serialization.asJson(get("idle").getStatus());

    // reconciles while idle (metrics interval 10 s: each one scrapes every pod): none writes
    counting.writes.clear();
    int scrapes = hbase.scrapes;
    await().pollDelay(Duration.ofSeconds(25)).atMost(Duration.ofSeconds(30)).until(() -> true);
    assertThat(hbase.scrapes - scrapes)
        .as("reconciles ran meanwhile (each scrapes 3 pods)")
        .isGreaterThanOrEqualTo(6);
    assertThat(idleAndApplied("idle")).isTrue();
    assertThat(counting.writes)
        .as(
            "writes while idle; status before: %s%nstatus now: %s",
            settled, Serialization.asJson(get("idle").getStatus()))
        .isEmpty();
  }

  @Test
  void aFailingApplySaysSoInTheConditionsAndRecovers() throws Exception {
    cluster("4Gi", false);
    // A ValidatingAdmissionPolicy of the real API server refuses the operator's ConfigMaps in this
    // namespace, so the apply step throws.
    String vap =
        """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata: {name: deny-%1$s}
        spec:
          failurePolicy: Fail
          matchConstraints:
            resourceRules:
            - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
          validations:
          - expression: "!has(object.metadata.labels) || !('cache.hbase.dev/policy' in object.metadata.labels)"
            message: no policy ConfigMaps in this namespace (test)
        """
            .formatted(ns);
    String binding =
        """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicyBinding
        metadata: {name: deny-%1$s}
        spec:
          policyName: deny-%1$s
          validationActions: [Deny]
          matchResources:
            namespaceSelector:
              matchLabels: {kubernetes.io/metadata.name: %1$s}
        """
            .formatted(ns);
    var policyObj = client.resource(vap).create();
    var bindingObj = client.resource(binding).create();
    closeAfter.add(
        () -> {
          client.resource(bindingObj).delete();
          client.resource(policyObj).delete();
        });
    // the API server enforces a new admission policy a moment after it is created
    var probe =
        new ConfigMapBuilder()
            .withNewMetadata()
            .withName("probe")
            .withNamespace(ns)
            .addToLabels("cache.hbase.dev/policy", "x")
            .endMetadata()
            .build();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              try {
                client.resource(probe).create();
                client.resource(probe).delete();
                return false;
              } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                return e.getMessage().contains("no policy ConfigMaps");
              }
            });
    operator(null);
    policy("denied", "  mode: Lru\n");

    await().atMost(Duration.ofSeconds(60)).until(() -> condition("denied", "Degraded", "True"));
    var degraded =
        Conditions.find(get("denied").getStatus().getConditions(), "Degraded").orElseThrow();
    assertThat(degraded.getReason()).isEqualTo("ReconcileError");
    assertThat(degraded.getMessage()).contains("no policy ConfigMaps in this namespace");
    assertThat(
            Conditions.find(get("denied").getStatus().getConditions(), "Ready")
                .orElseThrow()
                .getReason())
        .isEqualTo("ReconcileError");
    assertThat(kube.deletes).isEmpty();

    client.resource(bindingObj).delete(); // the cause goes: the framework's retry applies
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("denied"));
    assertThat(condition("denied", "Degraded", "False")).isTrue();
  }

  @Test
  void thePodsInformerWatchesOnlyStatefulSetPods() {
    cluster("4Gi", false);
    // a pod of the namespace that no StatefulSet made, named like one of ours
    client
        .resource(
            new io.fabric8.kubernetes.api.model.PodBuilder()
                .withNewMetadata()
                .withName(STS + "-7")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("c")
                .withImage("busybox")
                .endContainer()
                .endSpec()
                .build())
        .create();
    client
        .apps()
        .statefulSets()
        .inNamespace(ns)
        .withName(STS)
        .edit(
            s -> {
              s.getSpec().setReplicas(8);
              return s;
            });
    kube.neverReady.addAll(List.of("rs-3", "rs-4", "rs-5", "rs-6", "rs-7"));
    operator(null);
    policy("labels", "  mode: Lru\n");
    // rs-3..rs-6 are created by the fake StatefulSet controller (labelled) and never Ready;
    // rs-7 exists but is not the StatefulSet's: the status lists only the labelled pods
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                get("labels").getStatus() != null
                    && get("labels").getStatus().getRollout() != null
                    && get("labels").getStatus().getRollout().getTotal() != null
                    && get("labels").getStatus().getRollout().getTotal() == 8);
    assertThat(get("labels").getStatus().getRollout().getProgress()).endsWith("/8");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> get("labels").getStatus().getRegionServers().size() == 7);
    assertThat(get("labels").getStatus().getRegionServers())
        .extracting(r -> r.getPod())
        .doesNotContain(STS + "-7");
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
  void healthAndPrometheusEndpoints() throws Exception {
    cluster("4Gi", false);
    BlockCacheOperator op = operator(null);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    op.serveHttp(port, client);
    policy("metrics", "  mode: MetaOnly\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> condition("metrics", "Valid", "True"));
    HttpClient http = HttpClient.newHttpClient();
    String base = "http://127.0.0.1:" + port;
    assertThat(
            http.send(
                    HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(200);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                http.send(
                            HttpRequest.newBuilder(URI.create(base + "/readyz")).build(),
                            HttpResponse.BodyHandlers.ofString())
                        .statusCode()
                    == 200);
    String metrics =
        http.send(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertThat(metrics).contains("reconciliations").contains("jvm_memory_used_bytes");
    // reconcile time as a histogram (its p99 in Prometheus); the failure counters appear with
    // the first failure
    assertThat(metrics)
        .contains("operator_sdk_controllers_execution_reconcile_seconds_bucket")
        .contains("operator_sdk_controllers_execution_reconcile_success_total");
    // the policy's status as gauges, once its figures are in the status
    String l = "namespace=\"" + ns + "\",policy=\"metrics\",statefulset=\"rs\"";
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        http.send(
                                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                                HttpResponse.BodyHandlers.ofString())
                            .body()
                            .lines())
                    .contains(
                        "hbase_cache_policy_info{" + l + ",mode=\"MetaOnly\"} 1",
                        "hbase_cache_condition{" + l + ",type=\"Valid\",status=\"True\"} 1",
                        "hbase_cache_roll_phase{" + l + ",phase=\"Idle\"} 1",
                        "hbase_cache_roll_pods{" + l + "} 3",
                        "hbase_cache_roll_pods_updated{" + l + "} 3",
                        "hbase_cache_regionserver_ready{" + l + ",pod=\"rs-0\"} 1",
                        "hbase_cache_regionserver_up_to_date{" + l + ",pod=\"rs-2\"} 1"));
    var scrape =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(scrape.headers().firstValue("Content-Type"))
        .hasValue("text/plain; version=0.0.4; charset=utf-8");
    // the framework's figures the chart's dashboard queries are there (a failure counter appears
    // with the first failure: its success twin, registered with it, stands for it here)
    assertThat(ChartQueries.metricNames())
        .filteredOn(n -> n.startsWith("operator_sdk_"))
        .isNotEmpty()
        .allMatch(n -> scrape.body().contains(n.replace("_failed_total", "_success_total") + "{"));
    assertThat(scrape.body()).containsPattern("hbase_cache_capacity_bytes\\{" + l + "\\} [1-9]");
  }

  @Test
  void theRestartAnnotationRollsEveryPodOnce() {
    cluster("4Gi", false);
    operator(null);
    policy("manual", "  mode: MetaOnly\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("manual"));
    assertThat(kube.deletes).hasSize(3);
    StatusChanges writes = new StatusChanges(client);
    closeAfter.add(writes);
    editPolicy(
        "manual",
        p -> {
          p.getMetadata()
              .getAnnotations()
              .put(BlockCachePolicy.RESTART_ANNOTATION, "2026-11-21T10:00:00Z");
          return p;
        });
    // at once, not at the next requeue (an annotation does not bump the generation: PolicyChanges)
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () -> {
              var st =
                  client
                      .resources(BlockCachePolicy.class)
                      .inNamespace(ns)
                      .withName("manual")
                      .get()
                      .getStatus();
              return st.getRollout() != null
                  && st.getRollout().getInFlight() != null
                  && !st.getRollout().getInFlight().isEmpty();
            });
    await().atMost(Duration.ofSeconds(30)).until(() -> kube.deletes.size() > 3);
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> idleAndApplied("manual") && kube.deletes.size() == 6);
    assertThat(kube.deleteCount)
        .containsOnly(Map.entry("rs-0", 2), Map.entry("rs-1", 2), Map.entry("rs-2", 2));
    assertThat(kube.maxDown).isEqualTo(1);
    // a restart writes the roll's state about four times (admitted, deleted, reloading, back);
    // progress alone waits for those writes (StatusWrites): about nine writes a restart before
    writes.close();
    assertThat((Double) writes.report(3, 10).get("statusWritesPerRestart"))
        .as("status writes per restart: %s", writes.report(3, 10))
        .isLessThanOrEqualTo(5.0);
    // the second roll's events are news too, although their texts may repeat the first roll's
    // (an event repeated counts up on its object)
    eventually(() -> assertThat(podRestartedEvents()).isEqualTo(6));
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(5))
        .until(() -> podRestartedEvents() == 6);
  }

  int podRestartedEvents() {
    return events().stream()
        .filter(e -> "PodRestarted".equals(e.getReason()))
        .mapToInt(e -> e.getCount())
        .sum();
  }

  /** What helm sends: a strategic merge patch under its own field manager. */
  void helmPatch(String json) {
    client
        .apps()
        .statefulSets()
        .inNamespace(ns)
        .withName(STS)
        .patch(
            new io.fabric8.kubernetes.client.dsl.base.PatchContext.Builder()
                .withPatchType(io.fabric8.kubernetes.client.dsl.base.PatchType.STRATEGIC_MERGE)
                .withFieldManager("helm")
                .build(),
            json);
  }

  static String env(StatefulSet s, String name) {
    return s.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
        .filter(e -> name.equals(e.getName()))
        .map(io.fabric8.kubernetes.api.model.EnvVar::getValue)
        .findFirst()
        .orElse(null);
  }

  /** The StatefulSet controller has seen the last write and every pod runs its update revision. */
  boolean podsOnUpdateRevision() {
    StatefulSet s = sts();
    if (s.getStatus() == null
        || s.getStatus().getUpdateRevision() == null
        || !Objects.equals(
            s.getStatus().getObservedGeneration(), s.getMetadata().getGeneration())) {
      return false;
    }
    List<Pod> pods =
        client.pods().inNamespace(ns).withLabel("app", "rs").list().getItems().stream()
            .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
            .toList();
    return pods.size() == 3
        && pods.stream()
            .allMatch(
                p ->
                    s.getStatus()
                        .getUpdateRevision()
                        .equals(p.getMetadata().getLabels().get("controller-revision-hash")));
  }

  @Test
  void
      anotherManagerPuttingItsFieldsBackRestartsNothingAndItsTemplateChangeRollsThroughTheOperator()
          throws Exception {
    controllers =
        ControllerManager.start(
            kubeConfigYaml, "statefulset-controller", "garbage-collector-controller");
    closeAfter.add(controllers);
    cluster("4Gi", false);
    BlockCacheOperator first = operator(null);
    policy("drift", "  mode: MetaOnly\n");
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> idleAndApplied("drift") && podsOnUpdateRevision());
    assertThat(kube.deleteCount)
        .as("the first roll")
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
    StatefulSet applied = sts();
    String heap = env(applied, "HBASE_HEAPSIZE");
    Long grace = applied.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
    assertThat(heap).isNotEqualTo("640m");
    assertThat(grace).isNotEqualTo(30L);

    // helm upgrade without blockCachePolicy, while the operator is down (restarting, upgraded):
    // the chart's values of the operator's fields come back, the StatefulSet controller makes a
    // revision of them, and the operator's first look finds every pod "outdated"
    first.stop();
    helmPatch(
        "{\"spec\":{\"template\":{\"spec\":{\"terminationGracePeriodSeconds\":30,"
            + "\"containers\":[{\"name\":\"regionserver\","
            + "\"env\":[{\"name\":\"HBASE_HEAPSIZE\",\"value\":\"640m\"}]}]}}}}");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              StatefulSet s = sts();
              return Objects.equals(
                      s.getStatus().getObservedGeneration(), s.getMetadata().getGeneration())
                  && !podsOnUpdateRevision();
            });
    operator(null);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              StatefulSet s = sts();
              assertThat(env(s, "HBASE_HEAPSIZE")).as("the operator's heap back").isEqualTo(heap);
              assertThat(s.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds())
                  .isEqualTo(grace);
              assertThat(podsOnUpdateRevision())
                  .as("the pods run the StatefulSet's revision")
                  .isTrue();
            });
    await("no pod restarted for fields another manager put back")
        .during(Duration.ofSeconds(10))
        .atMost(Duration.ofSeconds(15))
        .until(() -> kube.deletes.size() == 3);
    assertThat(idleAndApplied("drift")).isTrue();

    // a change of the chart's own pod template: rolled by the operator, one pod at a time
    kube.maxDown = 0;
    helmPatch("{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"team\":\"search\"}}}}}");
    await()
        .atMost(Duration.ofSeconds(120))
        .until(() -> kube.deletes.size() == 6 && idleAndApplied("drift") && podsOnUpdateRevision());
    assertThat(kube.deleteCount)
        .containsOnly(Map.entry("rs-0", 2), Map.entry("rs-1", 2), Map.entry("rs-2", 2));
    assertThat(kube.maxDown).isEqualTo(1);
    assertThat(client.pods().inNamespace(ns).withLabel("app", "rs").list().getItems())
        .allSatisfy(
            p -> assertThat(p.getMetadata().getAnnotations()).containsEntry("team", "search"));
    eventually(
        () ->
            assertThat(events())
                .filteredOn(e -> "RollStarted".equals(e.getReason()))
                .anySatisfy(e -> assertThat(e.getMessage()).contains("older pod template")));
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

  Quantity pvcSize(int i) {
    return client
        .persistentVolumeClaims()
        .inNamespace(ns)
        .withName("bucketcache-rs-" + i)
        .get()
        .getSpec()
        .getResources()
        .getRequests()
        .get("storage");
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
    // a few more intervals: the warning is not repeated, nothing is written
    Thread.sleep(25_000);
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
