package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.spec.WarmGate;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.PodRoll.Step;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.CacheView;
import dev.hbase.cache.operator.roll.RollModel.DeletePod;
import dev.hbase.cache.operator.roll.RollModel.Drain;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.EventReason;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import dev.hbase.cache.operator.roll.RollModel.Recommission;
import dev.hbase.cache.operator.roll.RollModel.Restarted;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A pod in flight, moved at most one step: Draining -> Deleting -> WaitingReady -> Reloading ->
 * WarmGate -> done (InPlace, and pods that serve nothing: Deleting -> WaitingReady -> WarmGate ->
 * done). Each step reads the pod and HBase as observed now, records the next step in the pod's
 * {@link PodRoll} and asks for the actions (drain, delete, recommission); a step that times out
 * blocks the roll. A stop by someone else ({@link Stops}) takes the same steps, with its own rules
 * where it differs (no gate, no delete, no block: {@code drainingStop}, {@code scaledAway}, {@code
 * leave}).
 *
 * <p>Over ~400 lines (about 500) because a stop differs from the roll's restart inside three of the
 * five steps: kept beside them, each difference reads next to the rule it changes. Splitting the
 * stop's steps into a class of their own is the next cut if it grows again.
 */
final class PodLifecycle {
  /** The most scaled-down pods remembered for a scale-up ({@code status.rollout.scaledDown}). */
  static final int MAX_SCALED_DOWN = 16;

  private final StepState t;
  private final ClusterGate gate;
  private final RollBook book;

  PodLifecycle(StepState t, ClusterGate gate, RollBook book) {
    this.t = t;
    this.gate = gate;
    this.book = book;
  }

  /**
   * A restart that did not bring the pod up (timed out, or a new instance of an older revision that
   * is not Ready): after a spec change the pod is just out of date, and goes first again.
   */
  boolean failedOnAnOldRevision(PodRoll r) {
    if (r.getStep() != Step.WaitingReady) {
      return false;
    }
    Optional<PodView> pod = t.podByName(r.getPod());
    if (pod.isPresent() && pod.get().ready()) {
      return false;
    }
    boolean newInstanceOfOldRevision =
        pod.isPresent()
            && !pod.get().uid().equals(r.getUid())
            && pod.get().outdated(t.s.revision());
    return t.timedOut(r, t.s.podReadyTimeout()) || newInstanceOfOldRevision;
  }

  void advance(PodRoll r) {
    if (t.hbase().masterReachable()) {
      StepState.outageOver(r, t.now()); // the outage does not count against the step's timeout
    }
    Optional<PodView> pod = t.podByName(r.getPod());
    if (t.expiring(r.getPod())) {
      // its RegionServer died and this step expires it: nothing goes to that instance (the next
      // step finds it gone, its regions in HBase's crash procedure, and goes on from there)
      t.waitFor(
          Reason.WaitingForPod, r.getPod() + "'s RegionServer died: HBase reassigns its regions");
      t.requeue(StepState.FAST);
      return;
    }
    switch (r.getStep()) {
      case Draining -> draining(r);
      case Deleting -> deleting(r, pod);
      case WaitingReady -> waitingReady(r, pod);
      case Reloading -> reloading(r);
      case WarmGate -> warmGate(r);
    }
  }

  // ------------------------------------------------------------------ Draining

  void draining(PodRoll r) {
    ClusterSnapshot h = t.hbase();
    if (!h.masterReachable()) {
      masterUnreachable(r);
      return;
    }
    ServerId oldId = ServerId.parse(r.getOldServer());
    Optional<ServerState> old = h.live(oldId);
    int left = old.map(ServerState::regionCount).orElse(0);
    if (RollModel.isStop(r)) {
      drainingStop(r, old, oldId, left);
      return;
    }
    if (old.isPresent() && !h.decommissioned().contains(oldId)) {
      // A drain that cannot begin (no server may take the regions: every other one marked by
      // someone else, or the gate closed) times out like one that does not finish: otherwise
      // the balancer stays off for as long as the cause lasts.
      if (t.timedOut(r, t.s.podReadyTimeout())) {
        drainTimedOut(
            r, oldId, Narration.drainNotBegun(r, t.s.podReadyTimeout(), t.st.getMessage()));
        return;
      }
      if (!gate.stillOpen(r)) {
        return;
      }
      drain(old.get()); // sent from the recorded state only
      t.requeue(StepState.FAST);
      return;
    }
    if (left == 0 && h.regionsInTransition() == 0) {
      // deleted in this step (one status write less per restart): the delete's UID precondition
      // and the pods as observed keep it to one delete whatever the crash point
      t.to(r, Step.Deleting);
      deleting(r, t.podByName(r.getPod()));
      return;
    }
    if (t.timedOut(r, t.s.podReadyTimeout())) {
      drainTimedOut(r, oldId, Narration.drainNotDone(r, left, t.s.podReadyTimeout()));
      return;
    }
    if (left > 0 && h.regionsInTransition() == 0) {
      drain(old.get()); // a move that failed, or a region that arrived before the mark
    }
    t.waitFor(Reason.Draining, "moving " + left + " regions off " + r.getPod());
    t.requeue(StepState.FAST);
  }

  /**
   * A pod someone else stops ({@link Stops}): no gate (it goes down anyway) and no retry. The drain
   * ends when the server holds no region or is gone: its preStop hook lets HBase stop it once it
   * serves nothing, or at its bound; the pod is not deleted by the roll. Moving regions may outlast
   * that: after podReadyTimeout the pod goes on to WaitingReady whatever is in transition.
   */
  private void drainingStop(PodRoll r, Optional<ServerState> old, ServerId oldId, int left) {
    ClusterSnapshot h = t.hbase();
    boolean done = left == 0 && h.regionsInTransition() == 0;
    if (done || t.timedOut(r, t.s.podReadyTimeout())) {
      t.to(r, Step.Deleting);
      deleting(r, t.podByName(r.getPod()));
      return;
    }
    if (old.isPresent()
        && (!h.decommissioned().contains(oldId) || (left > 0 && h.regionsInTransition() == 0))) {
      drain(old.get());
    }
    t.waitFor(
        Reason.Draining,
        "moving "
            + left
            + " regions off "
            + r.getPod()
            + " before it stops ("
            + r.getStoppedBy()
            + ")");
    t.requeue(StepState.FAST);
  }

  /**
   * The cluster goes back to normal meanwhile: the server gets back what was drained, its mark
   * goes, the balancer goes back on ({@link BalancerSwitch#backOnWhileBlocked}); the drain is tried
   * again after the timeout once more, or at once after a spec change.
   */
  void drainTimedOut(PodRoll r, ServerId oldId, String what) {
    Instant retry = t.now().plus(t.s.podReadyTimeout());
    t.actions.add(new Recommission(oldId, r.getRegions() == null ? List.of() : r.getRegions()));
    t.st.getInFlight().remove(r);
    t.st.setRetryAt(retry.toString());
    t.block(Reason.DrainTimeout, what + "; the drain is tried again at " + retry);
  }

  /** Moves the server's regions to where they are cached best ({@link DrainTargets}). */
  void drain(ServerState server) {
    Map<String, ServerId> targets =
        DrainTargets.plan(server.regions(), drainCandidates(server.id()));
    if (targets.isEmpty() && server.regionCount() > 0) {
      t.waitFor(
          Reason.Draining,
          "no RegionServer can take the regions of "
              + server.id()
              + " (every other one"
              + (t.hbase().groupOf(server.id()) == null
                  ? ""
                  : " of its RegionServer group " + t.hbase().groupOf(server.id()))
              + " is decommissioned, restarting or has not reported yet)");
      return;
    }
    t.actions.add(new Drain(server.id(), targets));
  }

  /**
   * Servers that may take a drained server's regions: live, reported, not decommissioned, in its
   * RegionServer group ({@link DrainTargets#sameGroup}), and not a pod of this roll in flight.
   */
  List<ServerState> drainCandidates(ServerId draining) {
    ClusterSnapshot h = t.hbase();
    return h.live().stream()
        .filter(x -> !x.id().sameEndpoint(draining))
        .filter(x -> DrainTargets.sameGroup(h, draining, x.id()))
        .filter(ServerState::reported)
        .filter(x -> !x.decommissioned() && !h.decommissioned().contains(x.id()))
        .filter(
            x ->
                t.st.getInFlight().stream()
                    .noneMatch(
                        f ->
                            t.podByName(f.getPod())
                                .map(p -> p.servesAs(x.id().host()))
                                .orElse(false)))
        // nor a server about to stop: its pod terminating, or above the replicas (a scale-down
        // removes it next), or its instance dead and expired by this step
        .filter(
            x ->
                java.util.stream.Stream.concat(t.in.pods().stream(), t.in.leaving().stream())
                    .filter(p -> p.servesAs(x.id().host()))
                    .noneMatch(
                        p ->
                            p.terminating()
                                || p.ordinal() >= t.in.replicas()
                                || t.expiring(p.name())))
        .toList();
  }

  /**
   * The master does not answer: the pod's step waits, and the outage does not count against its
   * timeout ({@code masterUnreachableSince}: {@link StepState#timedOut} stops the step's clock,
   * {@link StepState#outageOver} moves its start on by the outage once the master answers).
   * Otherwise a step that outlived an outage of minutes would time out the moment the master is
   * back, and block the roll until the next spec change. Only the time the master answered counts,
   * so a master that answers now and then still lets a step time out (after more wall time). Two
   * status writes per outage: its start and its end.
   */
  void masterUnreachable(PodRoll r) {
    if (r.getMasterUnreachableSince() == null) {
      r.setMasterUnreachableSince(t.now().toString());
    }
    if (t.hbase().accessDenied()) {
      t.waitFor(
          Reason.AccessDenied,
          "HBase refused the operator's identity (it needs the READ and ADMIN permissions, 'RA'): "
              + t.hbase().error());
    } else {
      t.waitFor(Reason.HBaseUnreachable, "HBase's state could not be read: " + t.hbase().error());
    }
  }

  // ------------------------------------------------------------------ Deleting

  void deleting(PodRoll r, Optional<PodView> pod) {
    if (pod.isPresent() && pod.get().uid().equals(r.getUid()) && !pod.get().terminating()) {
      if (r.getOldServer() != null && !t.hbase().masterReachable()) {
        masterUnreachable(r); // a drained pod: the gate cannot be asked, nor the regions sent back
        return;
      }
      String closed = r.getOldServer() == null ? null : gate.closedFor(r);
      if (closed != null) {
        // a drained pod: what was true at admission is checked again before the delete; the
        // cluster is a server short meanwhile, so not for longer than podReadyTimeout (another
        // pod stuck Terminating on a lost node may keep the gate closed for hours)
        if (t.timedOut(r, t.s.podReadyTimeout())) {
          drainTimedOut(
              r,
              ServerId.parse(r.getOldServer()),
              Narration.drainedNotDeleted(r, t.s.podReadyTimeout(), closed));
        }
        return;
      }
      t.actions.add(new DeletePod(r.getPod(), r.getUid()));
      t.events.add(new Event(false, EventReason.RestartingPod, Narration.restarting(r)));
    }
    if (r.getDeletedAt() == null) {
      r.setDeletedAt(t.now().toString());
    }
    t.to(r, Step.WaitingReady);
    t.requeue(StepState.POLL);
  }

  // ------------------------------------------------------------------ WaitingReady

  /**
   * The new instance serves once it has registered with the master and sent its first load report;
   * a drained pod's regions go back then, without waiting for the pod's readiness probe (which may
   * pass seconds later). A pod restarted without a drain must be Ready as well: its old instance,
   * whose start code is not known, may still be listed.
   */
  void waitingReady(PodRoll r, Optional<PodView> pod) {
    if (Stops.ordinalOf(r.getPod()) >= t.in.replicas()) {
      scaledAway(r, pod);
      return;
    }
    if (!t.hbase().masterReachable()) {
      masterUnreachable(r); // the new instance cannot register: nothing to time out on yet
      t.requeue(StepState.POLL);
      return;
    }
    boolean newPod =
        pod.isPresent() && !pod.get().uid().equals(r.getUid()) && !pod.get().terminating();
    boolean newPodReady = newPod && pod.get().ready();
    Optional<ServerState> server =
        newPod && (newPodReady || r.getOldServer() != null)
            ? newServer(r, pod.get())
            : Optional.empty();
    if (server.isPresent()) {
      r.setNewServer(server.get().id().toString());
      r.setReadyAt(t.now().toString());
      if (t.s.strategy() == RolloutSpec.Strategy.DrainAndReload && r.getOldServer() != null) {
        t.to(r, Step.Reloading);
        t.actions.add(new Recommission(ServerId.parse(r.getOldServer()), r.getRegions()));
        t.requeue(StepState.FAST);
      } else {
        r.setHomeAt(t.now().toString());
        t.to(r, Step.WarmGate);
        t.requeue(StepState.FAST);
      }
      return;
    }
    if (RollModel.isStop(r) && t.timedOut(r, t.s.podReadyTimeout())) {
      // not the roll's restart: nothing to block on, the regions stay where the drain sent them
      leave(r, EventReason.StoppedPodNotBack, Narration.stoppedNotBack(r, t.s.podReadyTimeout()));
      return;
    }
    if (t.timedOut(r, t.s.podReadyTimeout())) {
      if (r.getOldServer() != null
          && t.hbase().decommissioned().contains(ServerId.parse(r.getOldServer()))) {
        // the old instance is gone: its mark goes too (the cluster as it would be without it)
        t.actions.add(new Recommission(ServerId.parse(r.getOldServer()), List.of()));
      }
      t.block(Reason.PodNotReady, Narration.notServing(r, pod, t.s.podReadyTimeout()));
      return;
    }
    String what =
        newPod && (newPodReady || r.getOldServer() != null)
            ? "waiting for the RegionServer on " + r.getPod() + " to register and report"
            : "waiting for " + r.getPod() + " to be Ready";
    t.waitFor(Reason.WaitingForPod, what);
    t.requeue(newPod ? StepState.FAST : StepState.POLL);
  }

  /**
   * The pod's ordinal is at or above the replicas now (a scale-down, before or during its restart):
   * no pod of it comes back. Once its instance is gone the pod leaves the roll, its regions staying
   * where the drain sent them.
   */
  private void scaledAway(PodRoll r, Optional<PodView> pod) {
    if (pod.isPresent() && pod.get().uid().equals(r.getUid())) {
      t.waitFor(Reason.WaitingForPod, "waiting for " + r.getPod() + " to stop (scaled down)");
      t.requeue(StepState.POLL);
      return;
    }
    boolean kept = !"Delete".equals(t.st.getCacheVolumesWhenScaled());
    if (kept && r.getOldServer() != null && r.getRegions() != null && !r.getRegions().isEmpty()) {
      // its cache volume stays: a scale-up brings the pod back on it, and its regions with it
      PodRoll parked =
          StepState.copy(r)
              .setNewServer(null)
              .setReadyAt(null)
              .setHomeAt(null)
              .setStoppedBy("ScaledDown");
      if (t.st.getScaledDown() == null) {
        t.st.setScaledDown(new java.util.ArrayList<>());
      }
      t.st.getScaledDown().removeIf(x -> x.getPod().equals(r.getPod()));
      t.st.getScaledDown().add(parked);
      while (t.st.getScaledDown().size() > MAX_SCALED_DOWN) {
        t.st.getScaledDown().remove(0); // the oldest: its regions have long been elsewhere
      }
    }
    leave(r, EventReason.ScaledDown, Narration.scaledDown(r, t.in.replicas(), kept));
  }

  /** The pod leaves the roll without coming back: its decommission mark goes, an event says why. */
  private void leave(PodRoll r, EventReason reason, String message) {
    // the mark goes once the instance is gone; a live one keeps it (a pod stuck Terminating on a
    // node cut off from the API server but not from HBase): unmarked, the balancer would give it
    // regions, and the roll would take it as a stop again
    if (r.getOldServer() != null
        && t.hbase().masterReachable()
        && t.hbase().live(ServerId.parse(r.getOldServer())).isEmpty()) {
      t.actions.add(new Recommission(ServerId.parse(r.getOldServer()), List.of()));
    }
    t.st.getInFlight().remove(r);
    t.events.add(new Event(reason != EventReason.ScaledDown, reason, message));
    t.requeue(Duration.ZERO);
  }

  /**
   * The pod's RegionServer instance newer than the one it had before the restart, having reported.
   */
  Optional<ServerState> newServer(PodRoll r, PodView pod) {
    ClusterSnapshot h = t.hbase();
    if (!h.masterReachable()) {
      return Optional.empty();
    }
    ServerId old = r.getOldServer() == null ? null : ServerId.parse(r.getOldServer());
    return h.live().stream()
        .filter(x -> pod.servesAs(x.id().host()))
        .filter(x -> old == null || x.id().startCode() > old.startCode())
        .filter(ServerState::reported)
        .findFirst();
  }

  // ------------------------------------------------------------------ Reloading

  void reloading(PodRoll r) {
    ClusterSnapshot h = t.hbase();
    if (!h.masterReachable()) {
      masterUnreachable(r);
      return;
    }
    if (t.podByName(r.getPod()).map(PodView::terminating).orElse(false)) {
      // the instance the regions go back to is stopping itself: no region is sent to it (Stops
      // takes it over as a stop of its own)
      t.waitFor(Reason.Reloading, r.getPod() + " is stopping again");
      t.requeue(StepState.FAST);
      return;
    }
    Optional<ServerState> now = h.live(ServerId.parse(r.getNewServer()));
    if (Homecomings.is(r) && Homecomings.ends(t, r, h, now)) {
      return;
    }
    if (now.isEmpty()) {
      // The new instance went away again: wait for the next one.
      t.to(r, Step.WaitingReady);
      t.requeue(StepState.POLL);
      return;
    }
    List<String> stragglers =
        r.getRegions().stream()
            .filter(x -> !now.get().regions().contains(x))
            .filter(this::regionExists)
            .toList();
    if (stragglers.isEmpty() && h.regionsInTransition() == 0) {
      r.setHomeAt(t.now().toString());
      // written before the gate is looked at: the status shows when the regions came home
      // (homeAt), which the gate's step would otherwise take out of the roll with the pod
      t.to(r, Step.WarmGate);
      t.requeue(StepState.FAST);
      return;
    }
    if (t.timedOut(r, t.s.podReadyTimeout()) && Homecomings.is(r)) {
      // not the roll's restart: nothing to block on
      Homecomings.end(
          t, r, stragglers.size() + " regions did not come within " + t.s.podReadyTimeout());
      return;
    }
    if (t.timedOut(r, t.s.podReadyTimeout())) {
      t.block(Reason.ReloadTimeout, stragglers.size() + " regions did not return to " + r.getPod());
      return;
    }
    if (!stragglers.isEmpty() && h.regionsInTransition() == 0) {
      t.actions.add(new Recommission(ServerId.parse(r.getOldServer()), stragglers));
    }
    t.waitFor(Reason.Reloading, "moving " + stragglers.size() + " regions back to " + r.getPod());
    t.requeue(StepState.FAST);
  }

  boolean regionExists(String encoded) {
    return t.hbase().live().stream().anyMatch(x -> x.regions().contains(encoded));
  }

  // ------------------------------------------------------------------ WarmGate

  void warmGate(PodRoll r) {
    RollModel.Settings s = t.s;
    CacheView c = t.in.caches().get(r.getPod());
    Double retained = null;
    if (c != null
        && c.l2UsedBytes() != null
        && r.getL2UsedBytesBefore() != null
        && r.getL2UsedBytesBefore() > 0) {
      retained = Math.min(1.0, (double) c.l2UsedBytes() / r.getL2UsedBytesBefore());
    }
    double minRetained =
        s.minRetainedFraction() != null
            ? s.minRetainedFraction()
            : WarmGate.DEFAULT_MIN_RETAINED_FRACTION;
    boolean retainedOk =
        !s.persistent()
            || s.cacheReset()
            || r.getL2UsedBytesBefore() == null
            || r.getL2UsedBytesBefore() == 0
            || (retained != null && retained >= minRetained);
    boolean hitOk =
        s.minHitRatio() == null
            || (c != null
                && c.hitRatioSinceStart() != null
                && c.hitRatioSinceStart() >= s.minHitRatio());
    boolean timeUp = t.timedOut(r, s.warmTimeout());
    if ((retainedOk && hitOk) || timeUp) {
      boolean warm = retainedOk && hitOk;
      t.st.getInFlight().remove(r);
      if (Homecomings.is(r)) {
        // not a restart of the roll's or of a stop: no roll figure, no restartedAt
        t.events.add(
            new Event(
                !warm,
                EventReason.RegionsHome,
                Narration.back(r, t.hbase(), false, null, warm, s.warmTimeout())));
        t.requeue(Duration.ZERO);
        return;
      }
      book.count(r, warm);
      t.restarted.add(
          new Restarted(
              r.getPod(),
              Instant.parse(r.getReadyAt() != null ? r.getReadyAt() : t.now().toString()),
              retained,
              warm));
      t.events.add(
          new Event(
              !warm,
              warm ? EventReason.PodRestarted : EventReason.PodRestartedCold,
              Narration.back(r, t.hbase(), s.cacheReset(), retained, warm, s.warmTimeout())));
      t.requeue(Duration.ZERO);
      return;
    }
    t.waitFor(
        Reason.WarmGate,
        Narration.warmGateWait(
            r.getPod(), retainedOk, retained, minRetained, hitOk, s.minHitRatio()));
    // what the gate waits for first is the new instance's next metrics refresh (every 5-10 s), not
    // a slow warm-up: looked at every second for a while, each pod leaves the gate within a second
    // of it (with the 5 s look, ~2.5 s later on average); a gate that waits longer (a hit ratio to
    // reach) is looked at every 5 s, so as not to ask HBase and /jmx every second for minutes
    t.requeue(t.timedOut(r, WARM_GATE_FAST_FOR) ? StepState.POLL : StepState.FAST);
  }

  /** How long a pod's warm gate is looked at every second before every 5 s. */
  static final Duration WARM_GATE_FAST_FOR = Duration.ofSeconds(15);
}
