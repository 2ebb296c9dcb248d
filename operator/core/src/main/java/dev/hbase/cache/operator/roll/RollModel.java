package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.CrashStatus;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ServerId;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** What the roller reads and what it asks for. Plain data, no Kubernetes or HBase types. */
public final class RollModel {
  private RollModel() {}

  /** The encoded name of hbase:meta's only region. */
  public static final String META_REGION = "1588230740";

  /** The pod's live RegionServer, if registered. */
  public static java.util.Optional<ClusterSnapshot.ServerState> serverFor(
      ClusterSnapshot h, PodView pod) {
    return h.live().stream().filter(s -> pod.servesAs(s.id().host())).findFirst();
  }

  /**
   * One RegionServer pod as Kubernetes shows it.
   *
   * @param revision the pod's cache.hbase.dev/config-hash annotation (null: never configured)
   * @param stuck why the pod cannot serve at all (CrashLoopBackOff, ImagePullBackOff,
   *     Unschedulable, ...), or null
   * @param ip the pod IP, or null
   * @param missingClaimVolumes the pod lacks a volume for one of the StatefulSet's
   *     volumeClaimTemplates (it was created before the cache volume template was added). The
   *     StatefulSet controller tries to add such volumes to the live pod, which the API server
   *     refuses, and in OrderedReady mode it stops at the lowest such ordinal: no pod above it is
   *     re-created until that one has been deleted. Such pods are restarted first, lowest ordinal
   *     first.
   * @param stopCause why a terminating pod stops, as its {@code DisruptionTarget} condition says
   *     ({@code EvictionByEvictionAPI}, {@code PreemptionByScheduler}, {@code
   *     DeletionByTaintManager}, ...), else {@code Deleted}; null while the pod is not terminating
   * @param restartedInPlaceAt when the RegionServer container last started again in the same pod
   *     (its restart count above 0; a sidecar's restart is none: a crash, an OOM kill, a failed
   *     liveness probe; not a pod delete), null if none ever did. Its RegionServer may then serve
   *     none of the regions it caches ({@link Homecomings})
   * @param fqdn the pod's DNS name in the policy's namespace, {@code
   *     <pod>.<serviceName>.<namespace>.svc.<clusterDomain>} (lower case, {@link Zone#podName}),
   *     null when the StatefulSet names no service: then only its IP tells its RegionServer
   * @param lastTermination the RegionServer container's last termination as the kubelet reported it
   *     (its current state if terminated, else its last state), null if it never terminated in this
   *     pod or the container is not known by name: every RegionServer instance at this pod's host
   *     and port that started before it belonged to a container run that has ended ({@link
   *     Crashes})
   */
  public record PodView(
      String name,
      String uid,
      int ordinal,
      String revision,
      boolean ready,
      boolean terminating,
      String stuck,
      String ip,
      boolean missingClaimVolumes,
      boolean templateChanged,
      String stopCause,
      Instant restartedInPlaceAt,
      String fqdn,
      Termination lastTermination) {

    /** A pod whose RegionServer container never terminated in it. */
    public PodView(
        String name,
        String uid,
        int ordinal,
        String revision,
        boolean ready,
        boolean terminating,
        String stuck,
        String ip,
        boolean missingClaimVolumes,
        boolean templateChanged,
        String stopCause,
        Instant restartedInPlaceAt,
        String fqdn) {
      this(
          name,
          uid,
          ordinal,
          revision,
          ready,
          terminating,
          stuck,
          ip,
          missingClaimVolumes,
          templateChanged,
          stopCause,
          restartedInPlaceAt,
          fqdn,
          null);
    }

    /** A pod whose DNS name is not known: only its IP tells its RegionServer. */
    public PodView(
        String name,
        String uid,
        int ordinal,
        String revision,
        boolean ready,
        boolean terminating,
        String stuck,
        String ip,
        boolean missingClaimVolumes,
        boolean templateChanged,
        String stopCause,
        Instant restartedInPlaceAt) {
      this(
          name,
          uid,
          ordinal,
          revision,
          ready,
          terminating,
          stuck,
          ip,
          missingClaimVolumes,
          templateChanged,
          stopCause,
          restartedInPlaceAt,
          null);
    }

    /** A pod as the roller saw it before stops had a cause: a terminating one was "Deleted". */
    public PodView(
        String name,
        String uid,
        int ordinal,
        String revision,
        boolean ready,
        boolean terminating,
        String stuck,
        String ip,
        boolean missingClaimVolumes,
        boolean templateChanged) {
      this(
          name,
          uid,
          ordinal,
          revision,
          ready,
          terminating,
          stuck,
          ip,
          missingClaimVolumes,
          templateChanged,
          terminating ? "Deleted" : null,
          null,
          null);
    }

    /**
     * Whether the pod must be restarted to run the plan: its revision annotation differs, or it
     * runs an older pod template of the StatefulSet than the current one (changed by another
     * manager, e.g. {@code helm upgrade}: the operator restarts it through the roll).
     */
    public boolean outdated(String planRevision) {
      return templateChanged || !java.util.Objects.equals(revision, planRevision);
    }

    /**
     * Whether a RegionServer registered under {@code host} runs in this pod: its IP, or its DNS
     * name in the policy's namespace ({@link #fqdn}) with or without the cluster domain, with or
     * without a trailing dot, in any case. Never its bare name, nor a name that merely starts like
     * it: a bare {@code rs-1} names no namespace (any namespace's pod may be called so), and {@code
     * rs-1.hbase-regionserver.other.svc...} is another namespace's pod of the same name.
     */
    public boolean servesAs(String host) {
      if (host == null) {
        return false;
      }
      if (host.equals(ip)) {
        return true;
      }
      if (fqdn == null) {
        return false;
      }
      String h = Zone.normal(host);
      return h.equals(fqdn) || h.equals(Zone.withoutClusterDomain(fqdn));
    }
  }

  /**
   * A container's termination as the kubelet reported it ({@code ContainerStateTerminated}).
   *
   * @param reason OOMKilled, Error, Completed, ... (null if the kubelet gave none)
   * @param exitCode the exit code (137: SIGKILL, an OOM kill among others)
   * @param startedAt when the run that ended started (null if not reported)
   * @param finishedAt when it ended: the process was gone by then (second resolution, rounded down)
   */
  public record Termination(
      String reason, Integer exitCode, Instant startedAt, Instant finishedAt) {

    public Termination {
      java.util.Objects.requireNonNull(finishedAt, "finishedAt");
    }
  }

  /**
   * A fresh cache sample of a pod: L2 used bytes, its data-block hit ratio since start, and its L2
   * capacity (null: unknown or no L2).
   */
  public record CacheView(Long l2UsedBytes, Double hitRatioSinceStart, Long l2CapacityBytes) {}

  /**
   * The roll's knobs, from the spec and the plan.
   *
   * @param cacheReset the plan drops the persisted caches (CacheResetPending): the warm gate does
   *     not wait for a retained fraction that cannot come
   * @param plannedL2Bytes the plan's L2 capacity (0: none or unknown): HBase drops a persisted L2
   *     of another capacity at start, so a pod running another one comes back cold whatever the
   *     plan's history says (a policy new to the StatefulSet, a size changed outside the operator)
   */
  public record Settings(
      String revision,
      RolloutSpec.Strategy strategy,
      int maxUnavailable,
      boolean paused,
      Duration podReadyTimeout,
      Double minRetainedFraction,
      Double minHitRatio,
      Duration warmTimeout,
      boolean persistent,
      boolean cacheReset,
      long plannedL2Bytes) {}

  /**
   * What one roller step sees.
   *
   * @param pods the StatefulSet's pods that exist (ordinal below replicas)
   * @param replicas the StatefulSet's replicas: a pod that does not exist (being re-created, or not
   *     schedulable to create) is a RegionServer down all the same
   * @param leaving the StatefulSet's pods at or above replicas (a scale-down removes them, highest
   *     first): their regions go to the others before they stop, no region is drained to them, and
   *     they do not come back
   * @param zone the policy's namespace in DNS: HBase is sent nothing unless every live server of
   *     the cluster is a pod of it ({@link OwnCluster})
   * @param lastCrash {@code status.lastCrash} as the previous step left it, or null ({@link
   *     Crashes})
   */
  public record Input(
      Settings settings,
      List<PodView> pods,
      ClusterSnapshot hbase,
      Map<String, CacheView> caches,
      Instant now,
      int replicas,
      List<PodView> leaving,
      Zone zone,
      CrashStatus lastCrash,
      List<String> recordedMarks) {

    /**
     * {@code recordedMarks}: the servers the target's second record of the marks holds ({@code
     * controller.BalancerRecord}); those the state no longer holds are given back ({@link
     * Owed#orphanedMarks}).
     */
    public Input {
      recordedMarks = recordedMarks == null ? List.of() : List.copyOf(recordedMarks);
    }

    /** No crash recorded before, no record of marks beside the status. */
    public Input(
        Settings settings,
        List<PodView> pods,
        ClusterSnapshot hbase,
        Map<String, CacheView> caches,
        Instant now,
        int replicas,
        List<PodView> leaving,
        Zone zone) {
      this(settings, pods, hbase, caches, now, replicas, leaving, zone, null, List.of());
    }

    /** The target's pods: below the replicas, then those leaving. */
    public List<PodView> allPods() {
      return java.util.stream.Stream.concat(pods.stream(), leaving.stream()).toList();
    }

    /** Replicas without a pod. */
    public int missing() {
      return Math.max(0, replicas - pods.size());
    }
  }

  /** What the reconciler carries out for the roller. */
  public sealed interface Action {}

  public record SwitchBalancer(boolean on) implements Action {}

  /**
   * Marks the server decommissioned and moves each of its regions to the target chosen for it
   * ({@link DrainTargets}: where its blocks are cached), hbase:meta first and alone. Idempotent:
   * sent again for regions still there once nothing is in transition.
   */
  public record Drain(ServerId server, Map<String, ServerId> targets) implements Action {}

  /**
   * Sends {@code regions} back to the RegionServer now at {@code oldServer}'s host and port and
   * clears the old instance's decommission mark; moves stragglers. Idempotent.
   */
  public record Recommission(ServerId oldServer, List<String> regions) implements Action {}

  /**
   * A pod deleted or evicted by someone else, whose RegionServer is stopping: the roll moves its
   * regions off it warm (a {@link Drain} without the cluster gate: it goes down anyway) while its
   * preStop hook waits, and sends them back when a pod of the same ordinal returns. Recorded in
   * {@code status.rollout.inFlight} with the cause ({@link PodView#stopCause}).
   */
  public static boolean isStop(dev.hbase.cache.api.v1alpha1.status.PodRoll r) {
    return r.getStoppedBy() != null;
  }

  /**
   * Has HBase process exactly this RegionServer instance as dead now (a ServerCrashProcedure: its
   * regions reassigned at once) instead of after its ZooKeeper session timeout. Decided only when
   * the kubelet reported the pod's RegionServer container terminated after this instance started
   * ({@link Crashes}); carried out only if the instance is still listed live and does not answer as
   * itself.
   */
  public record ExpireServer(ServerId server, String pod) implements Action {}

  /** Deletes the pod only if it is still the instance with this UID. */
  public record DeletePod(String pod, String uid) implements Action {}

  /**
   * An event for the policy: Normal or Warning, its reason one of {@link EventReason} (sent as its
   * name).
   */
  public record Event(boolean warning, EventReason why, String message) {
    /** The reason as sent: the enum's name. */
    public String reason() {
      return why.name();
    }
  }

  /**
   * The reasons of the roller's events, each sent as its name. Tests, the kind suite and users'
   * alerts match on these names: a name here is part of the operator's interface
   * (docs/reference/reasons.md lists them). The controller's own reasons are {@code
   * controller.Reason}.
   */
  public enum EventReason {
    /** A roll to a new revision started (Normal). */
    RollStarted,
    /** Every pod at the revision, the roll is over (Normal). */
    RollFinished,
    /** The roll's next pod is drained and deleted (Normal). */
    RestartingPod,
    /** A pod back with its regions home and its cache warm (Normal). */
    PodRestarted,
    /** A pod back, its cache not warm within warmTimeout (Warning). */
    PodRestartedCold,
    /** A stop the operator did not make (delete, eviction, scale-down): drained warm (Normal). */
    WarmStop,
    /** A scaled-down pod left with its regions moved, its cache volume as the policy says. */
    ScaledDown,
    /** A scaled-down pod exists again: its regions go back to it (Normal). */
    ScaledUp,
    /** A stopped pod did not serve again within podReadyTimeout (Warning). */
    StoppedPodNotBack,
    /**
     * The roll waited between pods for {@code BalancerSwitch.BETWEEN_PODS}: HBase's balancer is
     * back on until the next pod starts (Normal).
     */
    BalancerBackOn,
    /** The roll cannot go on until something changes (Warning). */
    RollBlocked,
    /** The roll is held while the policy cannot be applied (Warning). */
    RollHeld,
    /** A RegionServer restarted in its pod gets its cached regions back (Normal). */
    RestartedInPlace,
    /** A homecoming's regions are home (Normal; Warning when not warm within warmTimeout). */
    RegionsHome,
    /** A homecoming that could not finish: nothing blocks (Warning). */
    HomecomingEnded,
    /**
     * The cluster the policy's client settings reach is not shown to be served by pods of the
     * policy's namespace: HBase is sent nothing (Warning).
     */
    ForeignCluster,
    /**
     * A RegionServer container the kubelet reported terminated while HBase still counted it live:
     * what the kubelet said, what the operator told HBase and when, how long its regions did not
     * serve (Warning).
     */
    RegionServerCrashed
  }

  /** What happened to a pod whose restart completed. */
  public record Restarted(String pod, Instant readyAt, Double retainedFraction, boolean warm) {}

  /** Why a roll waits or is blocked: the reason of the Progressing and Degraded conditions. */
  public enum Reason {
    /**
     * HBase's state could not be read (the master did not answer, or a bound of the operator's).
     */
    HBaseUnreachable,
    /**
     * HBase refused the operator's identity a call the roll needs (no READ or ADMIN permission).
     */
    AccessDenied,
    /** A decommissioned server still serves regions. */
    Draining,
    /** The drain did not finish within podReadyTimeout. */
    DrainTimeout,
    /** A restarted pod is not Ready, or its RegionServer has not registered and reported. */
    WaitingForPod,
    /** A restarted pod did not serve within podReadyTimeout. */
    PodNotReady,
    /** Regions are on their way back to a restarted server. */
    Reloading,
    /** Regions did not return within podReadyTimeout. */
    ReloadTimeout,
    /** A restarted server's cache is not back yet. */
    WarmGate,
    /** The cluster gate refuses to take a Ready pod down now. */
    ClusterNotHealthy,
    /** A persistent cache's L2 size before the restart is not known yet. */
    WaitingForCacheSample,
    /** A replica has no pod. */
    WaitingForPods,
    /** The policy cannot be applied any more: the roll holds, the cluster runs as before it. */
    PolicyInvalid,
    /**
     * The cluster the policy's client settings reach is not shown to be served by pods of the
     * policy's namespace (a RegionServer of another namespace, at an address of no pod of the
     * target, under a bare name; or none registered): HBase is sent nothing.
     */
    ForeignCluster
  }

  /** How a roller step ended, besides its actions. */
  public sealed interface Outcome permits Proceeding, Wait, Blocked {}

  /** Nothing to wait for: idle, or moving on. */
  public record Proceeding() implements Outcome {}

  /** The roll waits for something that is expected to come. */
  public record Wait(Reason reason, String message) implements Outcome {}

  /** The roll cannot go on without a change (a timeout passed): Degraded. */
  public record Blocked(Reason reason, String message) implements Outcome {}
}
