package dev.hbase.cache.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.spec.TargetRef;
import dev.hbase.cache.api.v1alpha1.spec.WarmGate;
import dev.hbase.cache.api.v1alpha1.status.CacheStatus;
import dev.hbase.cache.api.v1alpha1.status.ClusterSeen;
import dev.hbase.cache.api.v1alpha1.status.CrashStatus;
import dev.hbase.cache.api.v1alpha1.status.Evidence;
import dev.hbase.cache.api.v1alpha1.status.PlanStatus;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.Recommendation;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class PolicyMetricsTest {

  private static final String L = "namespace=\"hbase\",policy=\"pf\",statefulset=\"hbase-rs\"";

  static BlockCachePolicy policy(String ns, String name, BlockCachePolicyStatus status) {
    BlockCachePolicy p = new BlockCachePolicy();
    p.setMetadata(new ObjectMetaBuilder().withNamespace(ns).withName(name).build());
    BlockCachePolicySpec spec = new BlockCachePolicySpec();
    spec.setMode(CacheMode.PersistentFile);
    TargetRef t = new TargetRef();
    t.setName("hbase-rs");
    spec.setTargetRef(t);
    spec.setRollout(new RolloutSpec().setWarmGate(new WarmGate().setMinHitRatio(0.9)));
    p.setSpec(spec);
    p.setStatus(status);
    return p;
  }

  static BlockCachePolicyStatus rolling() {
    BlockCachePolicyStatus s = new BlockCachePolicyStatus();
    s.getConditions().add(new ConditionBuilder().withType("Ready").withStatus("False").build());
    s.setPlan(new PlanStatus().setMode("PersistentFile").setConfigHash("not-the-revision"));
    s.setCache(
        new CacheStatus()
            .setHitRatio(0.9875)
            .setL1HitRatio(0.5)
            .setL2HitRatio(0.99)
            .setCumulativeHitRatio(0.97)
            .setSizeBytes(3L << 30)
            .setUsedBytes(1L << 30)
            .setEvictions(12L)
            .setFailedInsertions(3L));
    RolloutStatus r =
        new RolloutStatus()
            .setPhase(RolloutStatus.Phase.Rolling)
            .setRevision("abc")
            .setTotal(3)
            .setUpdated(1)
            .setCurrent(new RollSummary().setCachedReadRatio(0.995))
            .setLastRoll(
                new RollSummary()
                    .setSeconds(58L)
                    .setCachedReadRatio(0.9999)
                    .setRestarts(3)
                    .setColdRestarts(0)
                    .setSlowestPodSeconds(14.9)
                    .setFinishedAt("2026-11-23T10:00:00Z"));
    r.getInFlight().add(new PodRoll().setPod("hbase-rs-1").setStep(PodRoll.Step.Reloading));
    // the roll switched the balancer off and holds rs-2's old instance drained, 3 regions away
    r.setBalancerWasOn(true);
    r.getInFlight()
        .add(
            new PodRoll()
                .setPod("hbase-rs-2")
                .setStep(PodRoll.Step.Draining)
                .setOldServer("hbase-rs-2.hbase-rs.hbase.svc.cluster.local,16020,7")
                .setRegions(List.of("a", "b", "c")));
    r.setCluster(
        new ClusterSeen()
            .setBalancerOn(false)
            .setDecommissioned(List.of("hbase-rs-2.hbase-rs.hbase.svc.cluster.local,16020,7"))
            .setSince("2026-11-23T10:00:00Z"));
    s.setRollout(r);
    s.getRegionServers()
        .add(
            new RegionServerStatus()
                .setPod("hbase-rs-0")
                .setReady(true)
                .setConfigHash("abc")
                .setHitRatio(1.0)
                .setL2UsedBytes(100L)
                .setEvictions(12L)
                .setFailedInsertions(0L)
                .setRetainedFraction(1.0));
    s.getRegionServers()
        .add(new RegionServerStatus().setPod("hbase-rs-1").setReady(false).setConfigHash("old"));
    s.setRecommendation(
        new Recommendation()
            .setMode("PersistentFile")
            .setBucketCache("2560Mi")
            .setDiffers(true)
            .setEvidence(new Evidence().setWorkingSetBytes(2L << 30)));
    return s;
  }

  @Test
  void aRollingPolicysFiguresAreItsStatus() {
    String text = PolicyMetrics.render(List.of(policy("hbase", "pf", rolling())));

    assertThat(text.lines())
        .contains(
            "hbase_cache_policy_info{" + L + ",mode=\"PersistentFile\"} 1",
            "hbase_cache_condition{" + L + ",type=\"Ready\",status=\"True\"} 0",
            "hbase_cache_condition{" + L + ",type=\"Ready\",status=\"False\"} 1",
            "hbase_cache_hit_ratio{" + L + "} 0.9875",
            "hbase_cache_expected_hit_ratio{" + L + "} 0.9",
            "hbase_cache_capacity_bytes{" + L + "} 3221225472",
            "hbase_cache_roll_phase{" + L + ",phase=\"Rolling\"} 1",
            "hbase_cache_roll_phase{" + L + ",phase=\"Idle\"} 0",
            "hbase_cache_roll_pods{" + L + "} 3",
            "hbase_cache_roll_pods_updated{" + L + "} 1",
            "hbase_cache_roll_pods_in_flight{" + L + "} 2",
            "hbase_cache_roll_pod_step{" + L + ",pod=\"hbase-rs-1\",step=\"Reloading\"} 1",
            "hbase_cache_roll_pod_step{" + L + ",pod=\"hbase-rs-1\",step=\"Draining\"} 0",
            "hbase_cache_roll_cached_read_ratio{" + L + "} 0.995",
            "hbase_cache_last_roll_duration_seconds{" + L + "} 58",
            "hbase_cache_last_roll_cached_read_ratio{" + L + "} 0.9999",
            "hbase_cache_last_roll_slowest_pod_seconds{" + L + "} 14.9",
            "hbase_cache_last_roll_finish_timestamp_seconds{" + L + "} 1795428000",
            "hbase_cache_regionserver_ready{" + L + ",pod=\"hbase-rs-0\"} 1",
            "hbase_cache_regionserver_ready{" + L + ",pod=\"hbase-rs-1\"} 0",
            "hbase_cache_regionserver_up_to_date{" + L + ",pod=\"hbase-rs-0\"} 1",
            "hbase_cache_regionserver_up_to_date{" + L + ",pod=\"hbase-rs-1\"} 0",
            "hbase_cache_regionserver_hit_ratio{" + L + ",pod=\"hbase-rs-0\"} 1.0",
            "hbase_cache_regionserver_retained_ratio{" + L + ",pod=\"hbase-rs-0\"} 1.0",
            "hbase_cache_regionserver_evictions_total{" + L + ",pod=\"hbase-rs-0\"} 12",
            "hbase_cache_regionserver_failed_insertions_total{" + L + ",pod=\"hbase-rs-0\"} 0",
            "hbase_cache_recommendation_info{" + L + ",mode=\"PersistentFile\",differs=\"true\"} 1",
            "hbase_cache_recommended_l2_bytes{" + L + "} 2684354560",
            "hbase_cache_recommendation_working_set_bytes{" + L + "} 2147483648",
            "# TYPE hbase_cache_regionserver_evictions_total counter",
            "# TYPE hbase_cache_hit_ratio gauge");
    // a figure the status does not have is no series (not a 0 that would read as a fact)
    assertThat(text)
        .doesNotContain("hbase_cache_regionserver_hit_ratio{" + L + ",pod=\"hbase-rs-1\"}")
        .doesNotContain("hbase_cache_regionserver_evictions_total{" + L + ",pod=\"hbase-rs-1\"}");
    // status.cache's evictions and failed insertions, summed over the Ready pods, are no series:
    // the sum drops whenever one restarts (aRegionServerRestartLowersNoCounterButThatPodsOwn)
    assertThat(text)
        .doesNotContain("hbase_cache_evictions_total", "hbase_cache_failed_insertions_total");
    assertWellFormed(text);
  }

  /**
   * What a roll changed in HBase: what it owes back (the balancer, the servers it holds, the
   * regions away) beside HBase as last seen; once given back, 0s, and a mark the roll does not hold
   * (an administrator's, or one left behind) shows as a decommissioned server beyond those held.
   */
  @Test
  void whatARollOwesHBaseIsBesideHBaseAsLastSeen() {
    String text = PolicyMetrics.render(List.of(policy("hbase", "pf", rolling())));
    assertThat(text.lines())
        .contains(
            "hbase_cache_roll_balancer_owed{" + L + "} 1",
            "hbase_cache_roll_servers_held{" + L + "} 1",
            "hbase_cache_roll_regions_away{" + L + "} 3",
            "hbase_cache_hbase_balancer_on{" + L + "} 0",
            "hbase_cache_hbase_decommissioned_servers{" + L + "} 1",
            "hbase_cache_hbase_servers_left_decommissioned{" + L + "} 0",
            "hbase_cache_hbase_seen_since_timestamp_seconds{" + L + "} 1795428000");
    assertWellFormed(text);

    BlockCachePolicyStatus after = rolling();
    RolloutStatus r = after.getRollout();
    r.setBalancerWasOn(null).setPhase(RolloutStatus.Phase.Idle);
    r.getInFlight().clear();
    r.setCluster(
        new ClusterSeen()
            .setBalancerOn(true)
            .setDecommissioned(List.of("hbase-rs-0.hbase-rs.hbase.svc.cluster.local,16020,1"))
            .setSince("2026-11-23T10:05:00Z"));
    assertThat(PolicyMetrics.render(List.of(policy("hbase", "pf", after))).lines())
        .contains(
            "hbase_cache_roll_balancer_owed{" + L + "} 0",
            "hbase_cache_roll_servers_held{" + L + "} 0",
            "hbase_cache_roll_regions_away{" + L + "} 0",
            "hbase_cache_hbase_balancer_on{" + L + "} 1",
            "hbase_cache_hbase_decommissioned_servers{" + L + "} 1",
            "hbase_cache_hbase_servers_left_decommissioned{" + L + "} 1");

    // never asked (no status.rollout.cluster): no HBase series, not a 0 that would read as a fact
    r.setCluster(null);
    assertThat(PolicyMetrics.render(List.of(policy("hbase", "pf", after))))
        .doesNotContain("hbase_cache_hbase_balancer_on", "hbase_cache_hbase_decommissioned");
  }

  @Test
  void twoPoliciesShareEachFamilyOnceAndAPolicyWithoutStatusOnlyItsSpec() {
    String text =
        PolicyMetrics.render(
            List.of(
                policy("b", "second", rolling()),
                policy("a", "first", rolling()),
                policy("a", "new", null)));

    assertThat(text.lines().filter(l -> l.equals("# TYPE hbase_cache_hit_ratio gauge"))).hasSize(1);
    List<String> hits = text.lines().filter(l -> l.startsWith("hbase_cache_hit_ratio{")).toList();
    assertThat(hits).hasSize(2);
    assertThat(hits.get(0)).contains("namespace=\"a\",policy=\"first\"");
    assertThat(text)
        .contains(
            "hbase_cache_policy_info{namespace=\"a\",policy=\"new\",statefulset=\"hbase-rs\",mode=\"PersistentFile\"} 1");
    // without a status: what the spec says, nothing else
    assertThat(text.lines().filter(l -> l.contains("policy=\"new\"")))
        .extracting(l -> l.substring(0, l.indexOf('{')))
        .containsExactlyInAnyOrder("hbase_cache_policy_info", "hbase_cache_expected_hit_ratio");
    assertWellFormed(text);
  }

  /**
   * The chart's dashboard and alerts query only what exists: each hbase_cache_* name they use is a
   * family rendered here; every other name belongs to a source another test checks (operator_sdk_*:
   * ObservabilityIT on a live /metrics; HBase's server_* and jvm_metrics_*: hbase-it's
   * PrometheusEndpointIT on a real RegionServer).
   */
  @Test
  void everyOperatorFigureTheChartQueriesIsRendered() {
    Set<String> names = ChartQueries.metricNames();
    assertThat(names)
        .contains("hbase_cache_hit_ratio", "hbase_cache_roll_pod_step", "server_read_request_count")
        .allMatch(
            n ->
                n.startsWith("hbase_cache_")
                    || n.startsWith("operator_sdk_")
                    || n.startsWith("server_")
                    || n.startsWith("jvm_metrics_"),
            "a name from a known exporter");
    Set<String> families =
        PolicyMetrics.render(List.of(policy("hbase", "pf", rolling())))
            .lines()
            .filter(l -> l.startsWith("# TYPE "))
            .map(l -> l.split(" ")[2])
            .collect(java.util.stream.Collectors.toSet());
    assertThat(names.stream().filter(n -> n.startsWith("hbase_cache_")))
        .isNotEmpty()
        .allMatch(families::contains, "rendered by PolicyMetrics");
  }

  /**
   * The status of a policy whose three RegionServers counted {@code evictions[i]} and {@code
   * failed[i]} since each started, with the cluster figures as {@link MetricsCollector} writes
   * them: summed over the Ready ones. A pod that is not Ready keeps its row's last figures (the
   * collector does not scrape it and leaves the row as it was).
   */
  static BlockCachePolicyStatus healthy(long[] evictions, long[] failed, boolean[] ready) {
    BlockCachePolicyStatus s = new BlockCachePolicyStatus();
    long e = 0;
    long f = 0;
    for (int i = 0; i < evictions.length; i++) {
      s.getRegionServers()
          .add(
              new RegionServerStatus()
                  .setPod("hbase-rs-" + i)
                  .setReady(ready[i])
                  .setEvictions(evictions[i])
                  .setFailedInsertions(failed[i]));
      if (ready[i]) {
        e += evictions[i];
        f += failed[i];
      }
    }
    s.setCache(new CacheStatus().setHitRatio(0.99).setEvictions(e).setFailedInsertions(f));
    return s;
  }

  /** Series to value, the counters' only (TYPE counter). */
  static java.util.Map<String, Double> counters(BlockCachePolicyStatus status) {
    String text = PolicyMetrics.render(List.of(policy("hbase", "pf", status)));
    assertWellFormed(text);
    Set<String> counterFamilies =
        text.lines()
            .filter(l -> l.startsWith("# TYPE ") && l.endsWith(" counter"))
            .map(l -> l.split(" ")[2])
            .collect(java.util.stream.Collectors.toSet());
    java.util.Map<String, Double> out = new java.util.TreeMap<>();
    for (String line : text.lines().toList()) {
      Matcher m = SAMPLE.matcher(line);
      if (m.matches() && counterFamilies.contains(m.group(1))) {
        out.put(m.group(1) + "{" + m.group(2) + "}", Double.parseDouble(m.group(3)));
      }
    }
    return out;
  }

  /**
   * A roll restarts hbase-rs-1 while the cache is healthy: it goes down (not Ready, its row
   * unchanged), then comes back with its counters at 0 while the others went on counting. No
   * counter series goes down but that pod's own, and only on its restart: Prometheus reads any drop
   * as a reset, and increase() would count the whole rest again (a sum over the Ready pods dropped
   * by the pod's share on each restart, and already while it was not Ready).
   */
  @Test
  void aRegionServerRestartLowersNoCounterButThatPodsOwn() {
    boolean[] allReady = {true, true, true};
    var running = counters(healthy(new long[] {1000, 700, 500}, new long[] {30, 20, 10}, allReady));
    var down =
        counters(
            healthy(
                new long[] {1010, 700, 505},
                new long[] {30, 20, 10},
                new boolean[] {true, false, true}));
    var restarted = counters(healthy(new long[] {1020, 0, 510}, new long[] {30, 0, 10}, allReady));

    assertThat(running).isNotEmpty();
    neverLower(running, down, null, "while hbase-rs-1 is not Ready");
    neverLower(down, restarted, "hbase-rs-1", "after hbase-rs-1 restarted");
    neverLower(
        running, restarted, "hbase-rs-1", "from before the roll to after hbase-rs-1's restart");
    // every counter is one RegionServer's: a pod label, nothing summed over pods
    assertThat(running.keySet()).allMatch(k -> k.contains(",pod=\"hbase-rs-"), "a pod's own");
    // the restarted pod's own series reset, as its RegionServer's counters did
    assertThat(restarted)
        .containsEntry(
            "hbase_cache_regionserver_failed_insertions_total{" + L + ",pod=\"hbase-rs-1\"}", 0.0);
  }

  /**
   * Every series of {@code before} is in {@code after}, not lower, but those of pod {@code reset}.
   */
  static void neverLower(
      java.util.Map<String, Double> before,
      java.util.Map<String, Double> after,
      String reset,
      String when) {
    before.forEach(
        (series, v) -> {
          if (reset == null || !series.contains("pod=\"" + reset + "\"")) {
            assertThat(after.get(series))
                .as("%s %s", series, when)
                .isNotNull()
                .isGreaterThanOrEqualTo(v);
          }
        });
  }

  @Test
  void theLastCrashIsTwoGaugesAndItsUnavailableTimeOnlyOnceItsRegionsServe() {
    BlockCachePolicyStatus s = new BlockCachePolicyStatus();
    CrashStatus c =
        new CrashStatus()
            .setPod("hbase-rs-2")
            .setReason("OOMKilled")
            .setTerminatedAt("2026-11-28T15:03:05Z")
            .setPendingRegions(List.of("a", "b"));
    s.setLastCrash(c);
    String crash = L + ",pod=\"hbase-rs-2\",reason=\"OOMKilled\"";

    String open = PolicyMetrics.render(List.of(policy("hbase", "pf", s)));
    assertThat(open.lines())
        .contains("hbase_cache_last_crash_timestamp_seconds{" + crash + "} 1795878185");
    assertThat(open).doesNotContain("hbase_cache_last_crash_regions_unavailable_seconds{");

    c.setPendingRegions(null).setRegionsUnavailableSeconds(1.4);
    String served = PolicyMetrics.render(List.of(policy("hbase", "pf", s)));
    assertThat(served.lines())
        .contains("hbase_cache_last_crash_regions_unavailable_seconds{" + crash + "} 1.4");
    assertWellFormed(served);
  }

  @Test
  void labelValuesAreEscaped() {
    assertThat(PolicyMetrics.label("reason", "a \"b\"\\c\nd"))
        .isEqualTo("reason=\"a \\\"b\\\"\\\\c\\nd\"");
  }

  @Test
  void noPoliciesNoText() {
    assertThat(PolicyMetrics.render(List.of())).isEmpty();
  }

  private static final Pattern SAMPLE =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\{([^}]*)\\} (\\S+)");

  /**
   * The text exposition format as Prometheus parses it: each family's HELP and TYPE once, before
   * its samples, all its samples together, no series twice, numbers that parse.
   */
  static void assertWellFormed(String text) {
    Set<String> typed = new HashSet<>();
    Set<String> series = new HashSet<>();
    List<String> order = new ArrayList<>();
    String current = null;
    for (String line : text.lines().toList()) {
      if (line.startsWith("# HELP ")) {
        continue;
      }
      if (line.startsWith("# TYPE ")) {
        current = line.split(" ")[2];
        assertThat(typed.add(current)).as("TYPE twice: %s", current).isTrue();
        assertThat(line.split(" ")[3]).isIn("gauge", "counter");
        order.add(current);
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      assertThat(m.matches()).as("a sample line: %s", line).isTrue();
      assertThat(m.group(1)).as("sample under its family's TYPE").isEqualTo(current);
      assertThat(series.add(m.group(1) + "{" + m.group(2) + "}"))
          .as("series twice: %s", line)
          .isTrue();
      Double.parseDouble(m.group(3));
      if (current.endsWith("_total")) {
        assertThat(text).contains("# TYPE " + current + " counter");
      }
    }
    assertThat(order).isNotEmpty();
  }
}
