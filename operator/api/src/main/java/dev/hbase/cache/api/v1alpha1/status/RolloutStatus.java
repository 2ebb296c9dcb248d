package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import lombok.Data;
import lombok.experimental.Accessors;
import java.util.ArrayList;
import java.util.List;

/**
 * The roller's state. It is the only memory of a roll: a restarted or failed-over operator reads
 * it and continues where the previous one stopped.
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

  private Phase phase;
  /** The config hash being rolled out. */
  private String revision;
  private Integer updated;
  private Integer total;
  /** "updated/total", for kubectl get. */
  private String progress;
  /** The pod being restarted, if any. */
  private String currentPod;
  /** Step of the current pod: Draining, Deleting, WaitingReady, Reloading, WarmGate. */
  private String step;
  private String stepStartedAt;
  private String startedAt;
  private String message;
  /** Before the restart of currentPod: its RegionServer name (host,port,startcode). */
  private String oldServer;
  /** Before the restart of currentPod: encoded names of its regions. */
  private List<String> regions = new ArrayList<>();
  /** Before the restart of currentPod: its L2 used bytes. */
  private Long l2UsedBytesBefore;
  /** UID of the pod that was deleted, so a resumed roll never deletes its successor. */
  private String deletedPodUid;
  /** Balancer state to restore when the roll ends. */
  private Boolean balancerWasOn;
  /** Value of the restart annotation this roll satisfies. */
  private String restartRequest;
}
