package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.MASTER_POD;
import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static dev.hbase.cache.e2e.Cluster.RS;
import static dev.hbase.cache.e2e.Cluster.condition;
import static dev.hbase.cache.e2e.Cluster.isTrue;
import static dev.hbase.cache.e2e.Cluster.tuning;
import static dev.hbase.cache.e2e.RollObserver.ROLL_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.JvmSpec;
import dev.hbase.cache.api.v1alpha1.spec.MetricsSpec;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The end-to-end story on a kind cluster with charts/hbase installed (e2e/e2e.sh prepares it): the
 * operator (e2e/kind/operator-up.sh), the PersistentFile example, a table and a reader, two rolls
 * (one with the operator killed in the middle), a refused policy, a pod that cannot start, and the
 * policy's deletion. One cluster, one ordered story: a failed step skips the rest. Every number
 * seen goes to e2e/target/e2e-report.md. Rolls are measured by {@link RollObserver}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KindE2ETest {
  static final String TABLE = "usertable";
  static final long ROWS = 50_000;
  static final int VALUE_BYTES = 4096;
  static final int REGIONS = 6;
  static final String READER = "e2e-reader";
  /** Observation windows in which nothing may change (the refused policy, the blocked roll, the deleted policy). */
  static final Duration NOTHING_CHANGES = Duration.ofSeconds(30);
  static final Duration NO_ROLL_AFTER_REVERT = Duration.ofSeconds(15);

  final Path repo = Path.of(System.getProperty("e2e.repo", "..")).toAbsolutePath().normalize();
  final Path target = repo.resolve("e2e/target");
  final Instant suiteStart = Instant.now();
  final List<String> summary = new ArrayList<>();
  /** Each step's wall time as "| step | s | result |" rows, for the summary's table (where the suite's time goes). */
  final List<String> stepTimes = new ArrayList<>();
  Settings settings;
  KubernetesClient client;
  Cluster cluster;
  Report report;
  PodWatch watch;
  JmxSampler sampler;
  Prometheus prometheus;
  Workload workload;
  boolean failed;
  Instant readerStart;
  Instant lastRollEnd;

  @BeforeAll
  void setUp() throws Exception {
    settings = Settings.load(repo);
    client = new KubernetesClientBuilder().withConfig(Config.autoConfigure(settings.context())).build();
    cluster = new Cluster(client, settings);
    report = new Report(target.resolve("e2e-report.md"));
    report.line("cluster context `%s`, HBase namespace `%s`, operator release `%s` in namespace `%s`, images `%s`, `%s` (e2e/kind/lib.sh)",
        settings.context(), cluster.ns, settings.operatorRelease(), cluster.opNs, settings.hbaseImage(), settings.operatorImage());
    assertThat(cluster.regionServers()).as("charts/hbase installed in %s (e2e/e2e.sh does it)", cluster.ns).isNotNull();
    Path jar = target.resolve("workload/workload.jar");
    if (!Files.exists(jar)) {
      Shell.Result r = Shell.run(repo, 300, List.of("e2e/workload/build.sh"));
      assertThat(r.code()).as("e2e/workload/build.sh: %s", r.output()).isZero();
    }
    workload = new Workload(client, cluster.ns, settings.hbaseImage(), jar);
    watch = new PodWatch(client, cluster.ns, RS, REPLICAS);
    List<String> pods = new ArrayList<>();
    for (int i = 0; i < REPLICAS; i++) {
      pods.add(Cluster.pod(i));
    }
    sampler = new JmxSampler(client, cluster.ns, pods, Duration.ofSeconds(5));
    Path bin = repo.resolve("bin/prometheus");
    if (!Files.isExecutable(bin)) {
      Shell.Result r = Shell.run(repo, 300, List.of("e2e/kind/tools.sh", "prometheus"));
      assertThat(r.code()).as("e2e/kind/tools.sh prometheus: %s", r.output()).isZero();
    }
    // scrapes nothing until step 1 has installed the chart's ServiceMonitor, PodMonitor and PrometheusRule
    prometheus = Prometheus.start(bin, target.resolve("prometheus"), client.getConfiguration());
  }

  @AfterAll
  void tearDown() throws Exception {
    try {
      if (report == null) {
        return; // setUp failed before there was a report
      }
      if (readerStart != null) {
        String log = safe(() -> workload.log(READER));
        if (log != null) {
          Files.writeString(target.resolve("reader.log"), log);
          Workload.Stats all = Workload.stats(log, readerStart, Instant.now());
          report.section("Reader over the whole run");
          report.line("- %s", all.summary());
          all.errors().stream().limit(20).forEach(e -> report.line("  - `%s`", e));
        }
        safe(() -> {
          workload.delete(READER);
          return null;
        });
      }
      if (sampler != null) {
        Files.writeString(target.resolve("jmx-samples.csv"), sampler.csv());
      }
      String opLog = cluster == null ? null : safe(cluster::operatorLogs);
      if (opLog != null) {
        Files.writeString(target.resolve("operator.log"), opLog);
        long forbidden = opLog.lines().filter(l -> l.toLowerCase().contains("forbidden")).count();
        report.line("- operator log: %d lines, %d mention `forbidden` (saved to e2e/target/operator.log)", opLog.lines().count(),
            forbidden);
      }
      String events = cluster == null ? null : safe(cluster::allPolicyEvents);
      if (events != null) {
        Files.writeString(target.resolve("policy-events.txt"), events);
      }
      report.section("Summary");
      summary.forEach(s -> report.line("- %s", s));
      report.line("- suite wall time: %d s", Duration.between(suiteStart, Instant.now()).toSeconds());
      report.section("Where the suite's time went");
      report.line("| step | wall time | result |");
      report.line("|---|---:|---|");
      stepTimes.forEach(report::line);
    } finally {
      if (sampler != null) {
        sampler.close();
      }
      if (prometheus != null) {
        prometheus.close();
      }
      if (watch != null) {
        watch.close();
      }
      if (client != null) {
        client.close();
      }
    }
  }

  /**
   * After every fault scenario (tag "fault"), whatever it did: the cluster as HBase runs without
   * a roll, HBase's balancer on and no decommission mark left, within a minute.
   */
  @AfterEach
  void clusterGivenBack(TestInfo info) {
    if (failed || report == null || !info.getTags().contains("fault")) {
      return;
    }
    AtomicReference<String> seen = new AtomicReference<>();
    Instant t0 = Instant.now();
    try {
      await("HBase's balancer on and no decommission mark").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(3))
          .until(() -> {
            Boolean on = cluster.balancerOn();
            String marks = cluster.drainingRegionServers();
            String from = "the master's /jmx";
            if (marks == null) { // not in this HBase's metrics: ask through the Admin API
              String said = said(admin("decommissioned", List.of()));
              marks = said.replaceAll("^.*\\[(.*)\\].*$", "$1");
              from = "Admin.listDecommissionedRegionServers";
            }
            seen.set(String.format("HBase's balancer on: %s; decommissioned RegionServers (%s): [%s]", on, from, marks));
            return Boolean.TRUE.equals(on) && marks.isBlank();
          });
      report.line("- after the scenario (%d s): %s", Duration.between(t0, Instant.now()).toSeconds(), seen.get());
    } catch (Throwable e) { // the wait's timeout, or the Admin API's answer failing
      failed = true;
      report.line("- FAILED after the scenario: the cluster was not given back within 60 s: %s (%s)", seen.get(), e.getMessage());
      diagnostics();
      throw new AssertionError("after " + info.getDisplayName() + ": " + seen.get(), e);
    }
  }

  // ======================================================================== the story

  @Test
  @Order(1)
  @Tag("setup")
  void crdAndOperatorChartInstall() {
    step("1. CRD and operator chart install", () -> {
      Instant t0 = Instant.now();
      Shell.Result up = cluster.installOperator();
      assertThat(up.code()).as("e2e/kind/operator-up.sh: %s", up.output()).isZero();
      await("CRD Established").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(1)).until(cluster::crdEstablished);
      Deployment d = cluster.operatorDeployment();
      assertThat(d.getStatus().getReadyReplicas()).as("operator Deployment ready replicas").isEqualTo(1);
      Pod op = cluster.operatorPod();
      assertThat(PodWatch.ready(op)).isTrue();
      report.line("- `e2e/kind/operator-up.sh` (kubectl apply crds/, kind load, helm upgrade --install `%s` -n `%s`): CRD `%s` "
          + "Established, Deployment Ready; %d s in all", settings.operatorRelease(), cluster.opNs, Cluster.CRD,
          Duration.between(t0, Instant.now()).toSeconds());
      up.output().lines().filter(l -> l.contains("install to Ready") || l.contains("loaded ")).forEach(l -> report.line("  - `%s`", l));
      report.line("- operator pod `%s` Ready, image `%s`", op.getMetadata().getName(), op.getSpec().getContainers().get(0).getImage());
      // OPERATOR_MONITORING=1 (Settings.env): the Prometheus Operator's CRDs and the chart's monitoring objects
      List<String> followed = prometheus.followTheChart(client, cluster.opNs, settings.operatorRelease());
      report.line("- the chart's monitoring objects (the Prometheus Operator's CRDs %s, from its Go module), as the host's Prometheus follows them:",
          "applied by operator-up.sh");
      followed.forEach(l -> report.line("  - %s", l));
      assertThat(followed).as("ServiceMonitor endpoints on the operator's metrics Service").anyMatch(l -> l.startsWith("serviceMonitor/"));
      assertThat(followed).as("PodMonitor targets: the RegionServers").filteredOn(l -> l.startsWith("podMonitor/")).hasSize(REPLICAS);
      assertThat(followed).as("PrometheusRule groups").anyMatch(l -> l.startsWith("PrometheusRule "));
    });
  }

  @Test
  @Order(2)
  @Tag("setup")
  void persistentFilePolicyPutsThePlannedCacheInEveryRegionServer() {
    step("2. PersistentFile policy: the planned cache in every RegionServer's metrics", () -> {
      Map<Integer, String> uidsBefore = cluster.podUids();
      BlockCachePolicy p = client.resources(BlockCachePolicy.class).load(repo.resolve("examples/persistent-file.yaml").toFile()).item();
      p.getMetadata().setNamespace(cluster.ns);
      // the only changes to the example: hit ratios every 10 s instead of 30 s, sizing advice every 3 min instead of
      // every hour (a shorter test)
      p.getSpec().setMetrics(new MetricsSpec().setInterval("10s"));
      p.getSpec().setAutoTune(new dev.hbase.cache.api.v1alpha1.spec.AutoTuneSpec().setWindow("3m"));
      // and the cache volumes on storage as a CSI driver gives it: root-owned, not world-writable (kind's local-path
      // directories are 0777 and would hide a RegionServer, user 10001, that cannot write its cache file)
      p.getSpec().getStorage().setStorageClassName(rootOwnedVolumes(p.getSpec().getStorage().getSize().toString()));
      Instant t0 = Instant.now();
      client.resource(p).create();
      BlockCachePolicy done = cluster.awaitRollDone("first roll", null, ROLL_TIMEOUT);
      long secs = Duration.between(t0, Instant.now()).toSeconds();
      var plan = done.getStatus().getPlan();
      report.line("- applied examples/persistent-file.yaml (metrics.interval 10s): Valid, roll to Idle + Ready=True in %d s", secs);
      report.line("- plan: heap %s, direct %s, L1 %s, L2 %s, ioEngine %s, PVC %s", plan.getHeap(), plan.getDirectMemory(),
          plan.getL1Size(), plan.getBucketCacheSize(), plan.getIoEngine(), plan.getPvcSize());
      Map<Integer, String> uidsAfter = cluster.podUids();
      for (int i = 0; i < REPLICAS; i++) {
        assertThat(uidsAfter.get(i)).as("pod %d restarted by the first roll", i).isNotEqualTo(uidsBefore.get(i));
      }
      long l2 = bytes(plan.getBucketCacheSize());
      long l1 = bytes(plan.getL1Size());
      for (int i = 0; i < REPLICAS; i++) {
        String pod = Cluster.pod(i);
        // HBase refreshes these figures every few seconds: a just-restarted server shows zeros first
        Jmx j = Jmx.awaitUntil(client, cluster.ns, pod, "/jmx of " + pod + " shows the L2", Duration.ofMinutes(2), Duration.ofSeconds(3),
            x -> x.l2Capacity() > 0 && x.l1Used() + x.l1Free() > 0);
        PersistentVolumeClaim pvc = cluster.cachePvc(pod);
        assertThat(pvc).as("cache PVC of %s", pod).isNotNull();
        assertThat(pvc.getStatus().getPhase()).isEqualTo("Bound");
        report.line("- `%s`: L2 capacity (l2CacheSize + l2CacheFreeSize) %d bytes = %.1f MiB vs planned %s (%.2f%%); L1 capacity %.1f MiB vs planned %s; PVC %s Bound",
            pod, j.l2Capacity(), j.l2Capacity() / 1048576.0, plan.getBucketCacheSize(), 100.0 * j.l2Capacity() / l2,
            (j.l1Used() + j.l1Free()) / 1048576.0, plan.getL1Size(), pvc.getMetadata().getName());
        assertThat((double) j.l2Capacity()).as("L2 capacity of %s", pod).isCloseTo(l2, within(l2 * 0.05));
        assertThat((double) (j.l1Used() + j.l1Free())).as("L1 capacity of %s", pod).isCloseTo(l1, within(l1 * 0.10));
      }
      // the operator's fsGroup: the kubelet made each root-owned 0755 volume group-writable, and HBase wrote its cache there
      var podSecurity = cluster.regionServers().getSpec().getTemplate().getSpec().getSecurityContext();
      report.line("- pod template securityContext (fsGroup from the operator): fsGroup %s, fsGroupChangePolicy %s",
          podSecurity.getFsGroup(), podSecurity.getFsGroupChangePolicy());
      assertThat(podSecurity.getFsGroup()).as("fsGroup of the RegionServers' pod template").isNotNull();
      for (int i = 0; i < REPLICAS; i++) {
        String dir = ROOT_OWNED_DIR + "/cache-" + i;
        Shell.Result st = Shell.run(settings.repo(), 60, settings.env(), List.of("docker", "exec", settings.kindCluster() + "-control-plane",
            "sh", "-c", "stat -c '%u:%g %a' " + dir + " && ls -ln " + dir));
        report.line("- node `%s` (created root:root 0755): `%s`", dir, st.output().strip().replace("\n", "; "));
        assertThat(st.code()).as("stat %s: %s", dir, st.output()).isZero();
        String[] head = st.output().strip().lines().findFirst().orElseThrow().split(" ");
        assertThat(head[0]).as("owner of %s", dir).isEqualTo("0:" + podSecurity.getFsGroup());
        int mode = Integer.parseInt(head[1], 8);
        assertThat(mode & 0020).as("group-writable %s (mode %s)", dir, head[1]).isNotZero();
        assertThat(st.output()).as("the cache file HBase wrote in %s", dir).contains("bucketcache.data");
      }
      summary.add(String.format("first roll (policy applied): %d s; L2 capacity = plan within 5%% on all %d RegionServers; cache volumes"
          + " root-owned 0755 before, written by the RegionServers through the operator's fsGroup", secs, REPLICAS));
    });
  }

  /** The StorageClass of {@link #rootOwnedVolumes}. */
  static final String ROOT_OWNED_CLASS = "e2e-root-owned";

  /** Where the cache volumes of {@link #rootOwnedVolumes} live on the kind node. */
  static final String ROOT_OWNED_DIR = "/var/lib/hbase-cache-e2e";

  /**
   * A StorageClass without a provisioner and one {@code local} PersistentVolume per RegionServer, each a directory on
   * the kind node owned by root with mode 0755, as a CSI driver's fresh volume is (a local volume, unlike a hostPath one,
   * gets the pod's fsGroup from the kubelet). Returns the class's name.
   */
  String rootOwnedVolumes(String size) {
    String node = settings.kindCluster() + "-control-plane";
    String cls = ROOT_OWNED_CLASS;
    Shell.Result mk = Shell.run(settings.repo(), 60, settings.env(), List.of("docker", "exec", node, "sh", "-c",
        "for i in $(seq 0 " + (REPLICAS - 1) + "); do d=" + ROOT_OWNED_DIR + "/cache-$i; rm -rf $d && mkdir -p $d && chown 0:0 $d"
            + " && chmod 0755 $d; done"));
    assertThat(mk.code()).as("directories on the node: %s", mk.output()).isZero();
    client.storage().v1().storageClasses().resource(new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder()
        .withNewMetadata().withName(cls).endMetadata().withProvisioner("kubernetes.io/no-provisioner")
        .withVolumeBindingMode("WaitForFirstConsumer").withReclaimPolicy("Retain").build()).serverSideApply();
    for (int i = 0; i < REPLICAS; i++) {
      // a cluster kept from an earlier run (REUSE_CLUSTER=1) still has its volume, Released by the claim deleted with the
      // namespace: it would never bind again (its directory was emptied above)
      var old = client.persistentVolumes().withName(cls + "-" + i);
      if (old.get() != null && !"Bound".equals(old.get().getStatus() == null ? null : old.get().getStatus().getPhase())) {
        old.delete();
        await(cls + "-" + i + " of an earlier run deleted").atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofSeconds(1))
            .until(() -> old.get() == null);
      }
      client.persistentVolumes().resource(new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
          .withNewMetadata().withName(cls + "-" + i).endMetadata()
          .withNewSpec().withStorageClassName(cls).withCapacity(Map.of("storage", new io.fabric8.kubernetes.api.model.Quantity(size)))
          .withAccessModes("ReadWriteOnce").withPersistentVolumeReclaimPolicy("Retain")
          .withNewLocal().withPath(ROOT_OWNED_DIR + "/cache-" + i).endLocal()
          .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression().withKey("kubernetes.io/hostname")
          .withOperator("In").withValues(node).endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
          .endSpec().build()).serverSideApply();
    }
    report.line("- StorageClass `%s` (no provisioner): %d local PersistentVolumes of %s, directories on the node root:root 0755",
        cls, REPLICAS, size);
    return cls;
  }

  @Test
  @Order(3)
  @Tag("setup")
  void statusShowsHitRatiosThatMatchTheWorkload() {
    step("3. hit ratios in the status match the workload", () -> {
      Instant t0 = Instant.now();
      Workload.Run load = workload.run("e2e-load", Duration.ofMinutes(10), "load", TABLE, "" + ROWS, "" + VALUE_BYTES, "" + REGIONS);
      String loadLog = load.log();
      loadLog.lines().filter(l -> l.startsWith("put") || l.startsWith("flushed") || l.startsWith("warm-up") || l.startsWith("regions per"))
          .forEach(l -> report.line("- load: %s", l));
      assertThat(load.phase()).as("load pod: %s", loadLog).isEqualTo("Succeeded");
      assertThat(loadLog).contains("LOAD OK");
      report.line("- loaded %d rows x %d B into %d regions and scanned once (warm-up) in %d s", ROWS, VALUE_BYTES, REGIONS,
          Duration.between(t0, Instant.now()).toSeconds());
      workload.delete("e2e-load");

      // a hot set that fits the cache: every row of the table, 200 random Gets/s, from now to the end
      readerStart = workload.startReader(READER, Duration.ofMinutes(3), "read", TABLE, "" + ROWS, "2", "200", "0");
      // two metrics intervals after the reader started, plus HBase's own metrics refresh (<= 10 s)
      Instant from = readerStart.plusSeconds(15);
      AtomicReference<BlockCachePolicy> seen = new AtomicReference<>();
      // sampledAt moves only when the figures change (an unchanged status is not written again): with
      // the table prefetched into the caches before the reader starts, every figure may stay what it
      // was (all hits), so two intervals having passed with the reader running is as good a sample
      await("status sampled twice with the reader running").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(2))
          .until(() -> {
            BlockCachePolicy p = cluster.policy();
            seen.set(p);
            var c = p.getStatus().getCache();
            return c != null && c.getSampledAt() != null
                && (Instant.parse(c.getSampledAt()).isAfter(from.plusSeconds(10)) || Instant.now().isAfter(from.plusSeconds(30)))
                && c.getHitRatio() != null && p.getStatus().getRegionServers().stream().allMatch(r -> r.getHitRatio() != null);
          });
      BlockCachePolicy p = seen.get();
      Instant sampledAt = Instant.parse(p.getStatus().getCache().getSampledAt());
      if (sampledAt.isBefore(from)) {
        report.line("- status.cache.sampledAt %s is before the reader: its figures did not change since (all hits, prefetched)",
            sampledAt);
        sampledAt = Instant.now();
      }
      var c = p.getStatus().getCache();
      Workload.Stats reads = Workload.stats(workload.log(READER), readerStart, Instant.now());
      report.line("- reader: %s", reads.summary());
      report.line("- status.cache (sampled %s): hitRatio %s, l1HitRatio %s, l2HitRatio %s, cumulative %s, used %.1f MiB of %.1f MiB, failedInsertions %d",
          c.getSampledAt(), Report.ratio(c.getHitRatio()), Report.ratio(c.getL1HitRatio()), Report.ratio(c.getL2HitRatio()),
          Report.ratio(c.getCumulativeHitRatio()), c.getUsedBytes() / 1048576.0, c.getSizeBytes() / 1048576.0, c.getFailedInsertions());
      for (RegionServerStatus r : p.getStatus().getRegionServers()) {
        Double own = sampler.ratio(r.getPod(), sampledAt.minusSeconds(20), sampledAt);
        report.line("- `%s`: status hitRatio %s (cumulative %s, L2 used %.1f MiB); the test's own /jmx ratio over the same 20 s: %s",
            r.getPod(), Report.ratio(r.getHitRatio()), Report.ratio(r.getCumulativeHitRatio()),
            r.getL2UsedBytes() == null ? 0 : r.getL2UsedBytes() / 1048576.0, Report.ratio(own));
        assertThat(r.getHitRatio()).as("hitRatio of %s: the hot set fits the cache", r.getPod()).isGreaterThanOrEqualTo(0.95);
        assertThat(r.getL2UsedBytes()).as("L2 used of %s: its third of the %d MB table", r.getPod(), ROWS * VALUE_BYTES >> 20)
            .isGreaterThan(ROWS * VALUE_BYTES / REPLICAS / 2);
        if (own != null) {
          assertThat(r.getHitRatio()).as("status vs /jmx of %s", r.getPod()).isCloseTo(own, within(0.05));
        }
      }
      assertThat(c.getHitRatio()).as("aggregate hitRatio").isGreaterThanOrEqualTo(0.95);
      assertThat(reads.fail()).as("failed reads: %s", reads.errors()).isZero();
      report.line("```\n%s```", cluster.kubectl("-n", cluster.ns, "get", "bcp").output());
      summary.add(String.format("steady state: aggregate data hit ratio %s; per pod %s", Report.ratio(c.getHitRatio()),
          p.getStatus().getRegionServers().stream().map(r -> r.getPod().replace(RS + "-", "rs") + "=" + Report.ratio(r.getHitRatio())).toList()));
    });
  }

  @Test
  @Order(4)
  @Tag("setup")
  void specChangeRollsOneAtATimeWithTheCacheKept() {
    step("4. tuning.writerThreads 3 -> 4: one pod at a time, caches kept, no failed reads", () -> {
      RollObserver roll = observeRoll("writerThreads 3 (HBase default) -> 4");
      cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(4)));
      RollMeasurement m = record(roll.awaitDone());
      assertOneAtATimeWithTheCacheKept(m);
      // the first roll with data: the drain targets have never held these regions (reported, not asserted)
      assertEveryPodHomeWithin(m);
    });
  }

  @Test
  @Order(5)
  @Tag("fault")
  void operatorKilledMidRollResumesWithoutRestartingAPodTwice() {
    step("5. operator pod killed mid-roll (writerThreads 4 -> 5)", () -> {
      RollObserver roll = observeRoll("writerThreads 4 -> 5, operator killed mid-roll");
      cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(5)));
      RolloutStatus mid = roll.awaitRollout("one pod updated and the next in flight",
          ro -> ro.getUpdated() != null && ro.getUpdated() >= 1 && ro.getInFlight() != null && !ro.getInFlight().isEmpty());
      assertThat(mid).as("the operator was killed mid-roll (the roll finished before a second pod was in flight)").isNotNull();
      Pod op = cluster.operatorPod();
      cluster.killOperatorPod(op);
      PodRoll f = mid.getInFlight().get(0);
      report.line("- killed operator pod %s at %s while %s was at step %s (%d/%d updated)", op.getMetadata().getName(), Instant.now(),
          f.getPod(), f.getStep(), mid.getUpdated(), mid.getTotal());
      RollMeasurement m = record(roll.awaitDone());
      Pod next = cluster.operatorPod();
      report.line("- new operator pod `%s` (Ready %s)", next.getMetadata().getName(), PodWatch.ready(next));
      assertOneAtATimeWithTheCacheKept(m);
      assertTheClustersReadsStayedCached(m);
    });
  }

  @Test
  @Order(6)
  @Tag("fault")
  void helmUpgradeOfTheHBaseChartRollsThroughTheOperator() {
    step("6. helm upgrade of charts/hbase (a pod annotation, fields handed to the operator) while Idle: the operator rolls the pods,"
        + " the HMaster keeps running", () -> {
      String oldUpdateRevision = cluster.regionServers().getStatus().getUpdateRevision();
      Pod master = client.pods().inNamespace(cluster.ns).withName(MASTER_POD).get();
      RollObserver roll = observeRoll("helm upgrade charts/hbase --reuse-values --set blockCachePolicy=" + Cluster.POLICY
          + " --set-string regionserver.podAnnotations.team=search").untilTemplateRolled(oldUpdateRevision);
      Shell.Result up = Shell.run(settings.repo(), 300, settings.env(), List.of("bash", "-c",
          ". e2e/kind/lib.sh && helm --kube-context \"$KUBE_CONTEXT\" upgrade \"$HBASE_RELEASE\" charts/hbase -n \"$HBASE_NAMESPACE\""
              + " --reuse-values --set blockCachePolicy=" + Cluster.POLICY + " --set-string regionserver.podAnnotations.team=search"));
      assertThat(up.code()).as("helm upgrade: %s", up.output()).isZero();
      assertThat(cluster.regionServers().getSpec().getUpdateStrategy().getType()).as("update strategy after helm upgrade")
          .isEqualTo("OnDelete");
      RollMeasurement m = record(roll.awaitDone());
      List<Event> started = cluster.policyEvents(Set.of("RollStarted"),
              l -> l.stream().anyMatch(e -> e.getMessage().contains("older pod template"))).stream()
          .filter(e -> e.getMessage().contains("older pod template")).toList();
      report.line("- RollStarted: %s", started.isEmpty() ? "none" : started.get(started.size() - 1).getMessage());
      assertThat(started).as("a RollStarted event that names the pod template change").isNotEmpty();
      assertOneAtATimeWithTheCacheKept(m);
      assertTheClustersReadsStayedCached(m);
      assertEveryPodHomeWithin(m);
      for (int i = 0; i < REPLICAS; i++) {
        assertThat(client.pods().inNamespace(cluster.ns).withName(Cluster.pod(i)).get().getMetadata().getAnnotations())
            .as("the chart's change reached %s", Cluster.pod(i)).containsEntry("team", "search");
      }
      Pod masterAfter = client.pods().inNamespace(cluster.ns).withName(MASTER_POD).get();
      report.line("- HMaster pod `%s`: uid %s before, %s after (the chart renders the operator's master ConfigMap:"
          + " helm put nothing back)", MASTER_POD, master.getMetadata().getUid(), masterAfter.getMetadata().getUid());
      assertThat(masterAfter.getMetadata().getUid()).as("the HMaster pod was not restarted by the helm upgrade")
          .isEqualTo(master.getMetadata().getUid());
      summary.add(String.format("helm upgrade (pod annotation, blockCachePolicy=%s): rolled by the operator in %d s, HMaster kept",
          Cluster.POLICY, Duration.between(m.start(), m.end()).toSeconds()));
    });
  }

  @Test
  @Order(7)
  @Tag("fault")
  void helmUpgradeWhileARollRunsEndsWithEveryPodOnTheNewestTemplate() {
    step("7. helm upgrade of charts/hbase (another pod annotation) while a roll runs (writerThreads 5 -> 6): one pod down at a time,"
        + " every pod ends on the newest template and revision, none restarted after the upgrade more than once", () -> {
      RollObserver roll = observeRoll("writerThreads 5 -> 6, helm upgrade (pod annotation) mid-roll");
      cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(6)));
      RolloutStatus mid = roll.awaitRollout("one pod updated and the next in flight",
          ro -> ro.getUpdated() != null && ro.getUpdated() >= 1 && ro.getInFlight() != null && !ro.getInFlight().isEmpty());
      assertThat(mid).as("a pod in flight after one was updated (the roll finished first)").isNotNull();
      String oldUpdateRevision = cluster.regionServers().getStatus().getUpdateRevision();
      Instant upgraded = Instant.now();
      Shell.Result up = Shell.run(settings.repo(), 300, settings.env(), List.of("bash", "-c",
          ". e2e/kind/lib.sh && helm --kube-context \"$KUBE_CONTEXT\" upgrade \"$HBASE_RELEASE\" charts/hbase -n \"$HBASE_NAMESPACE\""
              + " --reuse-values --set-string regionserver.podAnnotations.team=ads"));
      assertThat(up.code()).as("helm upgrade: %s", up.output()).isZero();
      report.line("- helm upgrade at %s while `%s` was at step %s (%d/%d updated)", upgraded, mid.getInFlight().get(0).getPod(),
          mid.getInFlight().get(0).getStep(), mid.getUpdated(), mid.getTotal());
      RollMeasurement m = record(roll.untilTemplateRolled(oldUpdateRevision).awaitDone());
      assertThat(m.maxDown()).as("RegionServers down at once (%s)", m.maxDownAt()).isLessThanOrEqualTo(1);
      assertThat(m.pvcsUnchanged()).as("PVC UIDs unchanged").isTrue();
      for (int i = 0; i < REPLICAS; i++) {
        Pod p = client.pods().inNamespace(cluster.ns).withName(Cluster.pod(i)).get();
        assertThat(p.getMetadata().getAnnotations()).as("the upgrade's annotation on %s", Cluster.pod(i)).containsEntry("team", "ads");
        // restarted once for the spec change, once more at most for the template (a pod the roll restarted before the upgrade)
        assertThat(m.uids().get(i)).as("pod UIDs of ordinal %d", i).hasSizeBetween(2, 3);
        long deletesAfter = watch.deletionsBetween(upgraded.toEpochMilli(), Instant.now().toEpochMilli()).stream()
            .filter(o -> o == Cluster.ordinalOf(p.getMetadata().getName())).count();
        assertThat(deletesAfter).as("deletes of %s after the upgrade", Cluster.pod(i)).isLessThanOrEqualTo(1);
      }
      assertThat(m.during().fail()).as("failed reads during the roll: %s", m.during().errors()).isZero();
      summary.add(String.format("helm upgrade mid-roll: done in %d s, at most %d down, pods restarted %s, failed reads %d",
          Duration.between(m.start(), m.end()).toSeconds(), m.maxDown(), sizes(m.uids()), m.during().fail()));
    });
  }

  @Test
  @Order(8)
  @Tag("fault")
  void theHMasterDeletedMidRollHoldsTheRollUntilItIsBack() {
    step("8. HMaster pod deleted mid-roll (writerThreads 6 -> 7): the roll waits for the new master and goes on", () -> {
      RollObserver roll = observeRoll("writerThreads 6 -> 7, HMaster pod deleted while the first pod drains");
      cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(7)));
      RolloutStatus mid = roll.awaitRollout("a pod in flight", ro -> ro.getInFlight() != null && !ro.getInFlight().isEmpty());
      assertThat(mid).as("a pod in flight (the roll finished first)").isNotNull();
      Pod master = client.pods().inNamespace(cluster.ns).withName(MASTER_POD).get();
      Instant killed = Instant.now();
      client.pods().inNamespace(cluster.ns).withName(MASTER_POD).delete();
      PodRoll f = mid.getInFlight().get(0);
      report.line("- deleted `%s` (uid %s) at %s while %s was at step %s", MASTER_POD, master.getMetadata().getUid(), killed, f.getPod(),
          f.getStep());
      RollMeasurement m = record(roll.awaitDone());
      Pod after = client.pods().inNamespace(cluster.ns).withName(MASTER_POD).get();
      Instant masterReady = readySince(after);
      report.line("- new HMaster pod uid %s, Ready since %s (%s s after the delete)", after.getMetadata().getUid(), masterReady,
          masterReady == null ? "?" : Duration.between(killed, masterReady).toSeconds());
      assertThat(after.getMetadata().getUid()).as("the HMaster pod was replaced").isNotEqualTo(master.getMetadata().getUid());
      // a region caught mid-move when the master went away stays closed until the new master
      // finishes its move: reads of it may fail, counted here, not asserted zero
      assertOneAtATimeWithTheCacheKept(m, false);
      summary.add(String.format("HMaster deleted mid-roll: roll done in %d s, at most %d RegionServer down, reads failed: %d of %d",
          Duration.between(m.start(), m.end()).toSeconds(), m.maxDown(), m.during().fail(), m.during().ok() + m.during().fail()));
    });
  }

  @Test
  @Order(9)
  @Tag("fault")
  void aPolicyMadeInvalidMidRollHoldsTheRollAndItResumesWhenValid() {
    step("9. the policy made invalid mid-roll (writerThreads 7 -> 8, then bucketCache 64Gi): the roll holds with HBase's balancer on;"
        + " made valid again, it finishes", () -> {
      RollObserver roll = observeRoll("writerThreads 7 -> 8, invalid mid-roll, then valid again");
      cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(8)));
      RolloutStatus mid = roll.awaitRollout("a pod in flight", ro -> ro.getInFlight() != null && !ro.getInFlight().isEmpty());
      assertThat(mid).as("a pod in flight (the roll finished first)").isNotNull();
      Boolean balancerRolling = cluster.balancerOn();
      Instant t0 = Instant.now();
      cluster.editPolicy(x -> x.getSpec().getMemory().setBucketCache(new Quantity("64Gi")));
      BlockCachePolicy held = roll.awaitRollout("held: phase Blocked, Degraded=True reason PolicyInvalid", ro -> {
        BlockCachePolicy p = cluster.policy();
        Condition d = condition(p, "Degraded");
        return ro.getPhase() == RolloutStatus.Phase.Blocked && d != null && "True".equals(d.getStatus()) && "PolicyInvalid".equals(d.getReason());
      }) == null ? null : cluster.policy();
      assertThat(held).as("the roll held (it finished first)").isNotNull();
      Boolean balancerHeld = cluster.balancerOn();
      List<Event> heldEvents = cluster.policyEvents(Set.of("RollHeld"), l -> !l.isEmpty());
      report.line("- `%s` at step %s when memory.bucketCache went to 64Gi; held after %d s: phase %s, in flight %s, message: %s",
          mid.getInFlight().get(0).getPod(), mid.getInFlight().get(0).getStep(), Duration.between(t0, Instant.now()).toSeconds(),
          held.getStatus().getRollout().getPhase(), held.getStatus().getRollout().getInFlight().stream().map(PodRoll::getPod).toList(),
          held.getStatus().getRollout().getMessage());
      report.line("- HBase's balancer (the master's status page): %s while rolling, %s while held; events RollHeld: %s",
          balancerRolling, balancerHeld, heldEvents.isEmpty() ? "none" : heldEvents.get(heldEvents.size() - 1).getMessage());
      assertThat(heldEvents).as("a RollHeld event").isNotEmpty();
      assertThat(balancerRolling).as("the balancer is off while the roll drains").isFalse();
      assertThat(balancerHeld).as("the balancer is on while the roll is held").isTrue();
      cluster.editPolicy(x -> x.getSpec().getMemory().setBucketCache(new Quantity("640Mi")));
      RollMeasurement m = record(roll.awaitDone());
      assertOneAtATimeWithTheCacheKept(m);
      assertTheClustersReadsStayedCached(m);
      summary.add(String.format("invalid mid-roll: held (balancer on, RollHeld), resumed when valid; roll %d s in all, failed reads %d",
          Duration.between(m.start(), m.end()).toSeconds(), m.during().fail()));
    });
  }

  @Test
  @Order(12)
  @Tag("fault")
  void aRegionServerKilledWhileAnotherDrainsHoldsTheRollUntilItIsBack() {
    step("10. a RegionServer killed with SIGKILL while another pod drains (writerThreads 11 -> 9): no pod is deleted while it is"
        + " down, the roll finishes, every pod restarted once by it", () -> {
      RollObserver roll = observeRoll("writerThreads 11 -> 9, a RegionServer killed (SIGKILL) while another drains");
      cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(9)));
      RolloutStatus mid = roll.awaitRollout("a pod draining",
          ro -> ro.getInFlight() != null && ro.getInFlight().stream().anyMatch(f -> f.getStep() == PodRoll.Step.Draining));
      assertThat(mid).as("a pod draining (the roll finished first)").isNotNull();
      String draining = mid.getInFlight().get(0).getPod();
      String victim = java.util.stream.IntStream.range(0, REPLICAS).mapToObj(Cluster::pod).filter(p -> !p.equals(draining))
          .reduce((a, b) -> b).orElseThrow();
      Pod victimPod = client.pods().inNamespace(cluster.ns).withName(victim).get();
      String victimUid = victimPod.getMetadata().getUid();
      int restartsBefore = containerRestarts(victimPod);
      Instant killed = Instant.now();
      // the JVM is the container's PID 1, which ignores a SIGKILL sent from inside the container: the kill comes from the
      // kind node, through the container runtime's view of the process
      Shell.Result kill = onNode(regionServerPid(victim) + " && kill -9 $pid");
      assertThat(kill.code()).as("kill -9 of %s's RegionServer on the node: %s", victim, kill.output()).isZero();
      report.line("- `%s` at step %s; killed the RegionServer in `%s` (SIGKILL) at %s", draining, mid.getInFlight().get(0).getStep(),
          victim, killed);
      // the kubelet restarts the killed container in the same pod; the roll deletes that pod later
      // (its turn may come after the kill), so the restart is read from the pod the kill hit
      await(victim + " restarted by the kubelet or replaced").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
          .until(() -> {
            Pod p = client.pods().inNamespace(cluster.ns).withName(victim).get();
            return p == null || !victimUid.equals(p.getMetadata().getUid()) || containerRestarts(p) > restartsBefore;
          });
      Pod afterKill = client.pods().inNamespace(cluster.ns).withName(victim).get();
      assertThat(afterKill == null ? null : afterKill.getMetadata().getUid())
          .as("%s is the pod the kill hit (not deleted before the kubelet restarted its container)", victim).isEqualTo(victimUid);
      int restartsAfterKill = containerRestarts(afterKill);
      RollMeasurement m = record(roll.awaitDone());
      // the victim's outage from the kill: no deletion started in it
      List<long[]> outages = watch.downtimes().getOrDefault(Cluster.ordinalOf(victim), List.of()).stream()
          .filter(o -> o[1] >= killed.toEpochMilli()).toList();
      assertThat(outages).as("%s went down after the kill and came back", victim).isNotEmpty();
      long[] outage = outages.get(0);
      // (a delete decided in the moment before the operator saw it down is not the gate's fault: 3 s)
      List<Integer> deletedMeanwhile = watch.deletionsBetween(outage[0] + 3000, outage[1]);
      report.line("- `%s` down from %s to %s (%d s); pods deleted by the roll meanwhile: %s; its container restarts %d -> %d",
          victim, Instant.ofEpochMilli(outage[0]), Instant.ofEpochMilli(outage[1]), (outage[1] - outage[0]) / 1000, deletedMeanwhile,
          restartsBefore, restartsAfterKill);
      assertThat(deletedMeanwhile).as("pods deleted while %s was down", victim).isEmpty();
      assertThat(restartsAfterKill).as("%s's container restarted once (the kill)", victim).isEqualTo(restartsBefore + 1);
      for (int i = 0; i < REPLICAS; i++) {
        assertThat(m.uids().get(i)).as("pod UIDs of ordinal %d: deleted once by the roll", i).hasSize(2);
      }
      assertThat(m.maxDown()).as("RegionServers down at once (%s): the roll's one and the killed one at most", m.maxDownAt())
          .isLessThanOrEqualTo(2);
      assertThat(m.pvcsUnchanged()).as("PVC UIDs unchanged").isTrue();
      // the killed server's regions are closed until the master has reassigned them: reads of
      // them wait or fail meanwhile, counted here, not asserted zero
      summary.add(String.format("RegionServer SIGKILLed while another drained: no delete while it was down (%d s), roll %d s,"
              + " at most %d down, failed reads %d of %d", (outage[1] - outage[0]) / 1000, Duration.between(m.start(), m.end()).toSeconds(),
          m.maxDown(), m.during().fail(), m.during().ok() + m.during().fail()));
    });
  }

  /**
   * A client of its own that does not retry: fabric8 retries a 429 by itself (10 times, after the
   * Retry-After of 10 s the Eviction API sends), so evict() would block until the budget allows it
   * and look allowed at once.
   */
  KubernetesClient withoutRetries() {
    return new KubernetesClientBuilder()
        .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(client.getConfiguration()).withRequestRetryBackoffLimit(0).build())
        .build();
  }

  /** Waits until the policy's PodDisruptionBudget allows {@code n} disruptions; returns its name. */
  String awaitDisruptionsAllowed(int n, String when, Duration atMost, Duration every) {
    String pdb = Cluster.POLICY + "-regionservers";
    await("PodDisruptionBudget " + pdb + " allows " + n + " disruptions " + when).atMost(atMost).pollInterval(every).until(() -> {
      var b = client.policy().v1().podDisruptionBudget().inNamespace(cluster.ns).withName(pdb).get();
      return b != null && b.getStatus() != null && Integer.valueOf(n).equals(b.getStatus().getDisruptionsAllowed());
    });
    return pdb;
  }

  /** A shell script run on the kind node (as root, in the node's namespaces). */
  Shell.Result onNode(String script) {
    return Shell.run(settings.repo(), 60, settings.env(),
        List.of("docker", "exec", settings.kindCluster() + "-control-plane", "sh", "-c", script));
  }

  /** Shell for the kind node: sets $pid to the PID of the pod's RegionServer JVM as the node sees it, or fails. */
  static String regionServerPid(String pod) {
    return "c=$(crictl ps -q --name regionserver --label io.kubernetes.pod.name=" + pod + ") && [ -n \"$c\" ]"
        + " && pid=$(crictl inspect --output go-template --template '{{.info.pid}}' $c 2>/dev/null"
        + " || crictl inspect $c | grep -m1 '\"pid\":' | tr -dc 0-9) && [ -n \"$pid\" ]";
  }

  @Test
  @Order(10)
  @Tag("fault")
  void aRegionServerNotReadyButServingIsDrainedAndAnEvictionMidRollIsRefused() {
    step("9b. a RegionServer not Ready but still serving regions when a roll starts (writerThreads 8 -> 10): the roll drains it,"
        + " never just deletes it; mid-roll, the eviction of another RegionServer is refused", () -> {
      String victim = Cluster.pod(1);
      // The readiness probe curls 127.0.0.1:16030 inside the pod: packets on the pod's loopback to the info port are
      // rejected in its network namespace, so the probe fails while HBase serves on (RPC, and /jmx from outside the pod:
      // the operator, the API server's proxy). An overloaded server or a slow probe looks the same to Kubernetes.
      Shell.Result block = onNode(regionServerPid(victim) + " && nsenter -t $pid -n sh -c"
          + " 'iptables -I INPUT -i lo -p tcp --dport 16030 -j REJECT --reject-with tcp-reset"
          + " || iptables -I INPUT -i lo -p tcp --dport 16030 -j DROP'");
      assertThat(block.code()).as("iptables in %s's network namespace: %s", victim, block.output()).isZero();
      Instant blocked = Instant.now();
      await(victim + " not Ready").atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofSeconds(1))
          .until(() -> !PodWatch.ready(client.pods().inNamespace(cluster.ns).withName(victim).get()));
      String uid = client.pods().inNamespace(cluster.ns).withName(victim).get().getMetadata().getUid();
      Jmx serving = Jmx.read(client, cluster.ns, victim);
      report.line("- `%s`: readiness probe blocked at %s (loopback to 16030 rejected in the pod's network namespace); not Ready after %d s,"
          + " still serving %d regions as `%s`", victim, blocked, Duration.between(blocked, Instant.now()).toSeconds(),
          serving.regionCount(), serving.serverName());
      assertThat(serving.regionCount()).as("regions %s serves while not Ready", victim).isPositive();

      RollObserver roll = observeRoll("writerThreads 8 -> 10, " + victim + " not Ready but serving");
      assertThat(PodWatch.ready(client.pods().inNamespace(cluster.ns).withName(victim).get())).as("%s still not Ready", victim).isFalse();
      cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(10)));
      // mid-roll: another RegionServer deleted by the roll and not Ready yet; a node drain now must not take a second one
      RolloutStatus mid = roll.awaitRollout("a RegionServer other than " + victim + " restarted by the roll, not Ready yet",
          ro -> ro.getInFlight() != null && ro.getInFlight().stream()
              .anyMatch(f -> !f.getPod().equals(victim) && f.getStep() == PodRoll.Step.WaitingReady));
      assertThat(mid).as("another pod waiting for Ready in the roll (the roll finished first)").isNotNull();
      String rolling = mid.getInFlight().stream().filter(f -> !f.getPod().equals(victim)).findFirst().orElseThrow().getPod();
      awaitDisruptionsAllowed(0, "while " + rolling + " is down", Duration.ofSeconds(10), Duration.ofMillis(200));
      String other = java.util.stream.IntStream.range(0, REPLICAS).mapToObj(Cluster::pod)
          .filter(p -> !p.equals(rolling) && PodWatch.ready(client.pods().inNamespace(cluster.ns).withName(p).get()))
          .findFirst().orElseThrow();
      boolean evicted;
      // no retry of the 429 (fabric8 would retry it itself for 100 s: see step 11)
      try (KubernetesClient once = withoutRetries()) {
        evicted = once.pods().inNamespace(cluster.ns).withName(other).evict();
      }
      boolean rollingReadyAfter = PodWatch.ready(client.pods().inNamespace(cluster.ns).withName(rolling).get());
      report.line("- mid-roll, `%s` deleted by the roll and not Ready (step WaitingReady): Eviction API on `%s` -> %s (%s Ready right after: %s)",
          rolling, other, evicted ? "evicted" : "refused (429)", rolling, rollingReadyAfter);
      assertThat(evicted).as("the eviction of %s while the roll's %s is down", other, rolling).isFalse();

      RollMeasurement m = record(roll.awaitDone());
      report.line("- `%s` in the roll: reason %s, drained from %s, steps %s, delete -> regions home %s s; new uid %s (Ready: %s)", victim,
          roll.reason(victim), roll.drainedFrom(victim), m.pods().get(victim).steps(), m.homeSeconds().get(victim),
          client.pods().inNamespace(cluster.ns).withName(victim).get().getMetadata().getUid(),
          PodWatch.ready(client.pods().inNamespace(cluster.ns).withName(victim).get()));
      assertThat(roll.seenInFlight(victim)).as("%s seen in the roll", victim).isTrue();
      assertThat(roll.reason(victim)).as("why the roll took %s", victim).isEqualTo("Unready");
      // a pod the roll takes without a drain has no oldServer: its regions would go down with it
      assertThat(roll.drainedFrom(victim)).as("the RegionServer %s was drained from (PodRoll.oldServer)", victim).isNotNull()
          .isEqualToIgnoringCase(serving.serverName());
      assertThat(m.homeSeconds()).as("%s's regions brought back after its restart", victim).containsKey(victim);
      assertThat(m.uids().get(Cluster.ordinalOf(victim))).as("%s's pod UIDs", victim).contains(uid).hasSize(2);
      // the unready pod goes first, out of the usual order: whether a restarted pod's window right after its restart
      // holds reads depends on where the regions are (seen on CI: one server held all six, restarted first)
      assertOneAtATimeWithTheCacheKept(m, true, false);
      summary.add(String.format("RegionServer not Ready but serving %d regions: drained by the roll (reason %s, from %s), home in %s s;"
              + " mid-roll eviction of %s %s; roll %d s, at most %d down, failed reads %d", serving.regionCount(), roll.reason(victim),
          roll.drainedFrom(victim), m.homeSeconds().get(victim), other, evicted ? "ALLOWED" : "refused", m.seconds(), m.maxDown(),
          m.during().fail()));
    });
  }

  @Test
  @Order(11)
  @Tag("fault")
  void aDrainWithNowhereToGoTimesOutAndGivesTheClusterBack() {
    step("9c. a drain with nowhere to go (an administrator decommissioned the other RegionServers; writerThreads 10 -> 11,"
        + " podReadyTimeout 30s): Blocked with DrainTimeout, HBase's balancer back on, no pod restarted, the administrator's marks"
        + " kept; once they are cleared, the roll finishes", () -> {
      // the pod the roll takes first (Roller.order()): not the hbase:meta host, the fewest regions, the lowest ordinal
      // (the RegionServers' /jmx refreshes every 5-10 s: the same answer twice, 12 s apart, after the last roll's moves)
      List<Candidate> cs = await("the same region counts twice, 12 s apart").atMost(Duration.ofMinutes(2))
          .pollInterval(Duration.ofSeconds(12)).ignoreExceptions().until(new java.util.concurrent.Callable<List<Candidate>>() {
            List<Candidate> last;

            @Override
            public List<Candidate> call() throws Exception {
              List<Candidate> now = new ArrayList<>();
              for (int i = 0; i < REPLICAS; i++) {
                String pod = Cluster.pod(i);
                now.add(new Candidate(pod, Jmx.hostsMeta(client, cluster.ns, pod), Jmx.read(client, cluster.ns, pod).regionCount(), i));
              }
              List<Candidate> before = last;
              last = now;
              return now.equals(before) ? now : null;
            }
          }, java.util.Objects::nonNull);
      cs = new ArrayList<>(cs);
      cs.sort(java.util.Comparator.comparing(Candidate::meta).thenComparingLong(Candidate::regions).thenComparingInt(Candidate::ordinal));
      String first = cs.get(0).pod();
      assertThat(cs.get(0).regions()).as("regions of %s, which the roll takes first (the scenario needs a drain): %s", first, cs)
          .isPositive();
      List<String> others = cs.stream().skip(1).map(Candidate::pod).toList();
      List<String> hosts = others.stream().map(p -> p + ".").toList(); // host names: pod.service.namespace...
      Workload.Run marked = admin("decommission", hosts);
      report.line("- regions per pod: %s; the roll takes `%s` first; an administrator decommissioned the others: %s", cs, first, said(marked));
      String oldRevision = cluster.revision();
      Map<Integer, String> uids = cluster.podUids();
      watch.reset();
      Instant t0 = Instant.now();
      try {
        cluster.editPolicy(x -> {
          x.getSpec().setTuning(tuning(x).setWriterThreads(11));
          x.getSpec().getRollout().setPodReadyTimeout("30s");
        });
        AtomicReference<BlockCachePolicy> blocked = new AtomicReference<>();
        await("phase Blocked, Degraded=True reason DrainTimeout").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
            .until(() -> {
              BlockCachePolicy p = cluster.policy();
              blocked.set(p);
              Condition d = condition(p, "Degraded");
              return p.getStatus().getRollout() != null && p.getStatus().getRollout().getPhase() == RolloutStatus.Phase.Blocked
                  && d != null && "True".equals(d.getStatus()) && "DrainTimeout".equals(d.getReason());
            });
        long toBlock = Duration.between(t0, Instant.now()).toSeconds();
        RolloutStatus ro = blocked.get().getStatus().getRollout();
        Boolean balancer = cluster.balancerOn();
        long regionsNow = Jmx.read(client, cluster.ns, first).regionCount();
        String marks = said(admin("decommissioned", List.of()));
        List<Event> ev = cluster.policyEvents(Set.of("RollBlocked"), l -> l.stream().anyMatch(e -> e.getMessage().contains("could not begin")));
        report.line("- Blocked after %d s: %s; retryAt %s", toBlock, ro.getMessage(), ro.getRetryAt());
        report.line("- while Blocked: HBase's balancer on: %s; `%s` serves %d regions; %s; pods restarted: %s; event RollBlocked: %s", balancer,
            first, regionsNow, marks, !cluster.podUids().equals(uids), ev.isEmpty() ? "none" : ev.get(ev.size() - 1).getMessage());
        assertThat(ro.getMessage()).as("the blocked roll's message").contains(first + "'s drain could not begin within 30s");
        assertThat(ro.getRetryAt()).as("status.rollout.retryAt").isNotNull();
        assertThat(ev).as("a RollBlocked event saying the drain could not begin")
            .anyMatch(e -> e.getMessage().contains(first + "'s drain could not begin"));
        assertThat(balancer).as("HBase's balancer while Blocked (off while the roll drained)").isTrue();
        assertThat(regionsNow).as("regions %s serves while Blocked", first).isEqualTo(cs.get(0).regions());
        for (String h : hosts) {
          assertThat(marks).as("the administrator's mark on %s", h).contains(h);
        }
        assertThat(marks).as("a mark on %s (the roll's own, cleared when it gave up)", first).doesNotContain(first + ".");
        // the master's /jmx shows the same marks: the check after every fault step reads them there
        String jmxMarks = await("the marks in the master's /jmx").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(2))
            .until(cluster::drainingRegionServers, m -> m != null && hosts.stream().allMatch(m::contains));
        assertThat(jmxMarks).as("tag.drainingRegionServers while Blocked").doesNotContain(first + ".");
        assertThat(cluster.podUids()).as("pods restarted while Blocked").isEqualTo(uids);
        assertThat(watch.maxDown()).as("RegionServers down while Blocked").isZero();
      } catch (Throwable t) {
        try {
          admin("recommission", hosts); // the cluster back as it was for whatever runs next
        } catch (Throwable cleanup) {
          t.addSuppressed(cleanup);
        }
        throw t;
      }
      report.line("- the administrator cleared the marks: %s", said(admin("recommission", hosts)));
      Instant t1 = Instant.now();
      cluster.editPolicy(x -> x.getSpec().getRollout().setPodReadyTimeout("10m"));
      cluster.awaitRollDone("after the marks were cleared", oldRevision, ROLL_TIMEOUT);
      Map<Integer, Set<String>> seen = watch.uids();
      Workload.Stats s = Workload.stats(workload.log(READER), t0, Instant.now());
      report.line("- podReadyTimeout back to 10m: roll done %d s later; pod UIDs per ordinal since the change %s; max down at once %d;"
          + " reader from the change to the end: %s", Duration.between(t1, Instant.now()).toSeconds(), sizes(seen), watch.maxDown(), s.summary());
      for (int i = 0; i < REPLICAS; i++) {
        assertThat(seen.get(i)).as("pod UIDs of ordinal %d: restarted once, after the marks were cleared", i).hasSize(2);
      }
      assertThat(watch.maxDown()).as("RegionServers down at once").isLessThanOrEqualTo(1);
      assertThat(s.fail()).as("failed reads: %s", s.errors()).isZero();
      summary.add(String.format("drain with nowhere to go: Blocked (DrainTimeout) after the 30 s timeout, balancer back on, no restart,"
          + " the administrator's marks kept; roll finished once they were cleared; failed reads %d", s.fail()));
    });
  }

  /** What the workload's admin command printed (its result lines, not the HBase client's log). */
  static String said(Workload.Run r) {
    return r.log().lines().filter(l -> l.matches("^(decommission|recommission|decommissioned now).*")).reduce((a, b) -> a + "; " + b)
        .orElse(r.log().strip());
  }

  /** A RegionServer pod as the roll orders them. */
  record Candidate(String pod, boolean meta, long regions, int ordinal) {}

  /** The workload client as an HBase administrator: decommission / recommission HOST_PREFIX..., or decommissioned (the marks). */
  Workload.Run admin(String command, List<String> hostPrefixes) {
    List<String> args = new ArrayList<>(List.of(command));
    args.addAll(hostPrefixes);
    Workload.Run r = workload.run("e2e-admin", Duration.ofMinutes(3), args.toArray(String[]::new));
    assertThat(r.phase()).as("workload %s: %s", args, r.log()).isEqualTo("Succeeded");
    return r;
  }

  static int containerRestarts(Pod pod) {
    return pod.getStatus().getContainerStatuses().stream()
        .filter(c -> "regionserver".equals(c.getName())).mapToInt(c -> c.getRestartCount()).sum();
  }

  @Test
  @Order(13)
  @Tag("fault")
  void aNodeDrainEvictsASecondRegionServerOnlyOnceTheFirstIsBack() {
    // after the rolls that measure reads on every server: an eviction is no drain, HBase reassigns
    // the evicted server's regions and it comes back with none of them
    step("11. a node drain (Eviction API): a second RegionServer is evicted only once the first is back and Ready", () -> {
      String pdb = awaitDisruptionsAllowed(1, "before the drain", Duration.ofMinutes(2), Duration.ofSeconds(1));
      Map<Integer, String> uids = cluster.podUids();
      watch.reset();
      // fabric8 retries a 429 itself (10 times, after the Retry-After of 10 s the Eviction API
      // sends): evict() would block until the budget allows it and look allowed at once. Each
      // refusal is counted here with a client that does not retry.
      try (KubernetesClient once = withoutRetries()) {
        Instant t0 = Instant.now();
        assertThat(once.pods().inNamespace(cluster.ns).withName(Cluster.pod(2)).evict())
            .as("the first eviction (the budget allows one)").isTrue();
        // what `kubectl drain` does: ask again every few hundred ms until the budget allows it
        int refused = 0;
        Instant allowedAt = null;
        Instant deadline = t0.plus(Duration.ofMinutes(4));
        while (allowedAt == null && Instant.now().isBefore(deadline)) {
          if (once.pods().inNamespace(cluster.ns).withName(Cluster.pod(1)).evict()) {
            allowedAt = Instant.now();
          } else {
            refused++;
            Thread.sleep(250);
          }
        }
        assertThat(allowedAt).as("the second eviction allowed within 4 min (once the first server is back)").isNotNull();
        Pod back = client.pods().inNamespace(cluster.ns).withName(Cluster.pod(2)).get();
        Instant backReady = readySince(back);
        report.line("- Eviction API on `%s` at %s -> evicted; then on `%s` every 250 ms: refused %d times (429), allowed at %s;"
            + " `%s` (new uid %s) Ready since %s (PodDisruptionBudget `%s`, maxUnavailable 1)", Cluster.pod(2), t0, Cluster.pod(1),
            refused, allowedAt, Cluster.pod(2), back.getMetadata().getUid(), backReady, pdb);
        assertThat(refused).as("evictions of a second RegionServer refused while the first was down").isPositive();
        assertThat(back.getMetadata().getUid()).as("%s is a new instance", Cluster.pod(2)).isNotEqualTo(uids.get(2));
        assertThat(backReady).as("%s Ready (API time, whole seconds) no later than the second eviction", Cluster.pod(2)).isNotNull()
            .isBeforeOrEqualTo(allowedAt);
        await("both evicted RegionServers back and the policy Ready").atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofSeconds(2))
            .until(() -> {
              Map<Integer, String> now = cluster.podUids();
              return !Objects.equals(now.get(1), uids.get(1)) && !Objects.equals(now.get(2), uids.get(2))
                  && client.pods().inNamespace(cluster.ns).withLabel("app.kubernetes.io/component", "regionserver").list().getItems()
                      .stream().allMatch(PodWatch::ready)
                  && isTrue(cluster.policy(), "Ready");
            });
        report.line("- RegionServers not Ready at the same time, at most: %d (%s)", watch.maxDown(), watch.maxDownAt());
        assertThat(watch.maxDown()).as("RegionServers down at once during the drain").isLessThanOrEqualTo(1);
        Workload.Stats s = Workload.stats(workload.log(READER), t0, Instant.now());
        report.line("- both back after %d s (HBase reassigned their regions: an eviction is no drain); reader meanwhile: %s",
            Duration.between(t0, Instant.now()).toSeconds(), s.summary());
        summary.add(String.format("node drain: 2nd eviction refused %d times until the 1st server was Ready again; at most %d down;"
            + " reads failed meanwhile: %d", refused, watch.maxDown(), s.fail()));
      }
    });
  }

  @Test
  @Order(14)
  @Tag("fault")
  void aSecondPolicyOnTheSameStatefulSetIsRefusedAndTouchesNothing() {
    step("12. a second policy on the same StatefulSet: Valid=False reason Conflict, nothing touched", () -> {
      StatefulSet sts = cluster.regionServers();
      Map<Integer, String> uids = cluster.podUids();
      BlockCachePolicy second = Serialization.clone(cluster.policy());
      second.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("second").withNamespace(cluster.ns).build());
      second.setStatus(null);
      second.getSpec().getTuning().setWriterThreads(3);
      client.resource(second).create();
      try {
        AtomicReference<Condition> valid = new AtomicReference<>();
        await("policy second: Valid=False").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(1)).until(() -> {
          BlockCachePolicy p = client.resources(BlockCachePolicy.class).inNamespace(cluster.ns).withName("second").get();
          Condition v = p == null || p.getStatus() == null ? null : condition(p, "Valid");
          valid.set(v);
          return v != null && "False".equals(v.getStatus());
        });
        report.line("- policy `second` (same targetRef, writerThreads 3): Valid=False reason %s: %s", valid.get().getReason(),
            valid.get().getMessage());
        assertThat(valid.get().getReason()).isEqualTo("Conflict");
        assertThat(valid.get().getMessage()).contains(Cluster.POLICY);
        nothingChangesFor("the second policy leaves the StatefulSet and the pods alone", Duration.ofSeconds(20), () ->
            !Objects.equals(cluster.regionServers().getMetadata().getGeneration(), sts.getMetadata().getGeneration()) ? "StatefulSet spec changed"
            : !cluster.podUids().equals(uids) ? "pods restarted"
            : client.configMaps().inNamespace(cluster.ns).withName("second-rs-site").get() != null ? "a ConfigMap second-rs-site"
            : client.policy().v1().podDisruptionBudget().inNamespace(cluster.ns).withName("second-regionservers").get() != null
                ? "a PodDisruptionBudget second-regionservers" : null);
        assertThat(isTrue(cluster.policy(), "Ready")).as("the first policy stays Ready").isTrue();
        summary.add("second policy on the StatefulSet: Valid=False/Conflict naming " + Cluster.POLICY + ", nothing touched");
      } finally {
        client.resources(BlockCachePolicy.class).inNamespace(cluster.ns).withName("second").delete();
      }
    });
  }

  /** When the pod's Ready condition last turned True (the API server's time, whole seconds), or null. */
  private static Instant readySince(Pod p) {
    return p.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))
        .map(c -> Instant.parse(c.getLastTransitionTime())).findFirst().orElse(null);
  }

  @Test
  @Order(15)
  @Tag("fault")
  void aPolicyThatCannotBePlannedChangesNothing() {
    step("13. a policy that cannot be planned changes nothing", () -> {
      StatefulSet sts = cluster.regionServers();
      String cmRv = cluster.derivedConfigMap().getMetadata().getResourceVersion();
      Map<Integer, String> uids = cluster.podUids();
      watch.reset();
      Instant t0 = Instant.now();
      cluster.editPolicy(x -> x.getSpec().getMemory().setBucketCache(new Quantity("64Gi")));
      AtomicReference<Condition> valid = new AtomicReference<>();
      await("Valid=False").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1)).until(() -> {
        BlockCachePolicy p = cluster.policy();
        Condition v = condition(p, "Valid");
        valid.set(v);
        return v != null && "False".equals(v.getStatus()) && Objects.equals(v.getObservedGeneration(), p.getMetadata().getGeneration());
      });
      report.line("- memory.bucketCache 640Mi -> 64Gi (storage.size 2Gi): Valid=False after %d s, reason %s: %s",
          Duration.between(t0, Instant.now()).toSeconds(), valid.get().getReason(), valid.get().getMessage());
      assertThat(valid.get().getReason()).isEqualTo("PlanRefused");
      nothingChangesFor("the refused policy leaves the StatefulSet, the derived ConfigMap and the pods alone", NOTHING_CHANGES, () ->
          !cluster.regionServers().getMetadata().getResourceVersion().equals(sts.getMetadata().getResourceVersion()) ? "StatefulSet changed"
          : !cluster.derivedConfigMap().getMetadata().getResourceVersion().equals(cmRv) ? "derived ConfigMap changed"
          : !cluster.podUids().equals(uids) ? "pods restarted"
          : watch.maxDown() > 0 ? "a RegionServer went down" : null);
      StatefulSet after = cluster.regionServers();
      String cmRvAfter = cluster.derivedConfigMap().getMetadata().getResourceVersion();
      report.line("- 30 s later: StatefulSet resourceVersion %s -> %s, generation %d -> %d; derived ConfigMap resourceVersion %s -> %s; pods restarted: %s",
          sts.getMetadata().getResourceVersion(), after.getMetadata().getResourceVersion(), sts.getMetadata().getGeneration(),
          after.getMetadata().getGeneration(), cmRv, cmRvAfter, !cluster.podUids().equals(uids));
      assertThat(after.getMetadata().getResourceVersion()).as("StatefulSet resourceVersion").isEqualTo(sts.getMetadata().getResourceVersion());
      assertThat(cmRvAfter).as("derived ConfigMap resourceVersion").isEqualTo(cmRv);
      assertThat(cluster.podUids()).as("pod UIDs").isEqualTo(uids);
      assertThat(watch.maxDown()).as("RegionServers down while refused").isZero();

      // back to the valid spec: same revision, so nothing rolls
      Instant t1 = Instant.now();
      cluster.editPolicy(x -> x.getSpec().getMemory().setBucketCache(new Quantity("640Mi")));
      await("Valid=True, Ready=True again").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1)).until(() -> {
        BlockCachePolicy p = cluster.policy();
        return isTrue(p, "Valid") && isTrue(p, "Ready") && Objects.equals(condition(p, "Valid").getObservedGeneration(), p.getMetadata().getGeneration());
      });
      nothingChangesFor("no pod restarts after the revert", NO_ROLL_AFTER_REVERT, () -> cluster.podUids().equals(uids) ? null : "pods restarted");
      report.line("- reverted to 640Mi: Valid=True, Ready=True after %d s; no pod restarted (%s)", Duration.between(t1, Instant.now()).toSeconds(),
          cluster.podUids().equals(uids));
      assertThat(cluster.podUids()).as("pod UIDs after the revert").isEqualTo(uids);
      summary.add("refused policy: Valid=False/PlanRefused, StatefulSet resourceVersion and pods unchanged, revert rolled nothing");
    });
  }

  @Test
  @Order(16)
  @Tag("fault")
  void aPodThatCannotStartBlocksTheRollUntilTheSpecIsReverted() {
    step("14. a pod that cannot start blocks the roll (Degraded); reverting recovers", () -> {
      Map<Integer, String> uids = cluster.podUids();
      String oldRevision = cluster.revision();
      watch.reset();
      Instant t0 = Instant.now();
      cluster.editPolicy(x -> {
        x.getSpec().setJvm(new JvmSpec().setExtraOptions(List.of("-Xss1k")));
        x.getSpec().getRollout().setPodReadyTimeout("30s");
      });
      AtomicReference<BlockCachePolicy> blocked = new AtomicReference<>();
      await("phase Blocked, Degraded=True").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofSeconds(2)).until(() -> {
        BlockCachePolicy p = cluster.policy();
        blocked.set(p);
        return p.getStatus().getRollout() != null && p.getStatus().getRollout().getPhase() == RolloutStatus.Phase.Blocked
            && isTrue(p, "Degraded");
      });
      long toBlock = Duration.between(t0, Instant.now()).toSeconds();
      Condition degraded = condition(blocked.get(), "Degraded");
      report.line("- jvm.extraOptions [-Xss1k] (allowed, but below the JVM's minimum stack: the JVM does not start), podReadyTimeout 30s: Blocked after %d s; Degraded=True %s: %s", toBlock,
          degraded.getReason(), degraded.getMessage());
      List<Event> ev = cluster.policyEvents(Set.of("RollBlocked"), l -> !l.isEmpty());
      assertThat(ev).as("RollBlocked event").isNotEmpty();
      report.line("- event RollBlocked: %s", ev.get(ev.size() - 1).getMessage());
      nothingChangesFor("no pod but the broken one touched while Blocked", NOTHING_CHANGES, () ->
          restarted(watch.uids()) > 1 ? "another pod restarted" : watch.maxDown() > 1 ? "two RegionServers down at once" : null);
      Map<Integer, Set<String>> seen = watch.uids();
      long restarted = restarted(seen);
      report.line("- 30 s later: phase %s; pods restarted since the change: %d (UIDs per ordinal %s)", cluster.policy().getStatus().getRollout().getPhase(),
          restarted, sizes(seen));
      assertThat(restarted).as("only the broken pod was restarted").isEqualTo(1);
      assertThat(cluster.policy().getStatus().getRollout().getPhase()).isEqualTo(RolloutStatus.Phase.Blocked);
      assertThat(watch.maxDown()).as("RegionServers down at once").isLessThanOrEqualTo(1);

      Instant t1 = Instant.now();
      cluster.editPolicy(x -> {
        x.getSpec().setJvm(null);
        x.getSpec().getRollout().setPodReadyTimeout("10m");
      });
      BlockCachePolicy done = cluster.awaitRollDone("recovery", null, ROLL_TIMEOUT);
      long toRecover = Duration.between(t1, Instant.now()).toSeconds();
      assertThat(done.getStatus().getRollout().getRevision()).as("back to the old revision").isEqualTo(oldRevision);
      assertThat(isTrue(done, "Degraded")).as("Degraded").isFalse();
      Map<Integer, String> now = cluster.podUids();
      int changed = 0;
      for (int i = 0; i < REPLICAS; i++) {
        if (!now.get(i).equals(uids.get(i))) {
          changed++;
        }
      }
      report.line("- reverted: Idle, Ready=True, Degraded=False after %d s; pods with a new UID: %d (the broken one); max down at once %d",
          toRecover, changed, watch.maxDown());
      assertThat(changed).isEqualTo(1);
      assertThat(watch.maxDown()).isLessThanOrEqualTo(1);
      Workload.Stats s = Workload.stats(workload.log(READER), t0, Instant.now());
      report.line("- reader from the bad change to recovery: %s", s.summary());
      summary.add(String.format("bad JVM flag: Blocked + Degraded after %d s, 1 pod touched; revert recovered in %d s; reads failed: %d",
          toBlock, toRecover, s.fail()));
    });
  }

  @Test
  @Order(17)
  @Tag("fault")
  void anIdleClusterSurvivesACacheResetAndARestartWithAnEmptyCache() {
    step("15. idle cluster: a cache reset (prefetch off), then a RegionServer restarted with an empty cache, twice in a row", () -> {
      // nobody reads from here to the end of the step, and nothing prefetches (PersistentFile prefetches regions as they
      // open by default, which would fill the L2 again): after the reset every L2 stays empty
      Files.writeString(target.resolve("reader-steps-3-8.log"), workload.log(READER));
      workload.delete(READER);
      String oldRevision = cluster.revision();
      // this roll's events are the ones that are new (or counted up) from here: step 14's last PodRestarted can be
      // written in the same second as this edit, after the status said Idle
      Call<Set<String>> restartEvents = () -> cluster.policyEvents(Set.of("PodRestarted", "PodRestartedCold")).stream()
          .map(e -> e.getMetadata().getName() + "/" + e.getCount()).collect(java.util.stream.Collectors.toSet());
      AtomicReference<Set<String>> seenBefore = new AtomicReference<>(restartEvents.call());
      await("no new PodRestarted event for 5 s").during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofSeconds(1)).until(() -> seenBefore.getAndSet(restartEvents.call()).equals(seenBefore.get()));
      Set<String> eventsBefore = seenBefore.get();
      watch.reset();
      Instant t0 = Instant.now();
      cluster.editPolicy(x -> {
        x.getSpec().getMemory().setBucketCache(new Quantity("512Mi"));
        x.getSpec().setTuning(tuning(x).setPrefetchOnOpen(false));
      });
      BlockCachePolicy done = cluster.awaitRollDone("cache reset roll", oldRevision, ROLL_TIMEOUT);
      long rollSecs = Duration.between(t0, Instant.now()).toSeconds();
      java.util.function.Predicate<Event> isNew = e -> !eventsBefore.contains(e.getMetadata().getName() + "/" + e.getCount());
      List<Event> back = cluster.policyEvents(Set.of("PodRestarted", "PodRestartedCold"),
          l -> l.stream().filter(isNew).count() >= REPLICAS).stream().filter(isNew).toList();
      report.line("- memory.bucketCache 640Mi -> 512Mi and tuning.prefetchOnOpen false, no reads (CacheResetPending): roll done in %d s, max down at once %d; %s",
          rollSecs, watch.maxDown(), back.stream().map(e -> e.getReason() + " \"" + e.getMessage() + "\"").toList());
      assertThat(back).as("every pod back once").hasSize(REPLICAS);
      assertThat(back).as("the announced reset does not wait out the warm gate").allMatch(e -> "PodRestarted".equals(e.getReason()));
      assertThat(watch.maxDown()).isLessThanOrEqualTo(1);

      // HBase 2.6.4 writes an empty map at this shutdown and could not start on it again: twice in a
      // row (the second restart starts from the empty cache the first one left)
      long readySecs = 0;
      for (int round = 1; round <= 2; round++) {
        Pod before = client.pods().inNamespace(cluster.ns).withName(Cluster.pod(0)).get();
        Instant t1 = Instant.now();
        client.resource(before).delete();
        await(Cluster.pod(0) + " back and Ready").atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofSeconds(2)).until(() -> {
          Pod p = client.pods().inNamespace(cluster.ns).withName(Cluster.pod(0)).get();
          return p != null && !p.getMetadata().getUid().equals(before.getMetadata().getUid()) && PodWatch.ready(p);
        });
        readySecs = Math.max(readySecs, Duration.between(t1, Instant.now()).toSeconds());
        Pod after = client.pods().inNamespace(cluster.ns).withName(Cluster.pod(0)).get();
        int restarts = after.getStatus().getContainerStatuses().stream().mapToInt(c -> c.getRestartCount()).sum();
        String guard = after.getStatus().getInitContainerStatuses().stream().filter(c -> "cache-map-guard".equals(c.getName()))
            .map(c -> c.getState().getTerminated() == null ? null : c.getState().getTerminated().getMessage())
            .filter(Objects::nonNull).findFirst().orElse("(no termination message: the guard removed nothing)");
        int expected = round;
        await("EmptyCacheMapRemoved event for restart " + round).atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofSeconds(2))
            .until(() -> cluster.policyEvents(Set.of("EmptyCacheMapRemoved")).size() >= expected);
        Event removed = cluster.policyEvents(Set.of("EmptyCacheMapRemoved")).stream()
            .max(java.util.Comparator.comparing(e -> String.valueOf(e.getLastTimestamp()))).orElseThrow();
        report.line("- restart %d: `kubectl delete pod %s` with an empty L2: Ready again after %d s, container restarts %d;"
            + " cache-map-guard: %s", round, Cluster.pod(0), Duration.between(t1, Instant.now()).toSeconds(), restarts, guard);
        report.line("- event EmptyCacheMapRemoved: %s", removed.getMessage());
        assertThat(restarts).as("restart %d: the RegionServer started the first time (no crash loop)", round).isZero();
        assertThat(guard).contains("removed the empty BucketCache persistence map");
        assertThat(removed.getMessage()).startsWith(Cluster.pod(0));
      }
      assertThat(done.getStatus().getConditions()).noneMatch(c -> "Degraded".equals(c.getType()) && "True".equals(c.getStatus()));

      readerStart = workload.startReader(READER, Duration.ofMinutes(3), "read", TABLE, "" + ROWS, "2", "200", "0");
      summary.add(String.format("idle cache reset: roll %d s, no warm-gate wait; two restarts with an empty L2 in a row: Ready within %d s, 0 crashes (map removed by cache-map-guard each time)",
          rollSecs, readySecs));
    });
  }

  @Test
  @Order(18)
  @Tag("fault")
  void deletingThePolicyLeavesRegionServersAndPvcsInPlace() {
    step("16. deleting the policy leaves RegionServers and PVCs", () -> {
      // the sizing advice the run's reads gave (autoTune.window 3m): real RegionServers' counters and JVM GC time
      var advice = cluster.policy().getStatus().getRecommendation();
      report.line("- status.recommendation before the delete: %s", advice == null ? "none"
          : String.format("mode %s, bucketCache %s, differs %s, since %s: %s; evidence %s", advice.getMode(), advice.getBucketCache(),
              advice.getDiffers(), advice.getSince(), advice.getMessage(), advice.getEvidence()));
      assertThat(advice).as("status.recommendation after the run's reads").isNotNull();
      assertThat(advice.getEvidence()).as("its evidence").isNotNull();
      assertThat(advice.getEvidence().getDataReads()).as("data reads in its window").isGreaterThanOrEqualTo(1000);
      assertThat(advice.getEvidence().getGcTimeFraction()).as("GC share from the RegionServers' JvmMetrics").isNotNull();
      summary.add(String.format("sizing advice (3 min windows): %s %s (%s)", advice.getMode(),
          advice.getBucketCache() == null ? "" : advice.getBucketCache(), Boolean.TRUE.equals(advice.getDiffers()) ? "a change" : "as set"));
      Map<Integer, String> uids = cluster.podUids();
      Map<String, String> pvcs = cluster.pvcUids();
      String stsUid = cluster.regionServers().getMetadata().getUid();
      watch.reset();
      Instant t0 = Instant.now();
      cluster.policyResource().delete();
      await("policy gone").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(1)).until(() -> cluster.policyOrNull() == null);
      report.line("- policy deleted (finalizer done) in %d s", Duration.between(t0, Instant.now()).toSeconds());
      nothingChangesFor("the StatefulSet, pods, PVCs and derived ConfigMap stay", NOTHING_CHANGES, () -> {
        StatefulSet sts = cluster.regionServers();
        return sts == null || !sts.getMetadata().getUid().equals(stsUid) ? "StatefulSet replaced or gone"
            : !cluster.podUids().equals(uids) ? "pods restarted"
            : !cluster.pvcUids().equals(pvcs) ? "PVCs changed"
            : cluster.derivedConfigMap() == null ? "derived ConfigMap deleted"
            : watch.maxDown() > 0 ? "a RegionServer went down" : null;
      });
      StatefulSet sts = cluster.regionServers();
      assertThat(sts).isNotNull();
      assertThat(sts.getMetadata().getUid()).isEqualTo(stsUid);
      assertThat(cluster.podUids()).as("RegionServer pods").isEqualTo(uids);
      assertThat(cluster.pvcUids()).as("cache PVCs").isEqualTo(pvcs);
      assertThat(cluster.derivedConfigMap()).as("derived ConfigMap").isNotNull();
      assertThat(watch.maxDown()).isZero();
      Workload.Stats s = Workload.stats(workload.log(READER), t0, Instant.now());
      report.line("- 30 s later: StatefulSet (same UID), %d pods (same UIDs, all Ready), %d PVCs (same UIDs), derived ConfigMap kept; reader %s",
          uids.size(), pvcs.size(), s.summary());
      assertThat(s.fail()).isZero();
      summary.add("policy deleted: StatefulSet, pods, PVCs, derived ConfigMap unchanged; no failed reads");
    });
  }

  // ======================================================================== rolls

  /** Starts measuring a roll after a steady window of the reader with nothing else moving. */
  RollObserver observeRoll(String label) throws InterruptedException {
    // not the reader's own start, not the previous roll
    Instant quiet = readerStart.plusSeconds(20);
    if (lastRollEnd != null && lastRollEnd.isAfter(quiet)) {
      quiet = lastRollEnd;
    }
    return RollObserver.start(label, cluster, sampler, watch, workload, READER, quiet);
  }

  RollMeasurement record(RollMeasurement m) {
    lastRollEnd = m.end();
    m.report(report);
    var last = cluster.policy().getStatus().getRollout().getLastRoll();
    report.line("- status.rollout.lastRoll (the operator's own figures): %s", last == null ? "none"
        : String.format("%d restarts in %d s, slowest %s %s s from delete to regions home, %d cold, %s of %s data reads from cache",
            last.getRestarts(), last.getSeconds(), last.getSlowestPod(), last.getSlowestPodSeconds(), last.getColdRestarts(),
            Report.ratio(last.getCachedReadRatio()), last.getDataReads()));
    summary.add(m.summary() + (last == null ? "" : String.format("; operator: %d s, slowest pod %s s delete->home",
        last.getSeconds(), last.getSlowestPodSeconds())));
    return m;
  }

  /** A roll that restarted every pod once, one at a time, each keeping its cache, without a failed read. */
  void assertOneAtATimeWithTheCacheKept(RollMeasurement m) {
    assertOneAtATimeWithTheCacheKept(m, true);
  }

  void assertOneAtATimeWithTheCacheKept(RollMeasurement m, boolean noFailedReads) {
    assertOneAtATimeWithTheCacheKept(m, noFailedReads, true);
  }

  /**
   * @param readsRightAfter at least one restarted pod had reads in its window right after its restart (false where the
   *     scenario moves regions so that the windows may hold none: the window ends at the next pod's drain)
   */
  void assertOneAtATimeWithTheCacheKept(RollMeasurement m, boolean noFailedReads, boolean readsRightAfter) {
    var last = cluster.policy().getStatus().getRollout().getLastRoll();
    assertThat(last).as("status.rollout.lastRoll").isNotNull();
    assertThat(last.getRestarts()).as("lastRoll.restarts").isEqualTo(REPLICAS);
    assertThat(last.getColdRestarts()).as("lastRoll.coldRestarts").isZero();
    for (RollMeasurement.PodRestart p : m.pods().values()) {
      assertThat(p.restartedAt()).as("restartedAt of %s", p.pod()).isNotNull();
      assertThat(Instant.parse(p.restartedAt())).as("restartedAt of %s is in this roll", p.pod()).isAfter(m.start());
    }
    assertThat(m.maxDown()).as("RegionServers down at once (%s)", m.maxDownAt()).isLessThanOrEqualTo(1);
    for (int i = 0; i < REPLICAS; i++) {
      assertThat(m.uids().get(i)).as("pod UIDs of ordinal %d: restarted exactly once", i).hasSize(2);
    }
    assertThat(m.pvcsUnchanged()).as("PVC UIDs unchanged").isTrue();
    // one event per restart, also when a later roll repeats an earlier roll's texts
    assertThat(m.restartEventPods()).as("pods named by this roll's PodRestarted events (%s)", m.eventsNote()).containsExactlyInAnyOrderElementsOf(m.pods().keySet());
    assertThat(m.coldRestarts()).as("PodRestartedCold events").isZero();
    // an event the operator could not record (seen: 403 on reading back an event it counts up) is lost to users
    String opLog = safe(cluster::operatorLogs);
    assertThat(opLog == null ? List.<String>of() : opLog.lines().filter(l -> l.contains("could not record event"))
        .filter(l -> l.length() > 24 && l.substring(0, 24).compareTo(m.start().toString().substring(0, 19)) >= 0).toList())
        .as("events the operator could not record during the roll").isEmpty();
    m.pods().values().forEach(p -> assertThat(p.retainedFraction()).as("retainedFraction of %s", p.pod()).isNotNull().isGreaterThanOrEqualTo(0.95));
    // every pod whose window saw reads; and at least the last pod restarted (its window is never cut short)
    m.pods().values().stream().filter(p -> p.hitAfter() != null).forEach(p -> assertThat(p.hitAfter())
        .as("data hit ratio of %s right after its restart (served from the cache)", p.pod()).isGreaterThanOrEqualTo(0.9));
    assertThat(m.pods().values().stream().filter(p -> p.hitAfter() != null).count()).as("restarted pods with reads measured right after")
        .isGreaterThanOrEqualTo(readsRightAfter ? 1 : 0);
    if (noFailedReads) {
      assertThat(m.during().fail()).as("failed reads during the roll: %s", m.during().errors()).isZero();
    }
  }

  /** Data reads served from cache during a roll, all RegionServers, from the second roll with data on. */
  static final double CLUSTER_CACHED = 0.98;
  /**
   * From a pod's delete to all its regions back on its new instance: a behaviour bound, not a performance goal. Every
   * pod's regions must come home (the status shows a homeAt for each), within a bound several times what any machine
   * measured: 9.3-13.9 s on kind here and on CI's clean clones, 16.5 s on a new 2-core machine (which failed the old
   * 15 s gate with a perfect roll); 18-24 s for a pod that waited for a new operator or HMaster. The seconds themselves
   * are figures: the e2e report lists them per roll (RollMeasurement) and docs/ judges them, never CI.
   */
  static final double HOME_BOUND_SECONDS = 90;

  /**
   * The whole cluster's reads stayed cached through the roll: every drained region went to a server that cached it in
   * the last roll. Both this suite's own figure (every RegionServer's /jmx) and the operator's (lastRoll).
   */
  void assertTheClustersReadsStayedCached(RollMeasurement m) {
    assertThat(m.clusterCached()).as("data reads served from cache, all RegionServers, during the roll (this suite's /jmx samples)")
        .isNotNull().isGreaterThanOrEqualTo(CLUSTER_CACHED);
    assertThat(m.operatorCached()).as("status.rollout.lastRoll.cachedReadRatio").isNotNull().isGreaterThanOrEqualTo(CLUSTER_CACHED);
  }

  void assertEveryPodHomeWithin(RollMeasurement m) {
    assertThat(m.homeSeconds()).as("pods with delete -> regions home, seen in the status or in their PodRestarted event")
        .hasSize(REPLICAS);
    report.line("  - delete -> regions home per pod (a figure, judged in docs/, not here): %s s", m.homeSeconds().values());
    m.homeSeconds().forEach((pod, secs) -> assertThat(secs).as("seconds from %s's delete to all its regions back (behaviour bound)", pod)
        .isLessThanOrEqualTo(HOME_BOUND_SECONDS));
  }

  // ======================================================================== helpers

  /**
   * An observation window: {@code change} (a description of what changed, or null) must stay null
   * for the whole {@code window}, polled every 2 s; fails at the first change seen.
   */
  void nothingChangesFor(String what, Duration window, Call<String> change) {
    AtomicReference<String> seen = new AtomicReference<>();
    try {
      await(what).during(window).atMost(window.plusSeconds(15)).pollInterval(Duration.ofSeconds(2)).until(() -> {
        if (seen.get() == null) {
          seen.set(safe(change));
        }
        return seen.get() == null;
      });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(what + ": " + seen.get(), e);
    }
  }

  /** The Lru policy of step 17: its L1 is a small share of the heap, so the reader's working set outgrows it. */
  static final String ADVICE_POLICY = "lru-advice";

  @Test
  @Order(19)
  void aWorkingSetThatOutgrowsTheLruGetsAnOffheapRecommendation() {
    step("17. sizing advice from real RegionServers: an LRU the reader's working set outgrows gets an Offheap recommendation", () -> {
      // examples/lru.yaml on the StatefulSet the deleted policy left, with an L1 of 2% of the heap (the table's 200 MB of
      // values do not fit), the HMaster left alone, and a 1-minute advice window; the reader goes on reading the whole table
      BlockCachePolicy p = client.resources(BlockCachePolicy.class).load(repo.resolve("examples/lru.yaml").toFile()).item();
      p.getMetadata().setName(ADVICE_POLICY);
      p.getMetadata().setNamespace(cluster.ns);
      p.getSpec().setMasterRef(null);
      p.getSpec().getMemory().setBlockCacheFraction(0.02);
      p.getSpec().setMetrics(new MetricsSpec().setInterval("10s"));
      p.getSpec().setAutoTune(new dev.hbase.cache.api.v1alpha1.spec.AutoTuneSpec().setWindow("1m"));
      var lru = client.resources(BlockCachePolicy.class).inNamespace(cluster.ns).withName(ADVICE_POLICY);
      watch.reset();
      Instant t0 = Instant.now();
      client.resource(p).create();
      // a policy the operator refuses does not become valid by waiting (CI once waited 25 min on ConfigVolumeNotFound)
      BlockCachePolicy rolled = await("Lru policy rolled: Idle, Ready=True").atMost(ROLL_TIMEOUT).pollInterval(Duration.ofSeconds(2))
          .failFast("the operator refused the policy", () -> {
            BlockCachePolicy x = lru.get();
            var conditions = x == null || x.getStatus() == null || x.getStatus().getConditions() == null
                ? List.<io.fabric8.kubernetes.api.model.Condition>of() : x.getStatus().getConditions();
            assertThat(conditions).as("conditions of %s", ADVICE_POLICY)
                .noneMatch(c -> "Valid".equals(c.getType()) && "False".equals(c.getStatus()));
          })
          .ignoreExceptions().until(lru::get, x -> x.getStatus() != null && x.getStatus().getRollout() != null
              && x.getStatus().getRollout().getPhase() == RolloutStatus.Phase.Idle && isTrue(x, "Ready")
              && x.getStatus().getRollout().getLastRoll() != null);
      Instant rolledAt = Instant.now();
      var plan = rolled.getStatus().getPlan();
      report.line("- examples/lru.yaml as `%s`, memory.blockCacheFraction 0.02, autoTune.window 1m: rolled to Idle in %d s (max down at once %d); plan heap %s, L1 %s",
          ADVICE_POLICY, Duration.between(t0, rolledAt).toSeconds(), watch.maxDown(), plan.getHeap(), plan.getL1Size());
      assertThat(watch.maxDown()).as("RegionServers down at once in the switch to Lru").isLessThanOrEqualTo(1);
      BlockCachePolicy advised = await("a recommendation from a complete window with reads").atMost(Duration.ofMinutes(5))
          .pollInterval(Duration.ofSeconds(5)).ignoreExceptions().until(lru::get, x -> x.getStatus().getRecommendation() != null
              && x.getStatus().getRecommendation().getEvidence() != null
              && x.getStatus().getRecommendation().getEvidence().getDataReads() != null
              && x.getStatus().getRecommendation().getEvidence().getDataReads() >= 1000);
      var advice = advised.getStatus().getRecommendation();
      var ev = advice.getEvidence();
      report.line("- %d s after the roll: status.recommendation mode %s, bucketCache %s, differs %s: %s",
          Duration.between(rolledAt, Instant.now()).toSeconds(), advice.getMode(), advice.getBucketCache(), advice.getDiffers(), advice.getMessage());
      report.line("- evidence (%s .. %s): %d data reads, hit ratio %s, %d evictions, L1 %s full of %.1f MiB, GC %s of the time, working set ~%.0f MiB",
          ev.getFrom(), ev.getTo(), ev.getDataReads(), Report.ratio(ev.getDataHitRatio()), ev.getEvictions(),
          ev.getL1UsedFraction() == null ? "?" : String.format("%.0f%%", 100 * ev.getL1UsedFraction()),
          ev.getL1CapacityBytes() == null ? 0.0 : ev.getL1CapacityBytes() / 1048576.0,
          ev.getGcTimeFraction() == null ? "?" : String.format("%.1f%%", 100 * ev.getGcTimeFraction()),
          ev.getWorkingSetBytes() == null ? 0.0 : ev.getWorkingSetBytes() / 1048576.0);
      List<Event> changed = await("RecommendationChanged event").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(2))
          .until(() -> client.v1().events().inNamespace(cluster.ns).list().getItems().stream()
              .filter(e -> e.getInvolvedObject() != null && ADVICE_POLICY.equals(e.getInvolvedObject().getName()))
              .filter(e -> "RecommendationChanged".equals(e.getReason())).toList(), l -> !l.isEmpty());
      changed.forEach(e -> report.line("- event RecommendationChanged: %s", e.getMessage()));
      assertThat(advice.getMode()).as("recommended mode for an LRU the working set outgrows").isEqualTo("Offheap");
      assertThat(advice.getDiffers()).as("the advice differs from the spec").isTrue();
      assertThat(advice.getBucketCache()).as("the recommended L2").isNotBlank();
      assertThat(ev.getEvictions()).as("LRU evictions in the window").isPositive();
      assertThat(ev.getDataHitRatio()).as("data hit ratio in the window").isLessThan(0.95);
      assertThat(changed).as("RecommendationChanged events").isNotEmpty();
      assertThat(lru.get().getSpec().getMode().toString()).as("Recommend applies nothing").isEqualTo("Lru");
      Workload.Stats s = Workload.stats(workload.log(READER), t0, Instant.now());
      report.line("- reader from the policy's create to the advice: %s", s.summary());
      assertThat(s.fail()).as("failed reads while the RegionServers switched to Lru").isZero();
      summary.add(String.format("sizing advice from real metrics: Lru with L1 %s, hit ratio %s, %d evictions in a 1 min window -> %s %s; 0 failed reads",
          plan.getL1Size(), Report.ratio(ev.getDataHitRatio()), ev.getEvictions(), advice.getMode(), advice.getBucketCache()));
    });
  }

  @Test
  @Order(20)
  void prometheusAnswersEveryDashboardQueryFromTheRun() {
    step("18. Prometheus scraped the operator and the RegionServers: every query of the chart's Grafana dashboard has series", () -> {
      report.line("- Prometheus (Debian's 2.x, on the host) since %s, through the API server's proxy, scraping and evaluating what the "
          + "chart's ServiceMonitor, PodMonitor and PrometheusRule in the cluster say (step 1)", prometheus.started);
      prometheus.targets().forEach(t -> report.line("  - target %s", t));
      // the dashboard the chart installed for Grafana's sidecar
      ConfigMap dashboard = client.configMaps().inNamespace(cluster.opNs).withLabel("grafana_dashboard", "1").list().getItems().stream()
          .filter(cm -> cm.getData() != null && cm.getData().containsKey("hbase-cache.json")).findFirst().orElse(null);
      assertThat(dashboard).as("the chart's dashboard ConfigMap (label grafana_dashboard=1) in %s", cluster.opNs).isNotNull();
      assertThat(dashboard.getData().get("hbase-cache.json")).as("the dashboard it carries")
          .isEqualTo(Files.readString(repo.resolve("charts/hbase-cache-operator/dashboards/hbase-cache.json")).strip());
      report.line("- dashboard ConfigMap `%s` (grafana_dashboard=1) carries charts/hbase-cache-operator/dashboards/hbase-cache.json",
          dashboard.getMetadata().getName());
      // every alerting rule of the chart's PrometheusRule evaluated without an error over the run
      List<String> rules = prometheus.rules();
      rules.forEach(r -> report.line("  - rule %s", r));
      assertThat(rules).as("rules loaded from the chart's PrometheusRule").hasSizeGreaterThanOrEqualTo(4);
      assertThat(rules).as("rule health (group/name health error)").allMatch(r -> r.split(" ")[1].equals("ok"));
      List<Map<String, Object>> saved = new ArrayList<>();
      List<String> empty = new ArrayList<>();
      for (Prometheus.Query q : Prometheus.dashboardQueries(dashboard.getData().get("hbase-cache.json"))) {
        var result = prometheus.range(q.expr(), prometheus.started, Duration.ofSeconds(15));
        report.line("- %s: `%s`: %d series", q.panel(), q.expr(), result.size());
        if (result.isEmpty()) {
          empty.add(q.panel() + ": " + q.expr());
        }
        saved.add(Map.of("panel", q.panel(), "expr", q.expr(), "legend", q.legend(), "result", result));
      }
      Files.writeString(target.resolve("prometheus-panels.json"),
          new com.fasterxml.jackson.databind.ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(saved));
      report.line("- every panel's series saved to e2e/target/prometheus-panels.json (`make dashboard-plot` draws them)");
      assertThat(empty).as("dashboard queries without a series over the run").isEmpty();
      summary.add(String.format("Prometheus: all %d queries of the chart's dashboard answered with series from the run", saved.size()));
      // the operator's own memory after the whole suite (make bench-operator measures it at 200 servers
      // without the HBase client's classes: this is the production process, HBase client loaded)
      Pod op = cluster.operatorPod();
      String status = cluster.kubectl("exec", "-n", cluster.opNs, op.getMetadata().getName(), "--", "cat", "/proc/1/status").output();
      String metrics = cluster.kubectl("get", "--raw", "/api/v1/namespaces/" + cluster.opNs + "/pods/"
          + op.getMetadata().getName() + ":8080/proxy/metrics").output();
      long rss = procKiB(status, "VmRSS") >> 10;
      long peak = procKiB(status, "VmHWM") >> 10;
      double metaspace = metrics.lines().filter(l -> l.startsWith("jvm_memory_used_bytes{") && l.contains("id=\"Metaspace\""))
          .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum() / (1 << 20);
      report.line("- operator pod %s after the suite: RSS %d MiB, peak RSS %d MiB, metaspace %.0f MiB (chart limit 512Mi)",
          op.getMetadata().getName(), rss, peak, metaspace);
      assertThat(peak).as("the operator's peak RSS (MiB) against the chart's 512Mi limit").isBetween(1L, 511L);
      assertThat(metaspace).as("the operator's metaspace from its /metrics (MiB)").isPositive();
    });
  }

  @Test
  @Order(21)
  @Tag("namespace")
  void aNamespaceAdminInstallsTheOperatorForTheirNamespaceOnly() {
    step("19. the chart in namespace-only mode, installed by a namespace admin: a roll under it, a policy elsewhere left alone", () -> {
      NamespaceInstall ns = new NamespaceInstall(client, cluster, settings, report);
      // the policies of earlier steps go with the operator that made them (the advice step's; the suite's own when the
      // steps that delete it did not run: make e2e-namespace)
      for (String name : List.of(ADVICE_POLICY, Cluster.POLICY)) {
        var old = client.resources(BlockCachePolicy.class).inNamespace(cluster.ns).withName(name);
        old.delete();
        await(name + " gone").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(1)).until(() -> old.get() == null);
      }
      ns.replaceTheClusterWideOperator(target.resolve("operator.log"));
      // the suite's PersistentFile policy again, on the cache volumes step 2 made: its first roll under the new operator
      BlockCachePolicy p = client.resources(BlockCachePolicy.class).load(repo.resolve("examples/persistent-file.yaml").toFile()).item();
      p.getMetadata().setNamespace(cluster.ns);
      p.getSpec().setMetrics(new MetricsSpec().setInterval("10s"));
      p.getSpec().getStorage().setStorageClassName(ROOT_OWNED_CLASS);
      client.resource(p).create();
      ns.createUnwatchedPolicy(p);
      NamespaceInstall.awaitTaken(cluster, Duration.ofMinutes(2));
      BlockCachePolicy done = cluster.awaitRollDone("PersistentFile again, under the namespace-scoped operator", null, ROLL_TIMEOUT);
      report.line("- examples/persistent-file.yaml again: rolled to Idle (revision %s)", done.getStatus().getRollout().getRevision());
      // "caches kept" needs caches to keep: that roll came from pods without an L2 (the deleted policy's pods went back to the
      // StatefulSet's own template), so it had nothing to retain; a pod restarted again before its L2 holds blocks has nothing to
      // retain either (seen on CI: the restart roll began with rs-0's L2 sampled empty, so no retainedFraction)
      awaitEveryPodCached(Duration.ofMinutes(5));
      // and a roll with the usual checks
      RollObserver roll = observeRoll("restart annotation, namespace-scoped operator");
      cluster.editPolicy(x -> {
        var a = new java.util.HashMap<String, String>(x.getMetadata().getAnnotations() == null ? Map.of() : x.getMetadata().getAnnotations());
        a.put(BlockCachePolicy.RESTART_ANNOTATION, Instant.now().toString());
        x.getMetadata().setAnnotations(a);
      });
      RollMeasurement m = record(roll.awaitDone());
      assertOneAtATimeWithTheCacheKept(m);
      assertEveryPodHomeWithin(m);
      ns.assertUnwatchedPolicyLeftAlone();
      summary.add("namespace-only install by a namespace admin (no cluster-scoped object): a roll with one down at most, caches kept,"
          + " 0 failed reads; a policy in an unwatched namespace left alone");
    });
  }

  /**
   * How long every pod's L2 must stay as it is to count as filled: more than two of the policy's 10 s metrics intervals. The
   * reader reads the whole table without pause, so a pod's L2 grows until its regions' blocks are all cached, then holds.
   */
  static final Duration L2_SETTLED = Duration.ofSeconds(25);

  /**
   * Until the policy's status shows every pod's L2 holding blocks and none of them growing for {@link #L2_SETTLED}: the state a
   * roll that must keep caches starts from. Not a fixed size: a pod's share of the table is its regions' (seen on kind: rs-0
   * with 33 MiB beside 132 MiB on the others, 201 s to get past half a third of the table). How long it took goes to the report.
   */
  void awaitEveryPodCached(Duration bound) {
    Instant from = Instant.now();
    AtomicReference<BlockCachePolicy> seen = new AtomicReference<>();
    Map<String, Long> last = new java.util.TreeMap<>();
    AtomicReference<Instant> changedAt = new AtomicReference<>(from);
    try {
      await("every pod's L2 holding blocks, unchanged for " + L2_SETTLED.toSeconds() + " s").atMost(bound)
          .pollInterval(Duration.ofSeconds(2)).until(() -> {
            BlockCachePolicy p = cluster.policy();
            seen.set(p);
            Map<String, Long> now = l2ByPod(p);
            if (!now.equals(last)) {
              last.clear();
              last.putAll(now);
              changedAt.set(Instant.now());
            }
            return l2Settled(now, changedAt.get(), Instant.now());
          });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(e.getMessage() + "; last status: " + describeL2(seen.get()), e);
    }
    report.line("- every pod's L2 holds blocks, unchanged for %d s, after %d s: %s", L2_SETTLED.toSeconds(),
        Duration.between(from, Instant.now()).toSeconds(), describeL2(seen.get()));
  }

  /** Every pod has a row with L2 used bytes above 0, and none changed since {@code changedAt}, {@link #L2_SETTLED} ago. */
  static boolean l2Settled(Map<String, Long> l2ByPod, Instant changedAt, Instant now) {
    return l2ByPod.size() == REPLICAS && l2ByPod.values().stream().allMatch(v -> v > 0)
        && !now.isBefore(changedAt.plus(L2_SETTLED));
  }

  /** Each pod's L2 used bytes in the policy's status (pods without a figure left out). */
  static Map<String, Long> l2ByPod(BlockCachePolicy p) {
    Map<String, Long> m = new java.util.TreeMap<>();
    if (p != null && p.getStatus() != null && p.getStatus().getRegionServers() != null) {
      p.getStatus().getRegionServers().stream().filter(r -> r.getL2UsedBytes() != null)
          .forEach(r -> m.put(r.getPod(), r.getL2UsedBytes()));
    }
    return m;
  }

  static String describeL2(BlockCachePolicy p) {
    if (p == null || p.getStatus() == null || p.getStatus().getRegionServers() == null) {
      return "no pod rows";
    }
    return p.getStatus().getRegionServers().stream().map(r -> String.format("%s %.1f MiB", r.getPod(),
        r.getL2UsedBytes() == null ? -1.0 : r.getL2UsedBytes() / 1048576.0)).toList().toString();
  }

  /** A field of /proc/PID/status in KiB (VmRSS, VmHWM); 0 when absent. */
  static long procKiB(String status, String field) {
    return status.lines().filter(l -> l.startsWith(field + ":")).findFirst()
        .map(l -> Long.parseLong(l.replaceAll("\\D", ""))).orElse(0L);
  }

  interface Body {
    void run() throws Exception;
  }

  void step(String name, Body body) {
    Assumptions.assumeFalse(failed, "an earlier step failed");
    report.section(name);
    Instant t0 = Instant.now();
    try {
      body.run();
      report.line("- PASSED, wall time %d s", Duration.between(t0, Instant.now()).toSeconds());
      stepTimes.add(String.format("| %s | %d s | passed |", name.replaceFirst(":.*", "").replace("|", "/"),
          Duration.between(t0, Instant.now()).toSeconds()));
    } catch (Throwable t) {
      failed = true;
      stepTimes.add(String.format("| %s | %d s | FAILED |", name.replaceFirst(":.*", "").replace("|", "/"),
          Duration.between(t0, Instant.now()).toSeconds()));
      report.line("- FAILED after %d s: %s", Duration.between(t0, Instant.now()).toSeconds(), String.valueOf(t.getMessage()).lines().limit(40)
          .reduce((a, b) -> a + "\n    " + b).orElse(""));
      diagnostics();
      if (t instanceof RuntimeException re) {
        throw re;
      }
      if (t instanceof Error er) {
        throw er;
      }
      throw new IllegalStateException(t);
    }
  }

  void diagnostics() {
    report.line("```\n%s```", cluster.kubectl("get", "pods", "-A", "-o", "wide").output());
    BlockCachePolicy p = safe(cluster::policyOrNull);
    if (p != null) {
      report.line("```yaml\n%s```", Serialization.asYaml(p.getStatus()));
    }
    String log = safe(cluster::operatorLogs);
    if (log != null) {
      report.line("operator log (last 40 lines):\n```\n%s\n```", String.join("\n", log.lines().skip(Math.max(0, log.lines().count() - 40)).toList()));
    }
  }

  interface Call<T> {
    T call() throws Exception;
  }

  static <T> T safe(Call<T> c) {
    try {
      return c.call();
    } catch (Exception e) {
      return null;
    }
  }

  static long restarted(Map<Integer, Set<String>> uids) {
    return uids.values().stream().filter(s -> s.size() > 1).count();
  }

  static String sizes(Map<Integer, Set<String>> uids) {
    Map<Integer, Integer> m = new TreeMap<>();
    uids.forEach((k, v) -> m.put(k, v.size()));
    return m.toString();
  }

  static long bytes(String quantity) {
    return Quantity.getAmountInBytes(new Quantity(quantity)).longValue();
  }
}
