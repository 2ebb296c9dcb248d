package dev.hbase.cache.operator.roll;

import static dev.hbase.cache.operator.roll.RollModel.serverFor;

import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * May this pod go down now? The cluster gate (the cluster is healthy enough to lose one more
 * RegionServer) and the budget (how many are down, how many may be). Answers from the step's input
 * and the pods in flight; the only thing it records is a wait, when a pod admitted earlier finds
 * the gate closed ({@link #stillOpen}).
 */
final class ClusterGate {
  private final StepState t;

  ClusterGate(StepState t) {
    this.t = t;
  }

  /**
   * The most RegionServers down at once: maxUnavailable, but never every one (with a single
   * replica, that one: a restart of a one-server cluster always costs availability).
   */
  static int budget(int maxUnavailable, int replicas) {
    return replicas <= 1 ? 1 : Math.min(maxUnavailable, replicas - 1);
  }

  /** {@link #budget} of this roll. */
  int maxDown() {
    return budget(t.s.maxUnavailable(), t.in.replicas());
  }

  /**
   * RegionServers down now: pods in flight, other pods not Ready or terminating, missing replicas.
   */
  long down() {
    long others =
        t.in.pods().stream()
            .filter(p -> !t.inFlight(p.name()))
            .filter(p -> !p.ready() || p.terminating())
            .count();
    return t.st.getInFlight().size() + others + missingOutsideRoll();
  }

  /** Replicas without a pod, less those the roll deleted (they are counted in flight). */
  long missingOutsideRoll() {
    long deletedByRoll =
        t.st.getInFlight().stream().filter(r -> t.podByName(r.getPod()).isEmpty()).count();
    return Math.max(0, t.in.missing() - deletedByRoll);
  }

  /**
   * A pod that holds no regions, so restarting it costs nothing: stuck (crash-looping, image pull
   * errors, unschedulable), or not Ready and not registered with the master (or registered with no
   * region). A pod that is not Ready but still serves regions (overloaded, a slow probe) is drained
   * like any other. When the master cannot be asked, an unready pod counts as serving.
   */
  boolean servesNothing(PodView p) {
    if (p.stuck() != null) {
      return true;
    }
    if (p.ready()) {
      return false;
    }
    ClusterSnapshot h = t.hbase();
    return h.masterReachable() && serverFor(h, p).map(x -> x.regionCount() == 0).orElse(true);
  }

  /**
   * The cluster gate again, before a destructive step (decommission, delete) of a pod admitted
   * earlier: something else may have gone down since (a RegionServer killed, a pod evicted).
   */
  boolean stillOpen(PodRoll r) {
    return closedFor(r) == null;
  }

  /** {@link #stillOpen}, with why it is closed (a wait recorded), or null when it is open. */
  String closedFor(PodRoll r) {
    Optional<PodView> pod = t.podByName(r.getPod());
    String gate = pod.isEmpty() ? r.getPod() + " does not exist" : why(pod.get());
    if (gate != null) {
      t.waitFor(reason(), gate);
    }
    return gate;
  }

  /**
   * A dead server of an ordinal the StatefulSet no longer has (a scale-down): HBase lists a stopped
   * server as dead until another registers at its host and port ({@code
   * DeadServer.cleanPreviousInstance}) or an administrator clears it, so after a permanent
   * scale-down it would close the gate for every later roll. Its regions were reassigned when it
   * was processed (until then they are in transition, which closes the gate on its own). Told by
   * its DNS name, {@code <statefulset>-<ordinal>} under the target's service: the ordinal at or
   * above the replicas and no pod of that name, leaving or not. A server named by its IP cannot be
   * told apart: it still closes the gate.
   */
  static boolean scaledAway(ServerId dead, RollModel.Input in) {
    String host = Zone.normal(dead.host());
    for (PodView p : in.allPods()) {
      if (p.fqdn() == null
          || !p.fqdn().startsWith(p.name() + ".")
          || !p.name().endsWith("-" + p.ordinal())) {
        continue;
      }
      String suffix = p.fqdn().substring(p.name().length()); // .<service>.<ns>.svc.<domain>
      String shortSuffix = Zone.withoutClusterDomain(p.fqdn()).substring(p.name().length());
      String head =
          host.endsWith(suffix)
              ? host.substring(0, host.length() - suffix.length())
              : host.endsWith(shortSuffix)
                  ? host.substring(0, host.length() - shortSuffix.length())
                  : null;
      String set = p.name().substring(0, p.name().length() - ("-" + p.ordinal()).length());
      if (head == null || !head.startsWith(set + "-")) {
        continue;
      }
      String ordinal = head.substring(set.length() + 1);
      if (!ordinal.matches("0|[1-9][0-9]{0,8}")) {
        return false;
      }
      return Integer.parseInt(ordinal) >= in.replicas()
          && in.allPods().stream().noneMatch(q -> q.name().equals(head));
    }
    return false;
  }

  /** The reason of a closed gate: AccessDenied when HBase refused the operator's identity. */
  Reason reason() {
    return t.hbase().accessDenied() ? Reason.AccessDenied : Reason.ClusterNotHealthy;
  }

  /** Why a ready pod may not go down now, or null. */
  String why(PodView candidate) {
    ClusterSnapshot h = t.hbase();
    if (h.accessDenied()) {
      return "HBase refused the operator's identity (it needs the READ and ADMIN permissions, 'RA'): "
          + h.error();
    }
    if (!h.masterReachable()) {
      return "HBase's state could not be read: " + h.error();
    }
    if (h.regionsInTransition() > 0) {
      return h.regionsInTransition() + " regions in transition";
    }
    List<ServerId> dead = h.dead().stream().filter(d -> !scaledAway(d, t.in)).toList();
    if (!dead.isEmpty()) {
      return "dead RegionServers: "
          + dead.stream().map(ServerId::toString).collect(Collectors.joining(", "));
    }
    long othersDown =
        t.in.pods().stream()
            .filter(p -> !p.name().equals(candidate.name()))
            .filter(p -> !t.inFlight(p.name()))
            .filter(p -> !p.ready() || p.terminating())
            .count();
    if (othersDown > 0) {
      return othersDown + " other RegionServer pods are not Ready";
    }
    // a pod someone else stopped is outside the budget the roll admits by: down until it is back
    // with its regions
    String stopping =
        t.st.getInFlight().stream()
            .filter(RollModel::isStop)
            .filter(r -> !r.getPod().equals(candidate.name()))
            .filter(r -> r.getHomeAt() == null)
            .map(r -> r.getPod() + " (" + r.getStoppedBy() + ")")
            .collect(Collectors.joining(", "));
    if (!stopping.isEmpty()) {
      return "stopped by someone else, not back yet: " + stopping;
    }
    if (missingOutsideRoll() > 0) {
      return Narration.missing(t.in);
    }
    long serving = t.in.pods().size() - t.st.getInFlight().size();
    long live =
        h.live().stream()
            .filter(x -> t.in.pods().stream().anyMatch(p -> p.servesAs(x.id().host())))
            .count();
    if (live < serving) {
      return live + " RegionServers registered with the master, " + serving + " pods should serve";
    }
    if (serverFor(h, candidate).isEmpty()) {
      return candidate.name() + " is Ready but its RegionServer is not registered with the master";
    }
    return null;
  }
}
