package dev.hbase.cache.operator.roll;

import static dev.hbase.cache.operator.roll.RollModel.META_REGION;
import static dev.hbase.cache.operator.roll.RollModel.serverFor;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.PodRoll.Step;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.roll.RollModel.CacheView;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.EventReason;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Stops the roll did not decide: a pod deleted or evicted by someone else (kubectl, a node drain,
 * the autoscaler, a preemption, a scale-down). The rendered preStop hook keeps such a pod's
 * RegionServer running while it still serves regions (up to {@code PodHooks.WARM_STOP_SECONDS});
 * the roll takes the pod in flight at once, as a drain that needs no gate (it goes down anyway), so
 * its regions move to where their blocks are cached before the JVM stops. From there the pod is an
 * ordinary restart: when a pod of the same ordinal returns, its regions go home and the warm gate
 * follows; a pod above the replicas does not return ({@link PodLifecycle}).
 *
 * <p>Only with DrainAndReload (InPlace renders no preStop: its user chose HBase's own stop), and
 * only a pod whose RegionServer is live (one that has stopped already has nothing to move).
 */
final class Stops {
  private final StepState t;
  private final BalancerSwitch balancer;

  Stops(StepState t, BalancerSwitch balancer) {
    this.t = t;
    this.balancer = balancer;
  }

  void admit() {
    if (t.s.strategy() != RolloutSpec.Strategy.DrainAndReload || !t.hbase().masterReachable()) {
      return;
    }
    returns();
    for (PodView p : Stream.concat(t.in.pods().stream(), t.in.leaving().stream()).toList()) {
      if (!p.terminating()) {
        continue;
      }
      Optional<PodRoll> again = t.inFlight(p.name()) ? stopsAgain(p) : Optional.empty();
      if (t.inFlight(p.name()) && again.isEmpty()) {
        continue; // the roll's own restart, or a stop taken already
      }
      List<String> carried = again.map(PodRoll::getRegions).orElse(List.of());
      serverFor(t.hbase(), p)
          // a server with no region has nothing to move (its hook lets it stop at once), nor
          // one whose stop was drained already and left the roll
          .filter(server -> server.regionCount() > 0 || !carried.isEmpty())
          .ifPresentOrElse(
              server -> start(p, server, carried),
              () -> again.ifPresent(t.st.getInFlight()::add)); // nothing to take over: as it was
    }
  }

  /**
   * A pod a scale-down removed ({@code status.rollout.scaledDown}) exists again (a scale-up): back
   * in flight, waiting for its new RegionServer, to which its regions go back (its cache volume was
   * kept); then the warm gate, as after any restart.
   */
  private void returns() {
    var parked = t.st.getScaledDown();
    if (parked == null || parked.isEmpty()) {
      return;
    }
    for (PodRoll r : List.copyOf(parked)) {
      boolean back =
          t.in.pods().stream()
              .anyMatch(p -> p.name().equals(r.getPod()) && !p.uid().equals(r.getUid()));
      if (back && !t.inFlight(r.getPod())) {
        parked.remove(r);
        r.setDeletedAt(t.now().toString());
        t.st.getInFlight().add(r);
        balancer.rememberBeforeDrain();
        t.to(r, Step.WaitingReady);
        t.requeue(Duration.ZERO);
        t.events.add(new Event(false, EventReason.ScaledUp, Narration.returned(r)));
      }
    }
    if (parked.isEmpty()) {
      t.st.setScaledDown(null);
    }
  }

  /**
   * A pod in flight whose new instance (another UID than the entry's, its regions on their way back
   * or home) is stopping in turn: that entry leaves the roll (returned), and the new instance's
   * stop takes its regions along, to send them home when the pod returns once more.
   */
  private Optional<PodRoll> stopsAgain(PodView p) {
    Optional<PodRoll> f =
        t.st.getInFlight().stream().filter(r -> r.getPod().equals(p.name())).findFirst();
    if (f.isEmpty()
        // a homecoming's entry is the same pod instance: its stop takes the regions along too
        || (f.get().getUid().equals(p.uid()) && !Homecomings.is(f.get()))
        || (f.get().getStep() != Step.Reloading && f.get().getStep() != Step.WarmGate)) {
      return Optional.empty();
    }
    t.st.getInFlight().remove(f.get());
    return f;
  }

  private void start(PodView pod, ServerState server, List<String> carried) {
    boolean leaving = pod.ordinal() >= t.in.replicas();
    String cause = leaving && "Deleted".equals(pod.stopCause()) ? "ScaledDown" : pod.stopCause();
    CacheView c = t.in.caches().get(pod.name());
    PodRoll r =
        new PodRoll()
            .setPod(pod.name())
            .setUid(pod.uid())
            .setStoppedBy(cause)
            .setReason("Stopped: " + cause)
            .setOldServer(server.id().toString())
            .setDeletedAt(t.now().toString())
            .setL2UsedBytesBefore(c == null ? null : c.l2UsedBytes())
            .setRegions(
                Stream.concat(carried.stream(), server.regions().stream())
                    .filter(x -> !META_REGION.equals(x))
                    // a region drained here from a pod in flight, or from a scaled-down pod, goes
                    // home there, not here
                    .filter(x -> t.st.getInFlight().stream().noneMatch(f -> homeOf(f, x)))
                    .filter(
                        x ->
                            t.st.getScaledDown() == null
                                || t.st.getScaledDown().stream().noneMatch(f -> homeOf(f, x)))
                    .distinct()
                    .sorted()
                    .collect(Collectors.toList()));
    t.st.getInFlight().add(r);
    balancer.rememberBeforeDrain();
    // recorded now, drained in the next step: a crash in between loses nothing
    t.to(r, Step.Draining);
    t.requeue(Duration.ZERO);
    t.events.add(
        new Event(
            false, EventReason.WarmStop, Narration.warmStop(pod.name(), cause, server, leaving)));
  }

  private static boolean homeOf(PodRoll f, String region) {
    return f.getRegions() != null && f.getRegions().contains(region);
  }

  /** Whether some pod is stopping that the roll has not taken in flight yet. */
  static boolean pending(
      dev.hbase.cache.api.v1alpha1.status.RolloutStatus previous, List<PodView> pods) {
    return pods.stream()
        .filter(PodView::terminating)
        .anyMatch(
            p ->
                previous == null
                    || previous.getInFlight() == null
                    || previous.getInFlight().stream().noneMatch(r -> r.getPod().equals(p.name())));
  }

  /** Whether a pod a scale-down removed exists again (see {@link #returns}). */
  static boolean returning(
      dev.hbase.cache.api.v1alpha1.status.RolloutStatus previous, List<PodView> pods) {
    return previous != null
        && previous.getScaledDown() != null
        && previous.getScaledDown().stream()
            .anyMatch(
                r ->
                    pods.stream()
                        .anyMatch(p -> p.name().equals(r.getPod()) && !p.uid().equals(r.getUid())));
  }

  /** The pod's ordinal from its name ({@code <statefulset>-<ordinal>}), or -1. */
  static int ordinalOf(String pod) {
    int dash = pod.lastIndexOf('-');
    try {
      return dash < 0 ? -1 : Integer.parseInt(pod.substring(dash + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
