package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static dev.hbase.cache.e2e.Cluster.RS;
import static dev.hbase.cache.e2e.Cluster.tuning;
import static dev.hbase.cache.e2e.RollObserver.ROLL_TIMEOUT;
import static dev.hbase.cache.e2e.RootOwnedVolumes.ROOT_OWNED_DIR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Steps 1-4 (tag {@code setup}, which make e2e-faults, e2e-namespace and e2e-secured run first):
 * the operator chart, the PersistentFile policy on root-owned cache volumes ({@link
 * RootOwnedVolumes}), a table and the reader that runs from here to the end (hit ratios in the
 * status), and the first roll with data (writerThreads 3 -> 4).
 */
@Tag("setup")
class SetupScenarios extends KindScenario {
  /**
   * Its start: HBase up: its steps make everything else (the operator, the policy, the table, the
   * reader).
   */
  @Override
  List<Need> needs() {
    return List.of(Needs.HBASE_UP);
  }

  @Test
  @Order(1)
  void crdAndOperatorChartInstall() {
    step(
        "1. CRD and operator chart install",
        () -> {
          Instant t0 = Instant.now();
          Shell.Result up = cluster.installOperator();
          assertThat(up.code()).as("e2e/kind/operator-up.sh: %s", up.output()).isZero();
          await("CRD Established")
              .atMost(Duration.ofMinutes(2))
              .pollInterval(Duration.ofSeconds(1))
              .until(cluster::crdEstablished);
          Deployment d = cluster.operatorDeployment();
          assertThat(d.getStatus().getReadyReplicas())
              .as("operator Deployment ready replicas")
              .isEqualTo(1);
          Pod op = cluster.operatorPod();
          assertThat(PodWatch.ready(op)).isTrue();
          report.line(
              "- `e2e/kind/operator-up.sh` (kind load, helm upgrade --install `%s` -n `%s`, the CRD with the chart): CRD `%s` "
                  + "Established, Deployment Ready; %d s in all",
              settings.operatorRelease(),
              cluster.opNs,
              Cluster.CRD,
              Duration.between(t0, Instant.now()).toSeconds());
          up.output()
              .lines()
              .filter(l -> l.contains("install to Ready") || l.contains("loaded "))
              .forEach(l -> report.line("  - `%s`", l));
          report.line(
              "- operator pod `%s` Ready, image `%s`",
              op.getMetadata().getName(), op.getSpec().getContainers().get(0).getImage());
          // OPERATOR_MONITORING=1 (Settings.env): the Prometheus Operator's CRDs and the chart's
          // monitoring objects
          List<String> followed = Needs.follow(this);
          report.line(
              "- the chart's monitoring objects (the Prometheus Operator's CRDs %s, from its Go module), as the host's Prometheus follows them:",
              "applied by operator-up.sh");
          followed.forEach(l -> report.line("  - %s", l));
          assertThat(followed)
              .as("ServiceMonitor endpoints on the operator's metrics Service")
              .anyMatch(l -> l.startsWith("serviceMonitor/"));
          assertThat(followed)
              .as("PodMonitor targets: the RegionServers")
              .filteredOn(l -> l.startsWith("podMonitor/"))
              .hasSize(REPLICAS);
          assertThat(followed)
              .as("PrometheusRule groups")
              .anyMatch(l -> l.startsWith("PrometheusRule "));
          new CrdUpgrade(client, cluster, settings).run().forEach(l -> report.line("- %s", l));
        });
  }

  @Test
  @Order(2)
  void persistentFilePolicyPutsThePlannedCacheInEveryRegionServer() {
    step(
        "2. PersistentFile policy: the planned cache in every RegionServer's metrics",
        () -> {
          Map<Integer, String> uidsBefore = cluster.podUids();
          // the only changes to the example: hit ratios every 10 s instead of 30 s, sizing advice
          // every 3 min instead of every hour (a shorter test), and the cache volumes on storage
          // as a CSI driver gives it: root-owned, not world-writable (Baseline.suitePolicy)
          if (settings.secured()) {
            aClientWithoutAnIdentityIsRefused();
          }
          BlockCachePolicy p = Baseline.suitePolicy(this);
          if (settings.secured()) {
            report.line(
                "- Kerberos-secured HBase (make e2e-secured): realm %s, RPC and ZooKeeper over SASL, HBase ACLs;"
                    + " the workload logged in as %s, granted `RA` to %s; spec.hbase.kerberos: principal %s,"
                    + " keytabSecret %s",
                settings.kerberosRealm(),
                settings.principal(Settings.WORKLOAD_PRINCIPAL_NAME),
                Settings.OPERATOR_PRINCIPAL_NAME,
                settings.principal(Settings.OPERATOR_PRINCIPAL_NAME),
                Settings.OPERATOR_KEYTAB_SECRET);
          }
          Instant t0 = Instant.now();
          Baseline.create(this, p);
          BlockCachePolicy done = cluster.awaitRollDone("first roll", null, ROLL_TIMEOUT);
          if (settings.secured()) {
            assertTheRollKeptKerberos();
          }
          long secs = Duration.between(t0, Instant.now()).toSeconds();
          var plan = done.getStatus().getPlan();
          report.line(
              "- applied examples/persistent-file.yaml (metrics.interval 10s): Valid, roll to Idle + Ready=True in %d s",
              secs);
          report.line(
              "- plan: heap %s, direct %s, L1 %s, L2 %s, ioEngine %s, PVC %s",
              plan.getHeap(),
              plan.getDirectMemory(),
              plan.getL1Size(),
              plan.getBucketCacheSize(),
              plan.getIoEngine(),
              plan.getPvcSize());
          Map<Integer, String> uidsAfter = cluster.podUids();
          for (int i = 0; i < REPLICAS; i++) {
            assertThat(uidsAfter.get(i))
                .as("pod %d restarted by the first roll", i)
                .isNotEqualTo(uidsBefore.get(i));
          }
          long l2 = bytes(plan.getBucketCacheSize());
          long l1 = bytes(plan.getL1Size());
          for (int i = 0; i < REPLICAS; i++) {
            String pod = Cluster.pod(i);
            // HBase refreshes these figures every few seconds: a just-restarted server shows zeros
            // first
            Jmx j =
                Jmx.awaitUntil(
                    client,
                    cluster.ns,
                    pod,
                    "/jmx of " + pod + " shows the L2",
                    Duration.ofMinutes(2),
                    Duration.ofSeconds(3),
                    x -> x.l2Capacity() > 0 && x.l1Used() + x.l1Free() > 0);
            PersistentVolumeClaim pvc = cluster.cachePvc(pod);
            assertThat(pvc).as("cache PVC of %s", pod).isNotNull();
            assertThat(pvc.getStatus().getPhase()).isEqualTo("Bound");
            report.line(
                "- `%s`: L2 capacity (l2CacheSize + l2CacheFreeSize) %d bytes = %.1f MiB vs planned %s (%.2f%%); L1 capacity %.1f MiB vs planned %s; PVC %s Bound",
                pod,
                j.l2Capacity(),
                j.l2Capacity() / 1048576.0,
                plan.getBucketCacheSize(),
                100.0 * j.l2Capacity() / l2,
                (j.l1Used() + j.l1Free()) / 1048576.0,
                plan.getL1Size(),
                pvc.getMetadata().getName());
            assertThat((double) j.l2Capacity())
                .as("L2 capacity of %s", pod)
                .isCloseTo(l2, within(l2 * 0.05));
            assertThat((double) (j.l1Used() + j.l1Free()))
                .as("L1 capacity of %s", pod)
                .isCloseTo(l1, within(l1 * 0.10));
          }
          // the operator's fsGroup: the kubelet made each root-owned 0755 volume group-writable,
          // and HBase wrote its cache there
          var podSecurity =
              cluster.regionServers().getSpec().getTemplate().getSpec().getSecurityContext();
          report.line(
              "- pod template securityContext (fsGroup from the operator): fsGroup %s, fsGroupChangePolicy %s",
              podSecurity.getFsGroup(), podSecurity.getFsGroupChangePolicy());
          assertThat(podSecurity.getFsGroup())
              .as("fsGroup of the RegionServers' pod template")
              .isNotNull();
          for (int i = 0; i < REPLICAS; i++) {
            String dir = ROOT_OWNED_DIR + "/cache-" + i;
            Shell.Result st =
                Shell.run(
                    settings.repo(),
                    60,
                    settings.env(),
                    List.of(
                        "docker",
                        "exec",
                        settings.kindCluster() + "-control-plane",
                        "sh",
                        "-c",
                        "stat -c '%u:%g %a' " + dir + " && ls -ln " + dir));
            report.line(
                "- node `%s` (created root:root 0755): `%s`",
                dir, st.output().strip().replace("\n", "; "));
            assertThat(st.code()).as("stat %s: %s", dir, st.output()).isZero();
            String[] head = st.output().strip().lines().findFirst().orElseThrow().split(" ");
            assertThat(head[0]).as("owner of %s", dir).isEqualTo("0:" + podSecurity.getFsGroup());
            int mode = Integer.parseInt(head[1], 8);
            assertThat(mode & 0020).as("group-writable %s (mode %s)", dir, head[1]).isNotZero();
            assertThat(st.output())
                .as("the cache file HBase wrote in %s", dir)
                .contains("bucketcache.data");
          }
          summary.add(
              String.format(
                  "first roll (policy applied): %d s; L2 capacity = plan within 5%% on all %d RegionServers; cache volumes"
                      + " root-owned 0755 before, written by the RegionServers through the operator's fsGroup",
                  secs, REPLICAS));
        });
  }

  /**
   * make e2e-secured: the cluster is secured, not only configured so: a client without an identity
   * is refused (on an unsecured cluster this pod prints "decommissioned now: []" and succeeds). The
   * operator's principal is then granted its permissions ({@link
   * Baseline#asTheOperatorsPrincipal}).
   */
  private void aClientWithoutAnIdentityIsRefused() {
    Workload.Run anonymous =
        workload.runWithoutIdentity("e2e-anonymous", Duration.ofMinutes(3), "decommissioned");
    assertThat(anonymous.log())
        .as("a workload pod speaking SIMPLE authentication to the master")
        .contains("AUTH SIMPLE")
        .doesNotContain("decommissioned now:")
        // the master closes a connection that offers SIMPLE (seen: "ConnectionClosedException:
        // Call to address=hbase-master-0...:16000 failed on local exception: ...Connection closed")
        .containsPattern("ConnectionClosedException: Call to address=\\S*master\\S*");
    assertThat(anonymous.phase())
        .as("a workload pod speaking SIMPLE authentication to the master: %s", anonymous.log())
        .isEqualTo("Failed");
    report.line(
        "- a client speaking SIMPLE authentication (no keytab) is refused: `%s`",
        anonymous
            .log()
            .lines()
            .filter(l -> l.startsWith("Exception in thread"))
            .findFirst()
            .map(l -> l.length() > 240 ? l.substring(0, 240) + "..." : l)
            .orElse("(pod Failed)"));
  }

  /**
   * After the first roll on a secured HBase: the RegionServers the operator rendered still log in
   * (the keytab and krb5.conf volumes kept) and their hbase-site still says Kerberos.
   */
  private void assertTheRollKeptKerberos() {
    var spec = cluster.regionServers().getSpec().getTemplate().getSpec();
    assertThat(spec.getVolumes())
        .as("the RegionServers' volumes after the operator's roll")
        .anyMatch(
            v -> v.getSecret() != null && "hbase-keytabs".equals(v.getSecret().getSecretName()))
        .anyMatch(v -> v.getConfigMap() != null && "krb5".equals(v.getConfigMap().getName()));
    var data = cluster.derivedConfigMap().getData();
    String site = data.get("hbase-site.xml");
    assertThat(site)
        .as("the operator's RegionServer hbase-site")
        .containsPattern("<name>hbase.security.authentication</name>\\s*<value>kerberos</value>")
        .contains("<name>hbase.regionserver.keytab.file</name>");
    String core = data.get("core-site.xml");
    assertThat(core)
        .as("the operator's RegionServer core-site.xml (Hadoop's login reads it there only)")
        .containsPattern("<name>hadoop.security.authentication</name>\\s*<value>kerberos</value>");
    report.line(
        "- after the roll: the RegionServers keep the keytab and krb5.conf volumes, and `%s-rs-site` keeps"
            + " hbase.security.authentication=kerberos, the keytab settings and core-site.xml",
        Cluster.POLICY);
  }

  @Test
  @Order(3)
  void statusShowsHitRatiosThatMatchTheWorkload() {
    step(
        "3. hit ratios in the status match the workload",
        () -> {
          Instant t0 = Instant.now();
          Workload.Run load = Baseline.loadTable(this);
          String loadLog = load.log();
          loadLog
              .lines()
              .filter(
                  l ->
                      l.startsWith("put")
                          || l.startsWith("flushed")
                          || l.startsWith("warm-up")
                          || l.startsWith("regions per"))
              .forEach(l -> report.line("- load: %s", l));
          assertThat(load.phase()).as("load pod: %s", loadLog).isEqualTo("Succeeded");
          assertThat(loadLog).contains("LOAD OK");
          report.line(
              "- loaded %d rows x %d B into %d regions and scanned once (warm-up) in %d s",
              ROWS, VALUE_BYTES, REGIONS, Duration.between(t0, Instant.now()).toSeconds());
          workload.delete("e2e-load");

          // a hot set that fits the cache: every row of the table, 200 random Gets/s, from now to
          // the end
          Baseline.startReader(this);
          // the reader's first reads in HBase's figures: its start, HBase's own refresh (the
          // chart's metricsPeriodSeconds, 1 s) and the 2 s between the suite's /jmx samples, with
          // a margin; a status sampled 10 s (one policy metrics interval) after that is a sample of
          // the reader
          Instant from = suite.readerStart.plusSeconds(12);
          AtomicReference<BlockCachePolicy> seen = new AtomicReference<>();
          // sampledAt moves only when the figures change (an unchanged status is not written
          // again); with the table prefetched into the caches before the reader starts, every
          // figure may stay what it was (all hits), so two more intervals having passed with the
          // reader running is as good a sample
          await("status sampled twice with the reader running")
              .atMost(Duration.ofMinutes(3))
              .pollInterval(Duration.ofSeconds(2))
              .until(
                  () -> {
                    BlockCachePolicy p = cluster.policy();
                    seen.set(p);
                    var c = p.getStatus().getCache();
                    return c != null
                        && c.getSampledAt() != null
                        && (Instant.parse(c.getSampledAt()).isAfter(from.plusSeconds(10))
                            || Instant.now().isAfter(from.plusSeconds(20)))
                        && c.getHitRatio() != null
                        && p.getStatus().getRegionServers().stream()
                            .allMatch(r -> r.getHitRatio() != null);
                  });
          BlockCachePolicy p = seen.get();
          Instant sampledAt = Instant.parse(p.getStatus().getCache().getSampledAt());
          if (sampledAt.isBefore(from)) {
            report.line(
                "- status.cache.sampledAt %s is before the reader: its figures did not change since (all hits, prefetched)",
                sampledAt);
            sampledAt = Instant.now();
          }
          var c = p.getStatus().getCache();
          Workload.Stats reads =
              Workload.stats(workload.log(READER), suite.readerStart, Instant.now());
          report.line("- reader: %s", reads.summary());
          report.line(
              "- status.cache (sampled %s): hitRatio %s, l1HitRatio %s, l2HitRatio %s, cumulative %s, used %.1f MiB of %.1f MiB, failedInsertions %d",
              c.getSampledAt(),
              Report.ratio(c.getHitRatio()),
              Report.ratio(c.getL1HitRatio()),
              Report.ratio(c.getL2HitRatio()),
              Report.ratio(c.getCumulativeHitRatio()),
              c.getUsedBytes() / 1048576.0,
              c.getSizeBytes() / 1048576.0,
              c.getFailedInsertions());
          for (RegionServerStatus r : p.getStatus().getRegionServers()) {
            Double own = sampler.ratio(r.getPod(), sampledAt.minusSeconds(20), sampledAt);
            report.line(
                "- `%s`: status hitRatio %s (cumulative %s, L2 used %.1f MiB); the test's own /jmx ratio over the same 20 s: %s",
                r.getPod(),
                Report.ratio(r.getHitRatio()),
                Report.ratio(r.getCumulativeHitRatio()),
                r.getL2UsedBytes() == null ? 0 : r.getL2UsedBytes() / 1048576.0,
                Report.ratio(own));
            assertThat(r.getHitRatio())
                .as("hitRatio of %s: the hot set fits the cache", r.getPod())
                .isGreaterThanOrEqualTo(0.95);
            assertThat(r.getL2UsedBytes())
                .as(
                    "L2 used of %s: its third of the %d MB table",
                    r.getPod(), ROWS * VALUE_BYTES >> 20)
                .isGreaterThan(ROWS * VALUE_BYTES / REPLICAS / 2);
            if (own != null) {
              assertThat(r.getHitRatio())
                  .as("status vs /jmx of %s", r.getPod())
                  .isCloseTo(own, within(0.05));
            }
          }
          assertThat(c.getHitRatio()).as("aggregate hitRatio").isGreaterThanOrEqualTo(0.95);
          assertThat(reads.fail()).as("failed reads: %s", reads.errors()).isZero();
          report.line("```\n%s```", cluster.kubectl("-n", cluster.ns, "get", "bcp").output());
          summary.add(
              String.format(
                  "steady state: aggregate data hit ratio %s; per pod %s",
                  Report.ratio(c.getHitRatio()),
                  p.getStatus().getRegionServers().stream()
                      .map(
                          r ->
                              r.getPod().replace(RS + "-", "rs")
                                  + "="
                                  + Report.ratio(r.getHitRatio()))
                      .toList()));
        });
  }

  @Test
  @Order(4)
  void specChangeRollsOneAtATimeWithTheCacheKept() {
    step(
        "4. tuning.writerThreads 3 -> 4: one pod at a time, caches kept, no failed reads",
        () -> {
          RollObserver roll = observeRoll("writerThreads 3 (HBase default) -> 4");
          cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(4)));
          RollMeasurement m = record(roll.awaitDone());
          assertOneAtATimeWithTheCacheKept(m);
          // the first roll with data: the drain targets have never held these regions (reported,
          // not asserted)
          assertEveryPodHomeWithin(m);
        });
  }

  static long bytes(String quantity) {
    return Quantity.getAmountInBytes(new Quantity(quantity)).longValue();
  }
}
