package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.plan.Durations;
import dev.hbase.cache.operator.roll.RollModel.Input;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What the roll says: the text of its events and of its longer wait and block messages (the status
 * message, the conditions). Text only, from values: it decides nothing. One-line waits stay next to
 * the condition they describe.
 */
final class Narration {
  private Narration() {}

  /** The reason of a pod restarted because another manager changed the pod template. */
  static final String TEMPLATE_CHANGED = "pod template changed outside the policy";

  /** A finished roll in a sentence (the RollFinished event). */
  static String describe(RollSummary r) {
    return r.getRestarts()
        + " restarts in "
        + r.getSeconds()
        + " s"
        + (r.getSlowestPod() == null
            ? ""
            : ", slowest "
                + r.getSlowestPod()
                + " "
                + r.getSlowestPodSeconds()
                + " s from delete to regions home")
        + (r.getColdRestarts() == null || r.getColdRestarts() == 0
            ? ""
            : ", " + r.getColdRestarts() + " cold")
        + (r.getCachedReadRatio() == null
            ? ""
            : String.format(
                Locale.ROOT,
                ", %.2f%% of the cluster's %d data reads served from cache",
                r.getCachedReadRatio() * 100,
                r.getDataReads()));
  }

  /** The RollStarted event. */
  static String rollStarted(String revision, long drifted) {
    return "rolling RegionServers to revision "
        + revision
        + (drifted > 0
            ? " (" + drifted + " run an older pod template: " + TEMPLATE_CHANGED + ")"
            : "");
  }

  /** The RollFinished event. */
  static String rollFinished(int pods, String revision, RollSummary done) {
    return "all "
        + pods
        + " RegionServers run revision "
        + revision
        + (done == null ? "" : ": " + describe(done));
  }

  /** The WarmStop event: a pod someone else stops is taken in flight. */
  static String warmStop(
      String pod,
      String cause,
      dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState server,
      boolean leaving) {
    return pod
        + " is stopping ("
        + cause
        + "): its "
        + server.regionCount()
        + " regions move to where their blocks are cached before its RegionServer stops"
        + (leaving
            ? "; it does not come back (above the replicas)"
            : "; they go back when it returns");
  }

  /** The HomecomingEnded event: a homecoming that could not finish, and why. */
  static String homecomingEnded(PodRoll r, String why) {
    return "the regions of "
        + r.getPod()
        + " (restarted in its pod) stop going home: "
        + why
        + "; the regions stay where they are, nothing waits on it";
  }

  /** A pod's host name without its domain (an IP address whole). */
  static String shortHost(String host) {
    return host.matches("[0-9.]+") ? host : host.split("\\.", 2)[0];
  }

  /** The RestartedInPlace event: a server back without a pod delete gets its regions back. */
  static String restartedInPlace(
      PodView pod, ServerState server, List<String> regions, ClusterSnapshot h) {
    Map<String, Long> from =
        regions.stream()
            .map(h.locations()::get)
            .filter(java.util.Objects::nonNull)
            .collect(
                Collectors.groupingBy(
                    x -> shortHost(x.host()), java.util.TreeMap::new, Collectors.counting()));
    List<String> cachedHere =
        server.cachedMb().entrySet().stream()
            .filter(e -> e.getValue() > 0 && !RollModel.META_REGION.equals(e.getKey()))
            .map(Map.Entry::getKey)
            .toList();
    long serving = cachedHere.stream().filter(server.regions()::contains).count();
    return pod.name()
        + "'s RegionServer restarted in its pod (its container, not the pod: a crash, an OOM kill or"
        + " a failed liveness probe; no preStop hook ran) and serves "
        + (serving == 0 ? "none" : Long.toString(serving))
        + " of the "
        + cachedHere.size()
        + " regions it holds cached: "
        + regions.size()
        + " of them go back to it"
        + (from.isEmpty()
            ? ""
            : " ("
                + from.entrySet().stream()
                    .map(e -> e.getValue() + " from " + e.getKey())
                    .collect(Collectors.joining(", "))
                + ")");
  }

  /** A stopped pod whose successor did not serve within podReadyTimeout. */
  static String stoppedNotBack(PodRoll r, Duration podReadyTimeout) {
    return r.getPod()
        + " stopped ("
        + r.getStoppedBy()
        + ") and did not serve again within "
        + podReadyTimeout.toSeconds()
        + " s (rollout.podReadyTimeout): its regions stay on the servers they were moved to";
  }

  /** A pod in flight whose ordinal the StatefulSet scaled away. */
  static String scaledDown(PodRoll r, int replicas, boolean kept) {
    int n = r.getRegions() == null ? 0 : r.getRegions().size();
    return r.getPod()
        + " is gone (replicas "
        + replicas
        + "): its "
        + n
        + " regions stay on the servers they were moved to; "
        + (kept
            ? "its cache volume is kept (persistentVolumeClaimRetentionPolicy.whenScaled Retain):"
                + " when a scale-up brings it back, its regions return to it"
            : "its cache volume is deleted (persistentVolumeClaimRetentionPolicy.whenScaled"
                + " Delete)");
  }

  /** A pod a scale-down removed is back on its kept cache volume. */
  static String returned(PodRoll r) {
    int n = r.getRegions() == null ? 0 : r.getRegions().size();
    return r.getPod()
        + " is back after a scale-up, on its kept cache volume: its "
        + n
        + " regions from before the scale-down go back to it";
  }

  /** The RestartingPod event. */
  static String restarting(PodRoll r) {
    return "restarting " + r.getPod() + reasonSuffix(r);
  }

  /** The PodRestarted (warm) or PodRestartedCold event. */
  static String back(
      PodRoll r,
      ClusterSnapshot h,
      boolean cacheReset,
      Double retained,
      boolean warm,
      Duration warmTimeout) {
    return r.getPod()
        + " is back"
        + home(r, h)
        + (cacheReset
            ? ", its cache reset as planned"
            : retained != null ? String.format(", %.1f%% of its L2 retained", retained * 100) : "")
        + (warm ? "" : " but its cache did not warm up within " + Durations.format(warmTimeout));
  }

  /**
   * For a pod's PodRestarted event: how many of its regions are on its new instance, when they were
   * all back, and how much of them HBase says is cached there (its per-region cached ratio, from
   * the last load report).
   */
  static String home(PodRoll r, ClusterSnapshot h) {
    if (r.getNewServer() == null || r.getRegions() == null || r.getRegions().isEmpty()) {
      return "";
    }
    Optional<ServerState> now = h.live(ServerId.parse(r.getNewServer()));
    if (now.isEmpty()) {
      return "";
    }
    List<String> home = r.getRegions().stream().filter(now.get().regions()::contains).toList();
    // the last load report may be older than the regions' return: only those it lists count
    var cached =
        home.stream()
            .filter(now.get().cachedRatio()::containsKey)
            .mapToDouble(x -> now.get().cachedRatio().get(x))
            .average();
    return String.format(
        Locale.ROOT,
        ": %d/%d regions home%s%s",
        home.size(),
        r.getRegions().size(),
        r.getDeletedAt() == null || r.getHomeAt() == null
            ? ""
            : String.format(
                Locale.ROOT,
                " %.1f s after its delete",
                Duration.between(Instant.parse(r.getDeletedAt()), Instant.parse(r.getHomeAt()))
                        .toMillis()
                    / 1000.0),
        cached.isPresent()
            ? String.format(
                Locale.ROOT, ", %.0f%% of them cached there", cached.getAsDouble() * 100)
            : "");
  }

  /** The warm gate's wait: what is missing of the pod's cache. */
  static String warmGateWait(
      String pod,
      boolean retainedOk,
      Double retained,
      double minRetained,
      boolean hitOk,
      Double minHitRatio) {
    return "waiting for "
        + pod
        + "'s cache: "
        + (retainedOk
            ? ""
            : "retained "
                + (retained == null ? "unknown" : String.format("%.2f", retained))
                + " < "
                + minRetained
                + " ")
        + (hitOk ? "" : "hit ratio below " + minHitRatio);
  }

  /** A restarted pod that did not serve within podReadyTimeout (PodNotReady). */
  static String notServing(PodRoll r, Optional<PodView> pod, Duration podReadyTimeout) {
    String why =
        pod.isEmpty()
            ? "the pod was not recreated"
            : pod.get().stuck() != null
                ? "it is " + pod.get().stuck()
                : !pod.get().ready()
                    ? "it is not Ready"
                    : "its RegionServer did not register with the master";
    return r.getPod()
        + " is not serving "
        + Durations.format(podReadyTimeout)
        + " after its restart: "
        + why;
  }

  /** A drain that could not begin within podReadyTimeout (DrainTimeout). */
  static String drainNotBegun(PodRoll r, Duration podReadyTimeout, String lastWait) {
    return r.getPod()
        + "'s drain could not begin within "
        + Durations.format(podReadyTimeout)
        + " (the roll's last wait: "
        + (lastWait == null ? "none" : lastWait)
        + "): what it had moved goes back to it";
  }

  /**
   * A drained pod the cluster gate kept from its delete for podReadyTimeout (DrainTimeout): the
   * cluster should not stay a server short for as long as something else is down.
   */
  static String drainedNotDeleted(PodRoll r, Duration podReadyTimeout, String gate) {
    return r.getPod()
        + " was drained, but the cluster gate kept it from its restart for "
        + Durations.format(podReadyTimeout)
        + " ("
        + (gate == null ? "no reason recorded" : gate)
        + "): its regions went back and its decommission mark was cleared";
  }

  /** A drain that did not finish within podReadyTimeout (DrainTimeout). */
  static String drainNotDone(PodRoll r, int left, Duration podReadyTimeout) {
    return r.getPod()
        + " still served "
        + left
        + " regions "
        + Durations.format(podReadyTimeout)
        + " after its decommission: its regions went back and its decommission mark"
        + " was cleared";
  }

  /** Replicas without a pod. */
  static String missing(Input in) {
    return in.missing()
        + " of "
        + in.replicas()
        + " RegionServer pods do not exist (the StatefulSet controller creates them)";
  }

  /** The roll holds ({@link Roller#hold}): the RollHeld event and the status message. */
  static String held(String why, boolean balancerBackOn, List<String> returned) {
    return "held while the policy cannot be applied ("
        + why
        + ")"
        + (balancerBackOn ? "; balancer switched back on" : "")
        + (returned.isEmpty() ? "" : "; " + String.join(", ", returned) + " got its regions back");
  }

  /** The BalancerBackOn event: the roll has waited between pods past the bound. */
  static String backOnBetweenPods(String waiting) {
    return "the roll has waited "
        + Durations.format(BalancerSwitch.BETWEEN_PODS)
        + " between pods"
        + (waiting == null ? "" : " (" + waiting + ")")
        + ": HBase's balancer is back on until the next pod starts its drain";
  }

  /** The status message of a wait between pods past the bound. */
  static String withBalancerBackOn(String waiting) {
    String note =
        "balancer back on after " + Durations.format(BalancerSwitch.BETWEEN_PODS) + " between pods";
    return waiting == null ? note : waiting + "; " + note;
  }

  static String reasonSuffix(PodRoll r) {
    return r.getReason() == null ? "" : " (" + r.getReason() + ")";
  }
}
