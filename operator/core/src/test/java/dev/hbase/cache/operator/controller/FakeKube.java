package dev.hbase.cache.operator.controller;

import dev.hbase.cache.operator.hbase.SimulatedHBase;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Plays the parts kube-api-test lacks, for one StatefulSet: the StatefulSet controller (creates
 * missing pods from the current template, and their PVCs from the claim templates), the kubelet (a
 * pod becomes Ready after a delay, its RegionServer registers with {@link SimulatedHBase}) and the
 * garbage collector (finishes an orphan delete). It records deletes and the most pods down.
 */
final class FakeKube implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(FakeKube.class);
  private final KubernetesClient client;
  private final String ns;
  private final String sts;
  private final SimulatedHBase hbase;
  private final Map<String, List<String>> initialRegions;
  private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor();
  private final Map<String, Instant> createdAt = new ConcurrentHashMap<>();
  private final Map<String, String> knownUid = new ConcurrentHashMap<>();
  final Set<String> neverReady = ConcurrentHashMap.newKeySet();
  final List<String> deletes = Collections.synchronizedList(new ArrayList<>());
  final Map<String, Integer> deleteCount = new ConcurrentHashMap<>();
  final Set<String> pvcUidsSeen = ConcurrentHashMap.newKeySet();
  volatile Duration readyAfter = Duration.ofMillis(800);

  /** How often it looks (set before {@link #start}): many of them at once look less often. */
  Duration tick = Duration.ofMillis(150);

  /** The pods' IPs are this prefix and 10 + ordinal (set before {@link #start}). */
  String subnet = "10.0.0.";

  /**
   * A real StatefulSet controller and garbage collector run ({@link ControllerManager}): play only
   * the kubelet (Ready after {@link #readyAfter}, the RegionServer registers).
   */
  volatile boolean kubeletOnly;

  volatile int maxDown;
  volatile boolean started;

  FakeKube(
      KubernetesClient client,
      String ns,
      String sts,
      SimulatedHBase hbase,
      Map<String, List<String>> initialRegions) {
    this.client = client;
    this.ns = ns;
    this.sts = sts;
    this.hbase = hbase;
    this.initialRegions = new HashMap<>(initialRegions);
  }

  FakeKube start() {
    loop.scheduleWithFixedDelay(this::safeTick, 0, tick.toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  private void safeTick() {
    try {
      tick();
    } catch (Exception e) {
      log.debug("fake kube tick: {}", e.toString());
    }
  }

  private void tick() {
    StatefulSet set = client.apps().statefulSets().inNamespace(ns).withName(sts).get();
    if (set != null && set.getMetadata().getDeletionTimestamp() != null && !kubeletOnly) {
      // the garbage collector's part of an orphan delete
      client
          .apps()
          .statefulSets()
          .inNamespace(ns)
          .withName(sts)
          .edit(
              s -> {
                s.getMetadata().setFinalizers(List.of());
                return s;
              });
      return;
    }
    Map<String, Pod> pods = new HashMap<>();
    client
        .pods()
        .inNamespace(ns)
        .list()
        .getItems()
        .forEach(p -> pods.put(p.getMetadata().getName(), p));
    // pods that went away
    for (String name : List.copyOf(knownUid.keySet())) {
      Pod p = pods.get(name);
      if (p == null || !p.getMetadata().getUid().equals(knownUid.get(name))) {
        knownUid.remove(name);
        createdAt.remove(name);
        hbase.unregister(name);
        deletes.add(name);
        deleteCount.merge(name, 1, Integer::sum);
      }
    }
    if (set == null) {
      return; // between an orphan delete and the create: pods keep running
    }
    int replicas = set.getSpec().getReplicas();
    int down = 0;
    for (int i = 0; i < replicas; i++) {
      String name = sts + "-" + i;
      Pod p = pods.get(name);
      if (p == null && kubeletOnly) {
        down++; // the StatefulSet controller creates it
        continue;
      }
      if (p == null) {
        p = client.resource(podFromTemplate(set, i)).create();
        createdAt.put(name, Instant.now());
        down++;
        knownUid.put(name, p.getMetadata().getUid());
        continue;
      }
      knownUid.putIfAbsent(name, p.getMetadata().getUid());
      if (!Readiness.isPodReady(p)) {
        down++;
        Instant c = createdAt.computeIfAbsent(name, k -> Instant.now());
        if (!neverReady.contains(name)
            && Duration.between(c, Instant.now()).compareTo(readyAfter) >= 0) {
          markReady(p, i);
          hbase.register(name, host(name), ip(i), initialRegions.getOrDefault(name, List.of()));
          initialRegions.remove(name);
        }
      }
    }
    maxDown = Math.max(maxDown, down);
    for (PersistentVolumeClaim pvc :
        client.persistentVolumeClaims().inNamespace(ns).list().getItems()) {
      pvcUidsSeen.add(pvc.getMetadata().getUid());
    }
    started = true;
  }

  Pod podFromTemplate(StatefulSet set, int ordinal) {
    String name = sts + "-" + ordinal;
    var template = set.getSpec().getTemplate();
    var spec = io.fabric8.kubernetes.client.utils.Serialization.clone(template.getSpec());
    if (set.getSpec().getVolumeClaimTemplates() != null) {
      for (PersistentVolumeClaim t : set.getSpec().getVolumeClaimTemplates()) {
        String claim = t.getMetadata().getName() + "-" + name;
        if (client.persistentVolumeClaims().inNamespace(ns).withName(claim).get() == null) {
          client
              .resource(
                  new PersistentVolumeClaimBuilder()
                      .withNewMetadata()
                      .withName(claim)
                      .withNamespace(ns)
                      .endMetadata()
                      .withSpec(t.getSpec())
                      .build())
              .create();
        }
        spec.getVolumes()
            .add(
                new VolumeBuilder()
                    .withName(t.getMetadata().getName())
                    .withNewPersistentVolumeClaim()
                    .withClaimName(claim)
                    .endPersistentVolumeClaim()
                    .build());
      }
    }
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(ns)
        .withLabels(template.getMetadata().getLabels())
        .addToLabels(Informers.STATEFULSET_POD_LABEL, name)
        .withAnnotations(template.getMetadata().getAnnotations())
        .endMetadata()
        .withSpec(spec)
        .build();
  }

  private void markReady(Pod p, int ordinal) {
    PodCondition ready = new PodConditionBuilder().withType("Ready").withStatus("True").build();
    p.setStatus(
        new io.fabric8.kubernetes.api.model.PodStatusBuilder()
            .withPhase("Running")
            .withPodIP(ip(ordinal))
            .withConditions(ready)
            .addNewContainerStatus()
            .withName("regionserver")
            .withImage("hbase:2.6.4")
            .withImageID("x")
            .withReady(true)
            .withRestartCount(0)
            .withNewState()
            .withNewRunning()
            .withStartedAt(Instant.now().toString())
            .endRunning()
            .endState()
            .endContainerStatus()
            .build());
    client.resource(p).updateStatus();
  }

  String host(String pod) {
    return pod + "." + sts + "." + ns + ".svc.cluster.local";
  }

  String ip(int ordinal) {
    return subnet + (10 + ordinal);
  }

  boolean allReadyAndRegistered(int n) {
    for (int i = 0; i < n; i++) {
      if (!hbase.registered(sts + "-" + i)) {
        return false;
      }
    }
    return true;
  }

  /**
   * What a test tenant stands on: namespace {@code ns}, its base hbase-site (ConfigMap {@code
   * hbase-site}, naming ZooKeeper quorum {@code quorum}) and StatefulSet {@code rs} of {@code
   * replicas} RegionServers (4Gi each, mounting that ConfigMap, no volume claim templates yet).
   */
  static void tenant(KubernetesClient client, String ns, String quorum, int replicas) {
    client
        .resource(
            new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                .withNewMetadata()
                .withName(ns)
                .endMetadata()
                .build())
        .create();
    client
        .resource(
            new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withName("hbase-site")
                .withNamespace(ns)
                .endMetadata()
                .addToData(
                    "hbase-site.xml",
                    "<configuration>\n<property><name>hbase.zookeeper.quorum</name><value>"
                        + quorum
                        + "</value></property>\n</configuration>\n")
                .build())
        .create();
    client
        .resource(
            new io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder()
                .withNewMetadata()
                .withName("rs")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withReplicas(replicas)
                .withServiceName("rs")
                .withNewSelector()
                .addToMatchLabels("app", "rs")
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .addToLabels("app", "rs")
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("regionserver")
                .withImage("hbase:2.6.4")
                .withNewResources()
                .addToLimits("memory", new io.fabric8.kubernetes.api.model.Quantity("4Gi"))
                .addToRequests("memory", new io.fabric8.kubernetes.api.model.Quantity("4Gi"))
                .endResources()
                .addNewVolumeMount()
                .withName("config")
                .withMountPath("/etc/hbase")
                .endVolumeMount()
                .endContainer()
                .addNewVolume()
                .withName("config")
                .withNewConfigMap()
                .withName("hbase-site")
                .endConfigMap()
                .endVolume()
                .endSpec()
                .endTemplate()
                .withVolumeClaimTemplates(new ArrayList<>())
                .endSpec()
                .build())
        .create();
  }

  @Override
  public void close() {
    loop.shutdownNow();
  }
}
