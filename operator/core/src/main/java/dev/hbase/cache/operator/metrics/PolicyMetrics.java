package dev.hbase.cache.operator.metrics;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.CacheStatus;
import dev.hbase.cache.api.v1alpha1.status.ClusterSeen;
import dev.hbase.cache.api.v1alpha1.status.CrashStatus;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.Recommendation;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.plan.Sizes;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every policy's status as Prometheus gauges and counters on the operator's {@code /metrics} (text
 * exposition format 0.0.4), rendered at scrape time from the policies the operator watches: the
 * figures are the status's, no second bookkeeping. Names follow Prometheus conventions: {@code
 * hbase_cache_} prefix, the unit last ({@code _bytes}, {@code _seconds}, {@code _ratio}), {@code
 * _total} for counters; enumerations (roll phase, conditions, a pod's roll step) are one series per
 * value with 1 on the current one, as kube-state-metrics does. Every series carries {@code
 * namespace}, {@code policy} and {@code statefulset}; per-RegionServer series add {@code pod}.
 *
 * <p>Every counter is one RegionServer's own ({@code hbase_cache_regionserver_*_total}, with {@code
 * pod}): it goes down only when that RegionServer restarts, which Prometheus reads as the reset it
 * is. None is a sum over pods (such a sum drops whenever any one restarts, and {@code increase()}
 * counts the rest of it again); the cluster's figure is {@code sum by (namespace, policy)
 * (rate(...))} in PromQL.
 *
 * <p>Pure: {@link #render} turns policies into text. docs/operations/metrics.md lists the families.
 *
 * <p>Over ~400 lines (about 490): one small method per status section; they stay together so that
 * the families keep one order and one naming.
 */
public final class PolicyMetrics {
  private PolicyMetrics() {}

  static final String PREFIX = "hbase_cache_";

  private enum Type {
    gauge,
    counter
  }

  /** One metric family: its help, type and samples in the order added. */
  private static final class Family {
    final String name;
    final Type type;
    final String help;
    final List<String> samples = new ArrayList<>();

    Family(String name, Type type, String help) {
      this.name = name;
      this.type = type;
      this.help = help;
    }
  }

  /** The families in a fixed order, each once. */
  private static final class Out {
    final Map<String, Family> families = new LinkedHashMap<>();

    void add(String name, Type type, String help, String labels, Number value) {
      if (value == null) {
        return;
      }
      Family f = families.computeIfAbsent(name, n -> new Family(n, type, help));
      f.samples.add(PREFIX + name + "{" + labels + "} " + number(value));
    }

    String text() {
      StringBuilder b = new StringBuilder();
      for (Family f : families.values()) {
        b.append("# HELP ").append(PREFIX).append(f.name).append(' ').append(f.help).append('\n');
        b.append("# TYPE ").append(PREFIX).append(f.name).append(' ').append(f.type).append('\n');
        f.samples.forEach(s -> b.append(s).append('\n'));
      }
      return b.toString();
    }
  }

  /** The families of these policies, sorted by namespace and name so that a scrape is stable. */
  public static String render(Collection<BlockCachePolicy> policies) {
    Out out = new Out();
    policies.stream()
        .filter(p -> p.getSpec() != null && p.getSpec().getTargetRef() != null)
        .sorted(
            Comparator.comparing((BlockCachePolicy p) -> p.getMetadata().getNamespace())
                .thenComparing(p -> p.getMetadata().getName()))
        .forEach(p -> policy(out, p));
    return out.text();
  }

  private static void policy(Out out, BlockCachePolicy p) {
    String l =
        label("namespace", p.getMetadata().getNamespace())
            + ","
            + label("policy", p.getMetadata().getName())
            + ","
            + label("statefulset", p.getSpec().getTargetRef().getName());
    out.add(
        "policy_info",
        Type.gauge,
        "1 per policy; mode as planned (the spec's until a plan exists).",
        l + "," + label("mode", mode(p)),
        1);
    var rolloutSpec = p.getSpec().getRollout();
    out.add(
        "expected_hit_ratio",
        Type.gauge,
        "The policy's rollout.warmGate.minHitRatio, where set (the alert on hit_ratio compares).",
        l,
        rolloutSpec == null || rolloutSpec.getWarmGate() == null
            ? null
            : rolloutSpec.getWarmGate().getMinHitRatio());
    BlockCachePolicyStatus s = p.getStatus();
    if (s == null) {
      return;
    }
    for (Condition c : s.getConditions() == null ? List.<Condition>of() : s.getConditions()) {
      for (String v : List.of("True", "False", "Unknown")) {
        out.add(
            "condition",
            Type.gauge,
            "The policy's conditions (Valid, Ready, Progressing, Degraded, CacheResetPending, Balanced,"
                + " GiveBackPending): 1"
                + " on the current status.",
            l + "," + label("type", c.getType()) + "," + label("status", v),
            v.equals(c.getStatus()) ? 1 : 0);
      }
    }
    cache(out, l, s.getCache());
    rollout(out, l, s.getRollout());
    crash(out, l, s.getLastCrash());
    recommendation(out, l, s.getRecommendation());
    String planned = s.getRollout() == null ? null : s.getRollout().getRevision();
    for (RegionServerStatus r :
        s.getRegionServers() == null ? List.<RegionServerStatus>of() : s.getRegionServers()) {
      regionServer(out, l + "," + label("pod", r.getPod()), r, planned);
    }
  }

  private static void cache(Out out, String l, CacheStatus c) {
    if (c == null) {
      return;
    }
    out.add(
        "hit_ratio",
        Type.gauge,
        "Data-block reads served from cache over the last metrics interval, all RegionServers.",
        l,
        c.getHitRatio());
    out.add(
        "l1_hit_ratio", Type.gauge, "L1 (on-heap) hit ratio, last interval.", l, c.getL1HitRatio());
    out.add(
        "l2_hit_ratio",
        Type.gauge,
        "L2 (BucketCache) hit ratio, last interval.",
        l,
        c.getL2HitRatio());
    out.add(
        "cumulative_hit_ratio",
        Type.gauge,
        "Data-block reads served from cache since each RegionServer started.",
        l,
        c.getCumulativeHitRatio());
    out.add(
        "capacity_bytes",
        Type.gauge,
        "L1 + L2 capacity of the Ready RegionServers.",
        l,
        c.getSizeBytes());
    out.add(
        "used_bytes",
        Type.gauge,
        "L1 + L2 bytes in use, Ready RegionServers.",
        l,
        c.getUsedBytes());
    // No counters here: a sum over the Ready RegionServers drops whenever one restarts (or is
    // not Ready), which Prometheus takes for a counter reset and increase() then counts the whole
    // remaining sum again. The counters are per pod (regionServer below); a cluster-wide figure
    // is sum by (namespace, policy) (rate(...)) in PromQL.
  }

  private static void recommendation(Out out, String l, Recommendation r) {
    if (r == null || r.getMode() == null) {
      return;
    }
    out.add(
        "recommendation_info",
        Type.gauge,
        "1 per policy with sizing advice (status.recommendation): the recommended mode, and"
            + " differs=\"true\" when following it changes the spec.",
        l
            + ","
            + label("mode", r.getMode())
            + ","
            + label("differs", String.valueOf(Boolean.TRUE.equals(r.getDiffers()))),
        1);
    out.add(
        "recommended_l2_bytes",
        Type.gauge,
        "The recommended L2 (memory.bucketCache) per RegionServer; 0 for no L2.",
        l,
        r.getBucketCache() == null ? 0 : Sizes.parse(r.getBucketCache()));
    var e = r.getEvidence();
    out.add(
        "recommendation_working_set_bytes",
        Type.gauge,
        "The working set per RegionServer estimated over the advice's window.",
        l,
        e == null ? null : e.getWorkingSetBytes());
  }

  private static void rollout(Out out, String l, RolloutStatus r) {
    if (r == null) {
      return;
    }
    for (RolloutStatus.Phase ph : RolloutStatus.Phase.values()) {
      out.add(
          "roll_phase",
          Type.gauge,
          "The roll's phase: 1 on the current one.",
          l + "," + label("phase", ph.name()),
          ph == r.getPhase() ? 1 : 0);
    }
    out.add("roll_pods", Type.gauge, "RegionServer pods of the target.", l, r.getTotal());
    out.add(
        "roll_pods_updated",
        Type.gauge,
        "Pods running the current plan and pod template.",
        l,
        r.getUpdated());
    out.add(
        "roll_pods_in_flight",
        Type.gauge,
        "Pods the roll is restarting now.",
        l,
        r.getInFlight() == null ? 0 : r.getInFlight().size());
    for (PodRoll f : r.getInFlight() == null ? List.<PodRoll>of() : r.getInFlight()) {
      for (PodRoll.Step st : PodRoll.Step.values()) {
        out.add(
            "roll_pod_step",
            Type.gauge,
            "A pod the roll is restarting: 1 on its step (Draining, Deleting, WaitingReady,"
                + " Reloading, WarmGate).",
            l + "," + label("pod", f.getPod()) + "," + label("step", st.name()),
            st == f.getStep() ? 1 : 0);
      }
    }
    owed(out, l, r);
    RollSummary cur = r.getCurrent();
    if (cur != null) {
      out.add(
          "roll_cached_read_ratio",
          Type.gauge,
          "The roll under way: every RegionServer's data reads served from cache since it started.",
          l,
          cur.getCachedReadRatio());
    }
    RollSummary last = r.getLastRoll();
    if (last != null) {
      summary(out, l, last);
    }
  }

  /**
   * What a roll changed in HBase and owes back, beside HBase as the operator last saw it ({@code
   * status.rollout.cluster}): the alerts on a balancer left off and a mark left behind compare
   * them.
   */
  private static void owed(Out out, String l, RolloutStatus r) {
    out.add(
        "roll_balancer_owed",
        Type.gauge,
        "1 while a roll owes HBase its balancer back: it was on before the roll's first drain"
            + " (status.rollout.balancerWasOn), and the roll switches it on again when it ends.",
        l,
        Boolean.TRUE.equals(r.getBalancerWasOn()) ? 1 : 0);
    List<PodRoll> inFlight = r.getInFlight() == null ? List.of() : r.getInFlight();
    out.add(
        "roll_servers_held",
        Type.gauge,
        "RegionServers a roll or a stop holds decommissioned or may mark next: the old instance of"
            + " each pod in flight, recommissioned when its pod is back.",
        l,
        inFlight.stream().map(PodRoll::getOldServer).filter(x -> x != null).distinct().count());
    out.add(
        "roll_regions_away",
        Type.gauge,
        "Regions a roll or a stop moved off the pods in flight that are not home yet.",
        l,
        inFlight.stream()
            .filter(f -> f.getHomeAt() == null && f.getRegions() != null)
            .mapToLong(f -> f.getRegions().size())
            .sum());
    ClusterSeen c = r.getCluster();
    if (c == null) {
      return;
    }
    out.add(
        "hbase_balancer_on",
        Type.gauge,
        "1 when HBase's balancer is on, as the operator last saw it (status.rollout.cluster).",
        l,
        c.getBalancerOn() == null ? null : c.getBalancerOn() ? 1 : 0);
    List<String> marked = c.getDecommissioned() == null ? List.of() : c.getDecommissioned();
    out.add(
        "hbase_decommissioned_servers",
        Type.gauge,
        "The target's RegionServers marked decommissioned, whoever marked them, as the operator"
            + " last saw them.",
        l,
        marked.size());
    List<String> held = inFlight.stream().map(PodRoll::getOldServer).toList();
    out.add(
        "hbase_servers_left_decommissioned",
        Type.gauge,
        "Of those, the ones no roll or stop of the policy holds (not the old instance of a pod in"
            + " flight): a mark left behind, or an administrator's.",
        l,
        marked.stream().filter(m -> !held.contains(m)).count());
    out.add(
        "hbase_seen_since_timestamp_seconds",
        Type.gauge,
        "Since when HBase has shown the balancer and the marks so, at the roll steps that asked it"
            + " (Unix time).",
        l,
        epoch(c.getSince()));
  }

  private static void summary(Out out, String l, RollSummary s) {
    out.add(
        "last_roll_duration_seconds",
        Type.gauge,
        "The last finished roll, start to last pod warm.",
        l,
        s.getSeconds());
    out.add(
        "last_roll_cached_read_ratio",
        Type.gauge,
        "The last roll: every RegionServer's data reads during it served from cache (1 = the roll"
            + " cost the cache nothing).",
        l,
        s.getCachedReadRatio());
    out.add("last_roll_restarts", Type.gauge, "The last roll: pods restarted.", l, s.getRestarts());
    out.add(
        "last_roll_cold_restarts",
        Type.gauge,
        "The last roll: restarts whose cache did not come back within warmGate.timeout.",
        l,
        s.getColdRestarts());
    out.add(
        "last_roll_slowest_pod_seconds",
        Type.gauge,
        "The last roll: longest time from a pod's delete to all its regions back.",
        l,
        s.getSlowestPodSeconds());
    out.add(
        "last_roll_finish_timestamp_seconds",
        Type.gauge,
        "When the last roll finished (Unix time).",
        l,
        epoch(s.getFinishedAt()));
  }

  /** {@code status.lastCrash}: gauges of the last crash, as the status has them. */
  private static void crash(Out out, String l, CrashStatus c) {
    if (c == null) {
      return;
    }
    String cl = l + "," + label("pod", c.getPod()) + "," + label("reason", c.getReason());
    out.add(
        "last_crash_timestamp_seconds",
        Type.gauge,
        "When the last RegionServer container the kubelet reported terminated while HBase still"
            + " counted it live ended (Unix time; status.lastCrash).",
        cl,
        epoch(c.getTerminatedAt()));
    out.add(
        "last_crash_regions_unavailable_seconds",
        Type.gauge,
        "The last crash: seconds from the container's termination until all its regions served"
            + " again (no series while some do not).",
        cl,
        c.getRegionsUnavailableSeconds());
  }

  private static void regionServer(Out out, String l, RegionServerStatus r, String planned) {
    out.add(
        "regionserver_ready",
        Type.gauge,
        "1 when the RegionServer pod is Ready.",
        l,
        r.getReady() == null ? null : r.getReady() ? 1 : 0);
    out.add(
        "regionserver_up_to_date",
        Type.gauge,
        "1 when the pod carries the revision the roll targets (plan and restart annotation).",
        l,
        planned == null || r.getConfigHash() == null
            ? null
            : planned.equals(r.getConfigHash()) ? 1 : 0);
    out.add(
        "regionserver_hit_ratio",
        Type.gauge,
        "The pod's data-block hit ratio, last interval.",
        l,
        r.getHitRatio());
    out.add(
        "regionserver_l1_hit_ratio",
        Type.gauge,
        "The pod's L1 hit ratio, last interval.",
        l,
        r.getL1HitRatio());
    out.add(
        "regionserver_l2_hit_ratio",
        Type.gauge,
        "The pod's L2 hit ratio, last interval.",
        l,
        r.getL2HitRatio());
    out.add(
        "regionserver_cumulative_hit_ratio",
        Type.gauge,
        "The pod's data-block hit ratio since it started.",
        l,
        r.getCumulativeHitRatio());
    out.add(
        "regionserver_l2_used_bytes",
        Type.gauge,
        "The pod's L2 bytes in use.",
        l,
        r.getL2UsedBytes());
    out.add(
        "regionserver_evictions_total",
        Type.counter,
        "Blocks evicted from the pod's caches since its RegionServer started (resets with it).",
        l,
        r.getEvictions());
    out.add(
        "regionserver_failed_insertions_total",
        Type.counter,
        "Blocks the pod's L2 writer queues dropped since its RegionServer started (resets with"
            + " it).",
        l,
        r.getFailedInsertions());
    out.add(
        "regionserver_retained_ratio",
        Type.gauge,
        "After the pod's last restart by a roll: its L2 bytes back as a share of those before.",
        l,
        r.getRetainedFraction());
  }

  private static String mode(BlockCachePolicy p) {
    BlockCachePolicyStatus s = p.getStatus();
    if (s != null && s.getPlan() != null && s.getPlan().getMode() != null) {
      return s.getPlan().getMode();
    }
    return p.getSpec().getMode() == null ? "" : p.getSpec().getMode().name();
  }

  private static Long epoch(String instant) {
    try {
      return instant == null ? null : Instant.parse(instant).getEpochSecond();
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static String number(Number n) {
    if (n instanceof Double d) {
      return d.isNaN() ? "NaN" : d.isInfinite() ? (d > 0 ? "+Inf" : "-Inf") : Double.toString(d);
    }
    return n.toString();
  }

  /** {@code name="value"}, the value escaped as the exposition format wants. */
  static String label(String name, String value) {
    String v =
        value == null ? "" : value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    return name + "=\"" + v + "\"";
  }
}
