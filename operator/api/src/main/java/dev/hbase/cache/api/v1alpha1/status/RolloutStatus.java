package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
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

  private Phase phase;

  /** The revision (config hash) being rolled out. */
  private String revision;

  private Integer updated;
  private Integer total;

  /** "updated/total", for kubectl get. */
  private String progress;

  /** The pod(s) being restarted, comma-separated. */
  private String currentPod;

  private String startedAt;
  private String message;

  /** Balancer state to restore when the roll ends (DrainAndReload switches it off). */
  private Boolean balancerWasOn;

  /**
   * A drain that did not finish within podReadyTimeout gave the server its regions back and cleared
   * its mark; no pod starts a restart before this time (then the drain is tried again).
   */
  private String retryAt;

  /** The roll under way so far (moved to lastRoll when it finishes). */
  private RollSummary current;

  /** The last finished roll. */
  private RollSummary lastRoll;

  /** The pods being restarted, at most maxUnavailable. */
  private List<PodRoll> inFlight = new ArrayList<>();
}
