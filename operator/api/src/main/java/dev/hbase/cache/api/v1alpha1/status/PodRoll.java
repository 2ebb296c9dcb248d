package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;
import lombok.Data;
import lombok.experimental.Accessors;

/** One pod's restart in progress. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PodRoll {
  public enum Step {
    /**
     * Decommissioned (no offload) and its regions sent to the drain targets (hbase:meta first,
     * alone); waiting for them to leave.
     */
    Draining,
    /** Recorded before the delete, so a resumed operator never deletes the successor. */
    Deleting,
    /** Waiting for the new pod to be Ready and its RegionServer registered and reporting. */
    WaitingReady,
    /** Recommissioned with its old regions; waiting for every one to be back. */
    Reloading,
    /** Waiting for the cache to come back (retained bytes, hit ratio). */
    WarmGate
  }

  @JsonPropertyDescription("The pod being restarted.")
  private String pod;

  /** UID of the pod instance to delete (delete precondition). */
  @JsonPropertyDescription(
      "UID of the pod instance to delete (the delete's precondition: never its successor).")
  private String uid;

  @JsonPropertyDescription(
      "Draining: its regions are moved off the server. Deleting: the pod is being deleted."
          + " WaitingReady: waiting for the new pod's RegionServer to register and report (and,"
          + " without a drain, for the pod to be Ready). Reloading:"
          + " its regions are sent back. WarmGate: waiting for its cache to come back"
          + " (rollout.warmGate).")
  private Step step;

  @JsonPropertyDescription(
      "When the step started (RFC 3339), moved on by any HBase master outage during it; the"
          + " step's timeout counts from here.")
  private String stepStartedAt;

  /**
   * Since when the HBase master has not answered during this step (null while it answers): the time
   * until it answers again does not count against the step's timeout.
   */
  @JsonPropertyDescription(
      "Since when the HBase master has not answered during this step (RFC 3339; absent while it"
          + " answers). The outage does not count against the step's timeout.")
  private String masterUnreachableSince;

  /** Why the pod goes first: Stuck, Unready, or null for a ready pod. */
  @JsonPropertyDescription(
      "Why the pod is restarted, when not only for the policy's revision: \"Stuck: \" and why,"
          + " Unready, or \"pod template changed outside the policy\".")
  private String reason;

  /**
   * Set when the pod was not deleted by the roll but by someone else (a delete, an eviction, a
   * scale-down): what stopped it. Its regions are moved off it warm while its preStop hook waits,
   * and sent back when a pod of the same ordinal returns. {@code ContainerRestart}: a RegionServer
   * restarted in its pod, whose cached regions are sent back ({@code Homecomings}).
   */
  @JsonPropertyDescription(
      "Set when someone else stopped the pod (not the roll): the cause, from its DisruptionTarget"
          + " condition (EvictionByEvictionAPI, PreemptionByScheduler, DeletionByTaintManager, ...),"
          + " Deleted for a plain delete, ScaledDown for a pod at or above the replicas. Its regions"
          + " are moved to where their blocks are cached before it stops, and sent back when a pod"
          + " of the same ordinal returns. ContainerRestart: its RegionServer restarted in the same"
          + " pod (an OOM kill, a crash, SIGKILL; nothing ran before it stopped), and the regions"
          + " its cache holds are sent back to it.")
  private String stoppedBy;

  /** The RegionServer before the restart: host,port,startcode. */
  @JsonPropertyDescription(
      "The RegionServer before the restart (host,port,startcode). Absent when it was not drained.")
  private String oldServer;

  /** Encoded names of the regions it served before the drain (hbase:meta excluded). */
  @JsonPropertyDescription(
      "Encoded names of the regions it served before the drain (hbase:meta excluded): sent back"
          + " to it after the restart.")
  private List<String> regions = new ArrayList<>();

  /** L2 used bytes before the restart. */
  @JsonPropertyDescription(
      "L2 bytes in use before the restart (0 when HBase drops the L2 at start; absent when"
          + " unknown): what the warm gate's retained fraction is measured against.")
  private Long l2UsedBytesBefore;

  /** The RegionServer after the restart. */
  @JsonPropertyDescription("The new RegionServer instance (host,port,startcode).")
  private String newServer;

  @JsonPropertyDescription(
      "When the new RegionServer instance was registered and reporting (RFC 3339).")
  private String readyAt;

  /** When the operator deleted the pod. */
  @JsonPropertyDescription("When the operator deleted the pod (RFC 3339).")
  private String deletedAt;

  /** When every region the pod had was back on it (the warm gate started). */
  @JsonPropertyDescription(
      "When every region the pod had was back on it and the warm gate started (RFC 3339).")
  private String homeAt;
}
