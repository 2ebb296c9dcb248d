package dev.hbase.cache.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.hbase.cache.api.v1alpha1.status.CacheStatus;
import dev.hbase.cache.api.v1alpha1.status.CrashStatus;
import dev.hbase.cache.api.v1alpha1.status.PlanStatus;
import dev.hbase.cache.api.v1alpha1.status.Recommendation;
import dev.hbase.cache.api.v1alpha1.status.RecreateStatus;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;
import lombok.Data;
import lombok.experimental.Accessors;

@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BlockCachePolicyStatus {
  @JsonPropertyDescription("The metadata.generation of the policy the operator last reconciled.")
  private Long observedGeneration;

  /** Valid, Ready, Progressing, Degraded, CacheResetPending, Balanced, GiveBackPending. */
  @JsonPropertyDescription(
      "One condition per type. Valid: the policy plans for the container's memory limit (False:"
          + " nothing is applied, the message says why). Ready: every RegionServer runs the"
          + " planned cache. Progressing: a roll or a StatefulSet recreate is under way."
          + " Degraded: something needs attention (a blocked roll, a failed reconcile, a cache"
          + " volume that cannot be given as planned). CacheResetPending: the next restarts drop"
          + " the persisted caches. Balanced: every Ready RegionServer serves the mean number of"
          + " regions within one (not judged while a server is in flight). GiveBackPending, on a"
          + " deleted policy only: kept by its finalizer until HBase is given back (the balancer"
          + " as the roll found it, no server left decommissioned); the message says what is"
          + " left.")
  private List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription(
      "The plan in force: what the planner made of the spec for the container's memory limit"
          + " (sizes, engine, hbase-site keys, JVM options).")
  private PlanStatus plan;

  @JsonPropertyDescription(
      "The roll's state: phase, progress, the pods being restarted and the figures of the"
          + " current and last roll. A restarted operator continues the roll from it.")
  private RolloutStatus rollout;

  @JsonPropertyDescription(
      "The HBase version the active HMaster reported when the operator last asked it (2.6.4,"
          + " 2.5.13-hadoop3), kept only from a cluster shown to be the policy's own (every live"
          + " RegionServer a pod of its namespace); absent until then. With spec.hbase.version"
          + " unset, the master keys of a PersistentFile policy that only HBase 2.6 has (the"
          + " CacheAwareLoadBalancer) are written only once this shows 2.6.")
  private String masterVersion;

  @JsonPropertyDescription(
      "Cache figures summed over all RegionServers, refreshed every metrics.interval: hit ratios"
          + " over the last interval and since start, capacity and use.")
  private CacheStatus cache;

  @JsonPropertyDescription(
      "Sizing advice (spec.autoTune): the settings the last complete window of evidence calls"
          + " for, and the window being gathered. Absent with autoTune mode Off.")
  private Recommendation recommendation;

  @JsonPropertyDescription("One row per RegionServer pod: readiness, revision and cache figures.")
  private List<RegionServerStatus> regionServers = new ArrayList<>();

  @JsonPropertyDescription(
      "The last RegionServer whose container the kubelet reported terminated (OOMKilled, an exit,"
          + " a failed liveness probe) while HBase still counted it live: what the kubelet said,"
          + " what the operator told HBase and when, and how long its regions did not serve.")
  private CrashStatus lastCrash;

  /** Set while the StatefulSet is recreated with the cache volume template (orphan delete). */
  @JsonPropertyDescription(
      "Set while the operator recreates the StatefulSet with the planned cache volume claim"
          + " template (an orphan delete: the pods keep running): the object it creates again.")
  private RecreateStatus recreate;
}
