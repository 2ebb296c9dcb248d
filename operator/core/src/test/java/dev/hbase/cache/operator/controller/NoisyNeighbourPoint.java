package dev.hbase.cache.operator.controller;

import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.controller.OperatorScaleBench.Histogram;
import dev.hbase.cache.operator.controller.OperatorScaleBench.Point;
import dev.hbase.cache.operator.hbase.InfoPortServer;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code make bench-operator}'s noisy-neighbour row (issue 49): 49 quiet policies (StatefulSets of
 * {@value #QUIET_REPLICAS} simulated RegionServers, as the scale points make them) and the operator
 * in a process of its own from its jar under the chart's JVM options, first alone (the baseline
 * window), then beside one noisy tenant whose
 *
 * <ul>
 *   <li>16 Ready pods' info ports stall: the operator's production scraper asks a socket server of
 *       this benchmark that sends the headers of a 1 GB body and then a byte every 2 s (pods 0-7),
 *       or a body of no declared length at that pace (pods 8-15);
 *   <li>namespace holds 320 ConfigMaps of 1 MiB that no policy names;
 *   <li>policy's client settings churn: {@code spec.hbase.zookeeperZnodeParent} patched to a new
 *       value every {@value #CHURN_MILLIS} ms.
 * </ul>
 *
 * Three windows: alone; beside the stalling pods and the churn; and beside all three, the
 * ConfigMaps created last (the whole row: one part that takes the operator down would otherwise
 * hide what the others do). Reported: the quiet policies' reconcile p50 / p99 in each window (the
 * noisy namespace's own series left out), their reconciles, the operator process's RSS and peak RSS
 * (sampled each second), whether it was still running, and the noisy policy's Degraded condition.
 * The goal, on the last window: the quiet p99 within 2x of the baseline's, the RSS under the
 * chart's 512 Mi limit. Alone: {@code make bench-operator BENCH_ARGS=-Dbench.points=noisy} (~20 min
 * on 2 cores); {@code -Dbench.noisyConfigMaps=N} floods with N ConfigMaps instead.
 */
final class NoisyNeighbourPoint {
  static final int QUIET = 49;
  static final int QUIET_REPLICAS = 2;
  static final int NOISY_PODS = 16;
  static final int FLOOD_CONFIGMAPS = Integer.getInteger("bench.noisyConfigMaps", 320);

  /** Just under the API server's 1 MiB limit for a ConfigMap's data. */
  static final int CONFIGMAP_BYTES = (1 << 20) - 1024;

  static final int CHURN_MILLIS = 2000;
  static final Duration WINDOW = Duration.ofSeconds(Integer.getInteger("bench.noisySeconds", 120));

  /** The chart's memory limit. */
  static final long LIMIT_MIB = 512;

  private final int run;
  private final KubernetesClient client = OperatorScaleBench.client;

  NoisyNeighbourPoint(int run) {
    this.run = run;
  }

  Map<String, Object> run() throws Exception {
    Map<String, Object> r = new LinkedHashMap<>();
    Point quiet = new Point(run, QUIET, QUIET_REPLICAS, true);
    r.put("quietPolicies", QUIET);
    r.put("quietRegionServers", QUIET * QUIET_REPLICAS);
    for (int c = 0; c < QUIET; c++) {
      quiet.cluster(c);
    }
    await()
        .atMost(Duration.ofMinutes(5))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> quiet.kubes.stream().allMatch(k -> k.allReadyAndRegistered(QUIET_REPLICAS)));
    quiet.kubes.forEach(k -> k.maxDown = 0);

    String noisyNs = "noisy-" + run;
    String subnet = "10." + run + ".99.";
    try (InfoPortServer hugeHeaders =
            InfoPortServer.trickling(1_000_000_000L, Duration.ofSeconds(2));
        InfoPortServer trickle = InfoPortServer.trickling(null, Duration.ofSeconds(2));
        HBaseBridge bridge = new HBaseBridge(quiet.byQuorum::get, quiet.probe())) {
      List<String> jvm = new ArrayList<>(OperatorScaleBench.OPERATOR_JVM);
      // the noisy pods' info ports: asked by the production scraper, at these servers; pods 0-7
      // get the 1 GB headers, 8-15 the trickle without a length (BridgedOperator picks by IP)
      jvm.add("-Dbridge.realJmx=" + subnet + "=" + hugeHeaders.port() + "," + trickle.port());
      OperatorUnderTest op =
          OperatorUnderTest.process(
              OperatorScaleBench.kubeConfigYaml,
              bridge.url(),
              jvm,
              OperatorScaleBench.OUT.resolve("operator-process-noisy-" + run + ".log"));
      AtomicBoolean churning = new AtomicBoolean();
      Thread churn = null;
      // the process's peak RSS, looked at every second: its last figure stays if it dies
      java.util.concurrent.atomic.AtomicLong peak = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicReference<Instant> died =
          new java.util.concurrent.atomic.AtomicReference<>();
      Thread memory =
          new Thread(
              () -> {
                while (died.get() == null) {
                  if (!alive(op)) {
                    died.set(Instant.now());
                    return;
                  }
                  peak.accumulateAndGet(peakRss(op), Math::max);
                  try {
                    Thread.sleep(1000);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "noisy-memory");
      memory.setDaemon(true);
      memory.start();
      try {
        for (String ns : quiet.namespaces) {
          quiet.policy(ns);
        }
        await()
            .atMost(Duration.ofMinutes(30))
            .pollInterval(Duration.ofSeconds(2))
            .until(() -> quiet.namespaces.stream().allMatch(Point::idleAndApplied));
        quiet.settle();

        r.put("baseline", window(op, null));

        // the noisy tenant: first its stalling pods and its churning policy
        Instant t0 = Instant.now();
        SimulatedHBase noisyHBase = noisyTenant(noisyNs, subnet, quiet);
        quiet.policy(noisyNs); // the same policy as the quiet ones
        AtomicInteger churns = new AtomicInteger();
        churning.set(true);
        churn =
            new Thread(
                () -> {
                  while (churning.get()) {
                    try {
                      client
                          .resources(BlockCachePolicy.class)
                          .inNamespace(noisyNs)
                          .withName("cache")
                          .patch(
                              PatchContext.of(PatchType.JSON_MERGE),
                              "{\"spec\":{\"hbase\":{\"zookeeperZnodeParent\":\"/hbase-"
                                  + churns.incrementAndGet()
                                  + "\"}}}");
                      Thread.sleep(CHURN_MILLIS);
                    } catch (InterruptedException e) {
                      return;
                    } catch (RuntimeException e) {
                      // the API server busy: the next patch
                    }
                  }
                },
                "noisy-churn");
        churn.setDaemon(true);
        churn.start();
        await()
            .atMost(Duration.ofMinutes(3))
            .until(
                () ->
                    (trickle.requests.get() >= 4 && hugeHeaders.requests.get() >= 1) || !alive(op));
        Thread.sleep(30_000); // the stall and the churn under way
        Map<String, Object> stalling = window(op, noisyNs);
        stalling.put("noisyPolicyDegraded", degraded(noisyNs));
        stalling.put("churnPatches", churns.get());
        r.put("stallAndChurn", stalling);

        // then its namespace's flood of ConfigMaps that no policy names: the whole row
        Instant f0 = Instant.now();
        flood(noisyNs);
        r.put("configMapFloodSeconds", Duration.between(f0, Instant.now()).toSeconds());
        r.put("floodConfigMaps", FLOOD_CONFIGMAPS);
        Thread.sleep(30_000);
        Map<String, Object> beside = window(op, noisyNs);
        beside.put("noisyPolicyDegraded", degraded(noisyNs));
        beside.put("noisyStalledAsksHeldAtOnce", trickle.mostOpen.get());
        beside.put("churnPatches", churns.get());
        beside.put("noisySimulatedConnects", noisyHBase.connects);
        r.put("noisy", beside);
        r.put("operatorProcessPeakRssMiB", Math.max(peak.get(), peakRss(op)));
        if (died.get() != null) {
          r.put("operatorExitedAfterSeconds", Duration.between(t0, died.get()).toSeconds());
        }
        Map<String, Object> baseline = cast(r.get("baseline"));
        Double p0 = (Double) baseline.get("quietReconcileP99Ms");
        Double p1 = (Double) beside.get("quietReconcileP99Ms");
        r.put("quietP99Ratio", p0 == null || p1 == null || p0 == 0 ? null : round(p1 / p0));
        r.put("goalP99WithinTwice", p0 != null && p1 != null && p1 <= 2 * p0);
        r.put(
            "goalRssUnderLimit",
            alive(op) && (Long) r.get("operatorProcessPeakRssMiB") < LIMIT_MIB);
      } finally {
        memory.interrupt();
        churning.set(false);
        if (churn != null) {
          churn.interrupt();
        }
        cleanUp(op, quiet, noisyNs);
      }
    }
    System.out.println("NOISY NEIGHBOUR " + Serialization.asJson(r));
    return r;
  }

  /** One window of {@link #WINDOW}: the quiet policies' reconciles, the process's memory. */
  private Map<String, Object> window(OperatorUnderTest op, String noisyNs)
      throws InterruptedException {
    Map<String, Object> w = new LinkedHashMap<>();
    Histogram h0 = histogram(op, noisyNs);
    long cpu0 = op.cpuNanos();
    Thread.sleep(WINDOW.toMillis());
    Histogram h1 = histogram(op, noisyNs);
    w.put("seconds", WINDOW.toSeconds());
    w.put("operatorRunning", alive(op));
    if (h0 != null && h1 != null) {
      Histogram h = h1.minus(h0);
      w.put("quietReconciles", h.count);
      w.put("quietReconcileP50Ms", h.quantileMs(0.5));
      w.put("quietReconcileP99Ms", h.quantileMs(0.99));
    }
    if (noisyNs != null && h1 != null) {
      w.put("noisyReconcilesSoFar", Histogram.only(op.metrics(), noisyNs).count);
    }
    w.put("processCpuCores", round((op.cpuNanos() - cpu0) / 1e9 / WINDOW.toSeconds()));
    w.put("rssMiB", OperatorUnderTest.Proc.statusKiB(op.pid(), "VmRSS") >> 10);
    w.put("peakRssMiB", peakRss(op));
    w.put("loadAverage", OperatorScaleBench.Usage.loadAverage());
    return w;
  }

  /** Every policy's series but the noisy namespace's; null when the process does not answer. */
  private static Histogram histogram(OperatorUnderTest op, String excludeNs) {
    try {
      return Histogram.of(op.metrics(), excludeNs);
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static long peakRss(OperatorUnderTest op) {
    return OperatorUnderTest.Proc.statusKiB(op.pid(), "VmHWM") >> 10;
  }

  private static boolean alive(OperatorUnderTest op) {
    return ProcessHandle.of(op.pid()).map(ProcessHandle::isAlive).orElse(false);
  }

  /**
   * {@value #FLOOD_CONFIGMAPS} ConfigMaps of 1 MiB in the namespace, four creates at a time (one at
   * a time took 451 s on a loaded machine).
   */
  private void flood(String ns) throws InterruptedException {
    String filler = "x".repeat(CONFIGMAP_BYTES);
    java.util.concurrent.ExecutorService creates =
        java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      for (int i = 0; i < FLOOD_CONFIGMAPS; i++) {
        String name = "flood-" + i;
        creates.execute(
            () ->
                client
                    .resource(
                        new ConfigMapBuilder()
                            .withNewMetadata()
                            .withName(name)
                            .withNamespace(ns)
                            .endMetadata()
                            .addToData("blob", filler)
                            .build())
                    .create());
      }
    } finally {
      creates.shutdown();
      creates.awaitTermination(30, java.util.concurrent.TimeUnit.MINUTES);
    }
  }

  /** The noisy namespace: its base hbase-site and 16 Ready pods. */
  private SimulatedHBase noisyTenant(String ns, String subnet, Point quiet) {
    String quorum = "zk." + ns;
    FakeKube.tenant(client, ns, quorum, NOISY_PODS);
    SimulatedHBase hbase = new SimulatedHBase(Instant::now);
    Map<String, List<String>> regions = new LinkedHashMap<>();
    for (int i = 0; i < NOISY_PODS; i++) {
      regions.put("rs-" + i, new ArrayList<>(List.of("noisy-r" + i)));
    }
    FakeKube kube = new FakeKube(client, ns, "rs", hbase, regions);
    kube.tick = Duration.ofSeconds(1);
    kube.subnet = subnet;
    quiet.byQuorum.put(quorum, hbase);
    quiet.kubes.add(kube.start());
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> kube.allReadyAndRegistered(NOISY_PODS));
    return hbase;
  }

  private String degraded(String ns) {
    BlockCachePolicy p =
        client.resources(BlockCachePolicy.class).inNamespace(ns).withName("cache").get();
    if (p == null || p.getStatus() == null) {
      return null;
    }
    return Conditions.find(p.getStatus().getConditions(), "Degraded")
        .map(c -> c.getStatus() + " " + c.getReason() + ": " + c.getMessage())
        .orElse(null);
  }

  /** The noisy tenant's objects, then the quiet ones as the scale points clean up. */
  private void cleanUp(OperatorUnderTest op, Point quiet, String noisyNs) {
    try {
      var noisy = client.resources(BlockCachePolicy.class).inNamespace(noisyNs).withName("cache");
      if (noisy.get() != null) {
        if (!alive(op)) {
          noisy.edit(
              p -> {
                p.getMetadata().setFinalizers(List.of());
                return p;
              });
        }
        noisy.delete();
      }
      if (!alive(op)) {
        for (String ns : quiet.namespaces) {
          var p = client.resources(BlockCachePolicy.class).inNamespace(ns).withName("cache");
          if (p.get() != null) {
            p.edit(
                x -> {
                  x.getMetadata().setFinalizers(List.of());
                  return x;
                });
          }
        }
      }
    } finally {
      quiet.cleanUp(op);
      client.apps().statefulSets().inNamespace(noisyNs).delete();
      client.pods().inNamespace(noisyNs).delete();
      unflood(noisyNs);
      client.configMaps().inNamespace(noisyNs).delete(); // what is left: the base hbase-site
    }
  }

  /**
   * The flood's ConfigMaps, by name, four deletes at a time. Not a collection delete: its answer
   * lists every object deleted, whole (320 MiB here), read into this benchmark's heap, which ran
   * out of memory under the chart's 358 MB there (seen on 2026-12-03: the OutOfMemoryError in that
   * delete, in the row's cleanup after all its windows, with 343 MB of byte arrays on the heap).
   */
  private void unflood(String ns) {
    java.util.concurrent.ExecutorService deletes =
        java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      for (int i = 0; i < FLOOD_CONFIGMAPS; i++) {
        String name = "flood-" + i;
        deletes.execute(() -> client.configMaps().inNamespace(ns).withName(name).delete());
      }
    } finally {
      deletes.shutdown();
      try {
        deletes.awaitTermination(30, java.util.concurrent.TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> cast(Object o) {
    return (Map<String, Object>) o;
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }
}
