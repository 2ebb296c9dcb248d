package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * The roller's state. It is the roll's only memory: a restarted or failed-over operator reads it
 * and continues where the previous one stopped.
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RolloutStatus {
  public enum Phase {
    Idle,
    Rolling,
    Paused,
    Blocked
  }

  @JsonPropertyDescription(
      "Idle: every pod runs the revision. Rolling: pods are being restarted. Paused:"
          + " spec.rollout.paused with pods still to restart. Blocked: the roll cannot go on"
          + " (message and the Degraded condition say why).")
  private Phase phase;

  /** The revision being rolled out (see the description: not only the config hash). */
  @JsonPropertyDescription(
      "The revision being rolled out: a hash of the plan, the derived hbase-site files and the"
          + " restart annotation. A pod whose cache.hbase.dev/config-hash differs is out of date.")
  private String revision;

  @JsonPropertyDescription("Pods that run the revision and are not being restarted.")
  private Integer updated;

  @JsonPropertyDescription("The StatefulSet's replicas (a missing pod counts).")
  private Integer total;

  /** "updated/total", for kubectl get. */
  @JsonPropertyDescription("updated/total, for kubectl get.")
  private String progress;

  /** The pod(s) being restarted, comma-separated. */
  @JsonPropertyDescription("The pods being restarted, comma-separated.")
  private String currentPod;

  @JsonPropertyDescription("When the roll under way started (RFC 3339). Absent when Idle.")
  private String startedAt;

  @JsonPropertyDescription(
      "What the roll waits for, or why it is paused or blocked. Absent when Idle.")
  private String message;

  /** Balancer state to restore when the roll ends (DrainAndReload switches it off). */
  @JsonPropertyDescription(
      "Whether the HBase balancer was on before the roll's first drain: a draining roll switches"
          + " it off (back on while blocked or paused) and restores it when it ends.")
  private Boolean balancerWasOn;

  /**
   * A drain that did not finish within podReadyTimeout gave the server its regions back and cleared
   * its mark; no pod starts a restart before this time (then the drain is tried again).
   */
  @JsonPropertyDescription(
      "After a drain that did not finish within podReadyTimeout (the server got its regions back):"
          + " no pod starts a restart before this time (RFC 3339), then the drain is tried again."
          + " A spec change retries at once.")
  private String retryAt;

  /**
   * Since when the roll has waited between pods (none in flight, pods still to restart) with the
   * balancer it switched off; past a bound the balancer goes back on until the next pod starts.
   */
  @JsonPropertyDescription(
      "Since when (RFC 3339) the roll has waited between pods, none in flight, with the balancer"
          + " it switched off: 5 minutes on (one HBase balancer period), the balancer goes back on"
          + " until the next pod starts its drain.")
  private String waitingSince;

  /** When the roll switched the balancer back on in this wait between pods: once per wait. */
  @JsonPropertyDescription(
      "When (RFC 3339) the roll switched the balancer back on in its wait between pods: once per"
          + " wait, so a balancer an administrator turns off meanwhile stays off.")
  private String balancerBackAt;

  /** HBase's balancer and decommission marks as the operator last saw them. */
  @JsonPropertyDescription(
      "HBase's balancer switch and its decommissioned servers as the operator last saw them, with"
          + " the step's own switches and marks applied: what a roll changes in HBase, for the"
          + " metrics and alerts on what is not given back.")
  private ClusterSeen cluster;

  /** The roll under way so far (moved to lastRoll when it finishes). */
  @JsonPropertyDescription("The roll under way so far (moved to lastRoll when it finishes).")
  private RollSummary current;

  /** The last finished roll. */
  @JsonPropertyDescription(
      "The last finished roll: duration, restarts, cold restarts, the slowest pod and the share"
          + " of reads served from cache meanwhile.")
  private RollSummary lastRoll;

  /** The pods being restarted, at most maxUnavailable. */
  @JsonPropertyDescription(
      "What happens to the cache volume of a pod removed by a scale-down: Retain (kept, and used"
          + " again when the StatefulSet scales back up) or Delete, as the StatefulSet's"
          + " persistentVolumeClaimRetentionPolicy.whenScaled says (Retain when unset). Its regions"
          + " are moved to the other servers before it stops either way.")
  private String cacheVolumesWhenScaled;

  @JsonPropertyDescription("The pods being restarted (at most maxUnavailable), one entry each.")
  private List<PodRoll> inFlight = new ArrayList<>();

  @JsonPropertyDescription(
      "Pods a scale-down removed while their cache volumes are kept (cacheVolumesWhenScaled"
          + " Retain), with the regions they served: when the StatefulSet scales up again and a pod"
          + " of that name returns on its kept cache, those regions are sent back to it, then the"
          + " warm gate, as after a restart.")
  private List<PodRoll> scaledDown;
}
