package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
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
    /** Decommissioned with offload (hbase:meta first, alone); waiting for its regions to leave. */
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

  private String pod;

  /** UID of the pod instance to delete (delete precondition). */
  private String uid;

  private Step step;
  private String stepStartedAt;

  /**
   * Since when the HBase master has not answered during this step (null while it answers): the time
   * until it answers again does not count against the step's timeout.
   */
  private String masterUnreachableSince;

  /** Why the pod goes first: Stuck, Unready, or null for a ready pod. */
  private String reason;

  /** The RegionServer before the restart: host,port,startcode. */
  private String oldServer;

  /** Encoded names of the regions it served before the drain (hbase:meta excluded). */
  private List<String> regions = new ArrayList<>();

  /** L2 used bytes before the restart. */
  private Long l2UsedBytesBefore;

  /** The RegionServer after the restart. */
  private String newServer;

  private String readyAt;

  /** When the operator deleted the pod. */
  private String deletedAt;

  /** When every region the pod had was back on it (the warm gate started). */
  private String homeAt;
}
