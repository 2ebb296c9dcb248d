package dev.hbase.cache.operator.roll;

import static dev.hbase.cache.operator.roll.RollModel.META_REGION;
import static dev.hbase.cache.operator.roll.RollModel.serverFor;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.PodRoll.Step;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.plan.Durations;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.Blocked;
import dev.hbase.cache.operator.roll.RollModel.CacheView;
import dev.hbase.cache.operator.roll.RollModel.DeletePod;
import dev.hbase.cache.operator.roll.RollModel.Drain;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.Input;
import dev.hbase.cache.operator.roll.RollModel.Outcome;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.RollModel.Proceeding;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import dev.hbase.cache.operator.roll.RollModel.Recommission;
import dev.hbase.cache.operator.roll.RollModel.Restarted;
import dev.hbase.cache.operator.roll.RollModel.SwitchBalancer;
import dev.hbase.cache.operator.roll.RollModel.Wait;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The rolling restart, as one state machine. Each call looks at the pods and HBase, moves every
 * in-flight pod at most one step, admits new pods while the gates allow, and returns the new state
 * (kept in {@code status.rollout}), the actions to carry out and when to look again. It never
 * blocks and keeps nothing in memory, so an operator that restarts reads the state and goes on.
 *
 * <p>Per pod, DrainAndReload: Draining -> Deleting -> WaitingReady -> Reloading -> WarmGate -> done
 * (the decommission moves hbase:meta first, alone). InPlace: Deleting -> WaitingReady -> WarmGate
 * -> done. Stuck and unready pods serve nothing: they go first and skip the drain.
 *
 * <p>A pod is deleted with its UID as a precondition, and only while the pods as observed show that
 * instance not terminating: whatever the operator's crash point, a pod is deleted at most once per
 * roll. A pod admitted without a drain is recorded as "Deleting" in one step and deleted in the
 * next; a drained pod is deleted in the step that finds its drain complete.
 */
public final class Roller {

  /**
   * The most RegionServers down at once: maxUnavailable, but never every one (with a single
   * replica, that one). The PodDisruptionBudget of the RegionServers allows the same.
   */
  public static int budget(int maxUnavailable, int replicas) {
    return replicas <= 1 ? 1 : Math.min(maxUnavailable, replicas - 1);
  }

  /** The reason of a pod restarted because another manager changed the pod template. */
  static final String TEMPLATE_CHANGED = "pod template changed outside the policy";

  static final Duration FAST = Duration.ofSeconds(1);
  static final Duration POLL = Duration.ofSeconds(5);
  static final Duration IDLE = Duration.ofSeconds(60);
  static final Duration BLOCKED = Duration.ofSeconds(30);
  static final double DEFAULT_MIN_RETAINED = 0.9;
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The outcome of one step: the new state, the actions to carry out (in order), the events to
   * send, the restarts that completed, why it waits or is blocked, and when to look again.
   */
  public record Decision(
      RolloutStatus state,
      List<Action> actions,
      List<Event> events,
      List<Restarted> restarted,
      Outcome outcome,
      Duration requeueAfter) {

    public boolean degraded() {
      return outcome instanceof Blocked;
    }
  }

  private Roller() {}

  public static Decision step(RolloutStatus previous, Input in) {
    return new Run(previous, in).run();
  }

  /**
   * Whether a step needs the HBase master's view (and fresh cache samples): some pod is not at the
   * revision, or the previous roll left work (pods in flight, a balancer to switch back on). An
   * idle cluster is not asked.
   */
  public static boolean needsHBase(RolloutStatus previous, List<PodView> pods, String revision) {
    return pods.stream().anyMatch(p -> p.outdated(revision))
        || (previous != null
            && ((previous.getInFlight() != null && !previous.getInFlight().isEmpty())
                || previous.getBalancerWasOn() != null));
  }

  /**
   * Whether a roll left the cluster changed (balancer switched off, a server decommissioned and not
   * yet restarted): a policy that can no longer be applied must {@link #hold} it.
   */
  public static boolean needsHold(RolloutStatus previous) {
    return previous != null
        && (Boolean.TRUE.equals(previous.getBalancerWasOn())
            || (previous.getInFlight() != null
                && previous.getInFlight().stream().anyMatch(r -> r.getOldServer() != null)));
  }

  /**
   * The policy can no longer be applied (its plan refused, its target gone) while a roll is under
   * way: the cluster returns to normal operation until it can. The balancer goes back on if it was
   * on before the roll (the roll switches it off again when it goes on); a server drained but not
   * yet deleted gets its regions back and its decommission mark cleared, and leaves the roll (it is
   * admitted again from the start, with every gate). Pods already restarting stay in flight: their
   * old instance is gone, and the roll reloads them when it goes on.
   *
   * @param pods the pods as observed, or null when the target cannot be observed (then a pod in the
   *     Deleting step counts as deleted, one in the Draining step as deleted once its old instance
   *     no longer serves)
   */
  public static Decision hold(
      RolloutStatus previous, List<PodView> pods, ClusterSnapshot hbase, String why) {
    RolloutStatus st = Run.copy(previous);
    List<Action> actions = new ArrayList<>();
    List<Event> events = new ArrayList<>();
    if (!hbase.masterReachable()) {
      return new Decision(
          st,
          actions,
          events,
          List.of(),
          new Blocked(Reason.HBaseUnreachable, "held (" + why + "); " + hbase.error()),
          POLL);
    }
    if (Boolean.TRUE.equals(st.getBalancerWasOn()) && Boolean.FALSE.equals(hbase.balancerOn())) {
      actions.add(new SwitchBalancer(true));
    }
    List<String> returned = new ArrayList<>();
    for (PodRoll r : List.copyOf(st.getInFlight())) {
      // A drained pod is deleted in the step that finds its drain complete, so "Draining" may
      // already be deleted (the status write after the delete failed): the pod as observed says,
      // or, when the pods cannot be observed, whether its old instance still serves.
      boolean notDeleted =
          switch (r.getStep()) {
            case Draining ->
                pods != null
                    ? sameInstanceRunning(pods, r)
                    : r.getOldServer() == null
                        || hbase.live(ServerId.parse(r.getOldServer())).isPresent();
            case Deleting -> pods != null && sameInstanceRunning(pods, r);
            default -> false;
          };
      if (notDeleted && r.getOldServer() != null) {
        actions.add(
            new Recommission(
                ServerId.parse(r.getOldServer()),
                r.getRegions() == null ? List.of() : r.getRegions()));
        st.getInFlight().remove(r);
        returned.add(r.getPod());
      }
    }
    String message =
        "held while the policy cannot be applied ("
            + why
            + ")"
            + (actions.stream().anyMatch(a -> a instanceof SwitchBalancer)
                ? "; balancer switched back on"
                : "")
            + (returned.isEmpty()
                ? ""
                : "; " + String.join(", ", returned) + " got its regions back");
    if (!actions.isEmpty()) {
      events.add(new Event(true, "RollHeld", message));
    }
    st.setPhase(Phase.Blocked);
    st.setMessage(message);
    st.setCurrentPod(
        st.getInFlight().isEmpty()
            ? null
            : st.getInFlight().stream().map(PodRoll::getPod).collect(Collectors.joining(",")));
    return new Decision(
        st, actions, events, List.of(), new Blocked(Reason.PolicyInvalid, message), BLOCKED);
  }

  private static boolean sameInstanceRunning(List<PodView> pods, PodRoll r) {
    return pods.stream()
        .anyMatch(
            p -> p.name().equals(r.getPod()) && p.uid().equals(r.getUid()) && !p.terminating());
  }

  /** A finished roll in a sentence (the RollFinished event). */
  public static String describe(RollSummary r) {
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
                java.util.Locale.ROOT,
                ", %.2f%% of the cluster's %d data reads served from cache",
                r.getCachedReadRatio() * 100,
                r.getDataReads()));
  }

  /** One step's working state. */
  private static final class Run {
    final Input in;
    final RollModel.Settings s;
    final RolloutStatus st;
    final List<Action> actions = new ArrayList<>();
    final List<Event> events = new ArrayList<>();
    final List<Restarted> restarted = new ArrayList<>();
    Duration requeue = IDLE;
    Wait waiting;
    Blocked blocked;

    Run(RolloutStatus previous, Input in) {
      this.in = in;
      this.s = in.settings();
      this.st = copy(previous);
    }

    Decision run() {
      boolean newRevision = !Objects.equals(st.getRevision(), s.revision());
      if (newRevision) {
        // A spec change unblocks: pods stuck on the old revision are out of date again. That holds
        // before the ready timeout too (seen on kind: a bad JVM flag and podReadyTimeout 30s, then
        // both reverted; under the restored 10m the crash-looping instance was not "blocked" yet,
        // so the roll waited for it to become Ready on the bad template, which it never would).
        st.getInFlight().removeIf(this::failedOnAnOldRevision);
        st.setRevision(s.revision());
      }
      if (st.getRetryAt() != null) {
        if (newRevision || !in.now().isBefore(Instant.parse(st.getRetryAt()))) {
          st.setRetryAt(null); // a spec change, or the backoff after a failed drain is over
        } else if (st.getInFlight().isEmpty()) {
          // the same message: no new event (none left when another pod finished meanwhile)
          block(
              Reason.DrainTimeout,
              Objects.requireNonNullElse(
                  st.getMessage(), "a drain timed out: the roll goes on at " + st.getRetryAt()));
          return finish();
        }
      }
      if (Boolean.TRUE.equals(st.getBalancerWasOn())
          && !st.getInFlight().isEmpty()
          && st.getPhase() != Phase.Blocked
          && Boolean.TRUE.equals(in.hbase().balancerOn())) {
        actions.add(new SwitchBalancer(false)); // off for the whole roll, whoever turned it on
      }
      for (PodRoll r : List.copyOf(st.getInFlight())) {
        advance(r);
      }
      if (blocked == null) {
        admit();
      }
      return finish();
    }

    /**
     * A restart that did not bring the pod up (timed out, or a new instance of an older revision
     * that is not Ready): after a spec change the pod is just out of date, and goes first again.
     */
    boolean failedOnAnOldRevision(PodRoll r) {
      if (r.getStep() != Step.WaitingReady) {
        return false;
      }
      Optional<PodView> pod = podByName(r.getPod());
      if (pod.isPresent() && pod.get().ready()) {
        return false;
      }
      boolean newInstanceOfOldRevision =
          pod.isPresent()
              && !pod.get().uid().equals(r.getUid())
              && pod.get().outdated(s.revision());
      return isBlocked(r) || newInstanceOfOldRevision;
    }

    // ------------------------------------------------------------------ per-pod steps

    void advance(PodRoll r) {
      Optional<PodView> pod = podByName(r.getPod());
      switch (r.getStep()) {
        case Draining -> draining(r);
        case Deleting -> deleting(r, pod);
        case WaitingReady -> waitingReady(r, pod);
        case Reloading -> reloading(r);
        case WarmGate -> warmGate(r, pod);
      }
    }

    void draining(PodRoll r) {
      ClusterSnapshot h = in.hbase();
      if (!h.masterReachable()) {
        waitFor(Reason.HBaseUnreachable, "HBase master unreachable: " + h.error());
        return;
      }
      ServerId oldId = ServerId.parse(r.getOldServer());
      Optional<ServerState> old = h.live(oldId);
      int left = old.map(ServerState::regionCount).orElse(0);
      if (old.isPresent() && !h.decommissioned().contains(oldId)) {
        // A drain that cannot begin (no server may take the regions: every other one marked by
        // someone else, or the gate closed) times out like one that does not finish: otherwise
        // the balancer stays off for as long as the cause lasts.
        if (timedOut(r, s.podReadyTimeout())) {
          drainTimedOut(
              r,
              oldId,
              r.getPod()
                  + "'s drain could not begin within "
                  + Durations.format(s.podReadyTimeout())
                  + " (the roll's last wait: "
                  + Objects.requireNonNullElse(st.getMessage(), "none")
                  + "): what it had moved goes back to it");
          return;
        }
        if (!gateStillOpen(r)) {
          return;
        }
        drain(old.get()); // sent from the recorded state only
        requeue(FAST);
        return;
      }
      if (left == 0 && h.regionsInTransition() == 0) {
        // deleted in this step (one status write less per restart): the delete's UID precondition
        // and the pods as observed keep it to one delete whatever the crash point
        to(r, Step.Deleting);
        deleting(r, podByName(r.getPod()));
        return;
      }
      if (timedOut(r, s.podReadyTimeout())) {
        drainTimedOut(
            r,
            oldId,
            r.getPod()
                + " still served "
                + left
                + " regions "
                + Durations.format(s.podReadyTimeout())
                + " after its decommission: its regions went back and its decommission mark"
                + " was cleared");
        return;
      }
      if (left > 0 && h.regionsInTransition() == 0) {
        drain(old.get()); // a move that failed, or a region that arrived before the mark
      }
      waitFor(Reason.Draining, "moving " + left + " regions off " + r.getPod());
      requeue(FAST);
    }

    /**
     * The cluster goes back to normal meanwhile: the server gets back what was drained, its mark
     * goes, the balancer goes back on (finish); the drain is tried again after the timeout once
     * more, or at once after a spec change.
     */
    void drainTimedOut(PodRoll r, ServerId oldId, String what) {
      Instant retry = in.now().plus(s.podReadyTimeout());
      actions.add(new Recommission(oldId, r.getRegions() == null ? List.of() : r.getRegions()));
      st.getInFlight().remove(r);
      st.setRetryAt(retry.toString());
      block(Reason.DrainTimeout, what + "; the drain is tried again at " + retry);
    }

    /** Moves the server's regions to where they are cached best ({@link DrainTargets}). */
    void drain(ServerState server) {
      Map<String, ServerId> targets =
          DrainTargets.plan(server.regions(), drainCandidates(server.id()));
      if (targets.isEmpty() && server.regionCount() > 0) {
        waitFor(
            Reason.Draining,
            "no RegionServer can take the regions of "
                + server.id()
                + " (every other one is decommissioned, restarting or has not reported yet)");
        return;
      }
      actions.add(new Drain(server.id(), targets));
    }

    /**
     * Servers that may take a drained server's regions: live, reported, not decommissioned, and not
     * a pod of this roll in flight.
     */
    List<ServerState> drainCandidates(ServerId draining) {
      return in.hbase().live().stream()
          .filter(x -> !x.id().sameEndpoint(draining))
          .filter(ServerState::reported)
          .filter(x -> !x.decommissioned() && !in.hbase().decommissioned().contains(x.id()))
          .filter(
              x ->
                  st.getInFlight().stream()
                      .noneMatch(
                          f ->
                              podByName(f.getPod())
                                  .map(p -> p.servesAs(x.id().host()))
                                  .orElse(false)))
          .toList();
    }

    void deleting(PodRoll r, Optional<PodView> pod) {
      if (pod.isPresent() && pod.get().uid().equals(r.getUid()) && !pod.get().terminating()) {
        if (r.getOldServer() != null && !gateStillOpen(r)) {
          return; // a drained pod: what was true at admission is checked again before the delete
        }
        actions.add(new DeletePod(r.getPod(), r.getUid()));
        events.add(new Event(false, "RestartingPod", "restarting " + r.getPod() + reasonSuffix(r)));
      }
      if (r.getDeletedAt() == null) {
        r.setDeletedAt(in.now().toString());
      }
      to(r, Step.WaitingReady);
      requeue(POLL);
    }

    /**
     * The new instance serves once it has registered with the master and sent its first load
     * report; a drained pod's regions go back then, without waiting for the pod's readiness probe
     * (which may pass seconds later). A pod restarted without a drain must be Ready as well: its
     * old instance, whose start code is not known, may still be listed.
     */
    void waitingReady(PodRoll r, Optional<PodView> pod) {
      boolean newPod =
          pod.isPresent() && !pod.get().uid().equals(r.getUid()) && !pod.get().terminating();
      boolean newPodReady = newPod && pod.get().ready();
      Optional<ServerState> server =
          newPod && (newPodReady || r.getOldServer() != null)
              ? newServer(r, pod.get())
              : Optional.empty();
      if (server.isPresent()) {
        r.setNewServer(server.get().id().toString());
        r.setReadyAt(in.now().toString());
        if (s.strategy() == RolloutSpec.Strategy.DrainAndReload && r.getOldServer() != null) {
          to(r, Step.Reloading);
          actions.add(new Recommission(ServerId.parse(r.getOldServer()), r.getRegions()));
          requeue(FAST);
        } else {
          r.setHomeAt(in.now().toString());
          to(r, Step.WarmGate);
          requeue(FAST);
        }
        return;
      }
      if (timedOut(r, s.podReadyTimeout())) {
        String why =
            pod.isEmpty()
                ? "the pod was not recreated"
                : pod.get().stuck() != null
                    ? "it is " + pod.get().stuck()
                    : !pod.get().ready()
                        ? "it is not Ready"
                        : "its RegionServer did not register with the master";
        if (r.getOldServer() != null
            && in.hbase().decommissioned().contains(ServerId.parse(r.getOldServer()))) {
          // the old instance is gone: its mark goes too (the cluster as it would be without it)
          actions.add(new Recommission(ServerId.parse(r.getOldServer()), List.of()));
        }
        block(
            Reason.PodNotReady,
            r.getPod()
                + " is not serving "
                + Durations.format(s.podReadyTimeout())
                + " after its restart: "
                + why);
        return;
      }
      String what =
          newPod && (newPodReady || r.getOldServer() != null)
              ? "waiting for the RegionServer on " + r.getPod() + " to register and report"
              : "waiting for " + r.getPod() + " to be Ready";
      waitFor(Reason.WaitingForPod, what);
      requeue(newPod ? FAST : POLL);
    }

    void reloading(PodRoll r) {
      ClusterSnapshot h = in.hbase();
      if (!h.masterReachable()) {
        waitFor(Reason.HBaseUnreachable, "HBase master unreachable: " + h.error());
        return;
      }
      Optional<ServerState> now = h.live(ServerId.parse(r.getNewServer()));
      if (now.isEmpty()) {
        // The new instance went away again: wait for the next one.
        to(r, Step.WaitingReady);
        requeue(POLL);
        return;
      }
      List<String> stragglers =
          r.getRegions().stream()
              .filter(x -> !now.get().regions().contains(x))
              .filter(this::regionExists)
              .toList();
      if (stragglers.isEmpty() && h.regionsInTransition() == 0) {
        r.setHomeAt(in.now().toString());
        // written before the gate is looked at: the status shows when the regions came home
        // (homeAt), which the gate's step would otherwise take out of the roll with the pod
        to(r, Step.WarmGate);
        requeue(FAST);
        return;
      }
      if (timedOut(r, s.podReadyTimeout())) {
        block(Reason.ReloadTimeout, stragglers.size() + " regions did not return to " + r.getPod());
        return;
      }
      if (!stragglers.isEmpty() && h.regionsInTransition() == 0) {
        actions.add(new Recommission(ServerId.parse(r.getOldServer()), stragglers));
      }
      waitFor(Reason.Reloading, "moving " + stragglers.size() + " regions back to " + r.getPod());
      requeue(FAST);
    }

    /**
     * The pod runs an L2 of another capacity than the plan's (more than 2% apart; HBase reports the
     * configured size within 0.2%): HBase 2.6.4 refuses a persisted cache of another capacity at
     * start ({@code BucketCache.verifyCapacityAndClasses}: "Mismatched cache capacity"), so the
     * restarted pod starts with an empty L2.
     */
    boolean l2DroppedAtStart(CacheView c) {
      long planned = s.plannedL2Bytes();
      return c.l2CapacityBytes() != null
          && planned > 0
          && Math.abs(c.l2CapacityBytes() - planned) > planned / 50;
    }

    void warmGate(PodRoll r, Optional<PodView> pod) {
      CacheView c = in.caches().get(r.getPod());
      Double retained = null;
      if (c != null
          && c.l2UsedBytes() != null
          && r.getL2UsedBytesBefore() != null
          && r.getL2UsedBytesBefore() > 0) {
        retained = Math.min(1.0, (double) c.l2UsedBytes() / r.getL2UsedBytesBefore());
      }
      double minRetained =
          s.minRetainedFraction() != null ? s.minRetainedFraction() : DEFAULT_MIN_RETAINED;
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
      boolean timeUp = timedOut(r, s.warmTimeout());
      if ((retainedOk && hitOk) || timeUp) {
        boolean warm = retainedOk && hitOk;
        count(r, warm);
        restarted.add(
            new Restarted(
                r.getPod(),
                Instant.parse(r.getReadyAt() != null ? r.getReadyAt() : in.now().toString()),
                retained,
                warm));
        st.getInFlight().remove(r);
        events.add(
            new Event(
                !warm,
                warm ? "PodRestarted" : "PodRestartedCold",
                r.getPod()
                    + " is back"
                    + home(r)
                    + (s.cacheReset()
                        ? ", its cache reset as planned"
                        : retained != null
                            ? String.format(", %.1f%% of its L2 retained", retained * 100)
                            : "")
                    + (warm
                        ? ""
                        : " but its cache did not warm up within "
                            + Durations.format(s.warmTimeout()))));
        requeue(Duration.ZERO);
        return;
      }
      waitFor(
          Reason.WarmGate,
          "waiting for "
              + r.getPod()
              + "'s cache: "
              + (retainedOk
                  ? ""
                  : "retained "
                      + (retained == null ? "unknown" : String.format("%.2f", retained))
                      + " < "
                      + minRetained
                      + " ")
              + (hitOk ? "" : "hit ratio below " + s.minHitRatio()));
      requeue(POLL);
    }

    /**
     * For a pod's PodRestarted event: how many of its regions are on its new instance, when they
     * were all back, and how much of them HBase says is cached there (its per-region cached ratio,
     * from the last load report).
     */
    String home(PodRoll r) {
      if (r.getNewServer() == null || r.getRegions() == null || r.getRegions().isEmpty()) {
        return "";
      }
      Optional<ServerState> now = in.hbase().live(ServerId.parse(r.getNewServer()));
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
          java.util.Locale.ROOT,
          ": %d/%d regions home%s%s",
          home.size(),
          r.getRegions().size(),
          r.getDeletedAt() == null || r.getHomeAt() == null
              ? ""
              : String.format(
                  java.util.Locale.ROOT,
                  " %.1f s after its delete",
                  Duration.between(Instant.parse(r.getDeletedAt()), Instant.parse(r.getHomeAt()))
                          .toMillis()
                      / 1000.0),
          cached.isPresent()
              ? String.format(
                  java.util.Locale.ROOT,
                  ", %.0f%% of them cached there",
                  cached.getAsDouble() * 100)
              : "");
    }

    // ------------------------------------------------------------------ admission

    void admit() {
      List<PodView> outdated =
          in.pods().stream()
              .filter(p -> p.outdated(s.revision()))
              .filter(p -> !inFlight(p.name()))
              .sorted(order())
              .toList();
      if (s.paused()) {
        return; // no pod is started while paused; pods in flight finish their restart
      }
      if (st.getRetryAt() != null) {
        return; // after a failed drain, nothing new starts before the retry time
      }
      while (!outdated.isEmpty()) {
        PodView next = outdated.get(0);
        boolean servesNothing = servesNothing(next);
        // A pod that serves nothing is down already: restarting it takes nothing more down, but
        // no more than maxUnavailable restart at once. A Ready pod needs room in the budget (an
        // unready one that still serves regions is counted as down already).
        if (servesNothing
            ? st.getInFlight().size() >= s.maxUnavailable()
            : down() + (next.ready() ? 1 : 0) > maxDown()) {
          if (down() > st.getInFlight().size()) { // something else is down too: say what
            waitFor(
                Reason.ClusterNotHealthy,
                Objects.requireNonNullElse(
                    clusterGate(next),
                    down() + " RegionServers down, at most " + maxDown() + " at a time"));
          }
          return;
        }
        if (!servesNothing) {
          String gate = clusterGate(next);
          if (gate != null) {
            waitFor(Reason.ClusterNotHealthy, gate);
            requeue(POLL);
            return;
          }
          // The warm gate compares the L2 after the restart with the L2 before it: without a
          // sample now, retention could never be checked (seen on kind: a /jmx scrape that did
          // not answer left l2UsedBytesBefore null and the gate passed unchecked).
          if (s.persistent() && !s.cacheReset() && !in.caches().containsKey(next.name())) {
            waitFor(
                Reason.WaitingForCacheSample,
                "no cache sample of "
                    + next.name()
                    + " (its /jmx did not answer): the warm gate needs its L2 used bytes before the restart");
            requeue(POLL);
            return;
          }
        }
        startRollIfIdle();
        start(next, servesNothing);
        outdated = outdated.subList(1, outdated.size());
      }
    }

    /**
     * A pod that holds no regions, so restarting it costs nothing: stuck (crash-looping, image pull
     * errors, unschedulable), or not Ready and not registered with the master (or registered with
     * no region). A pod that is not Ready but still serves regions (overloaded, a slow probe) is
     * drained like any other. When the master cannot be asked, an unready pod counts as serving.
     */
    boolean servesNothing(PodView p) {
      if (p.stuck() != null) {
        return true;
      }
      if (p.ready()) {
        return false;
      }
      ClusterSnapshot h = in.hbase();
      return h.masterReachable() && serverFor(h, p).map(x -> x.regionCount() == 0).orElse(true);
    }

    /**
     * The most RegionServers down at once: maxUnavailable, but never every one (with a single
     * replica, that one: a restart of a one-server cluster always costs availability).
     */
    int maxDown() {
      return budget(s.maxUnavailable(), in.replicas());
    }

    /**
     * RegionServers down now: pods in flight, other pods not Ready or terminating, missing
     * replicas.
     */
    long down() {
      long others =
          in.pods().stream()
              .filter(p -> !inFlight(p.name()))
              .filter(p -> !p.ready() || p.terminating())
              .count();
      return st.getInFlight().size() + others + missingOutsideRoll();
    }

    /** Replicas without a pod, less those the roll deleted (they are counted in flight). */
    long missingOutsideRoll() {
      long deletedByRoll =
          st.getInFlight().stream().filter(r -> podByName(r.getPod()).isEmpty()).count();
      return Math.max(0, in.missing() - deletedByRoll);
    }

    boolean inFlight(String pod) {
      return st.getInFlight().stream().anyMatch(r -> r.getPod().equals(pod));
    }

    /**
     * Pods without their claim volumes first, lowest ordinal first (the StatefulSet controller
     * re-creates nothing above the lowest of them: see {@link PodView#missingClaimVolumes()}); then
     * stuck, then unready, then ready ones with the fewest regions; the hbase:meta host last.
     */
    Comparator<PodView> order() {
      ClusterSnapshot h = in.hbase();
      return Comparator.<PodView>comparingInt(
              p -> p.missingClaimVolumes() ? p.ordinal() : Integer.MAX_VALUE)
          .thenComparingInt(p -> p.stuck() != null ? 0 : !p.ready() ? 1 : 2)
          .thenComparing(p -> serverFor(h, p).map(x -> h.hostsMeta(x.id())).orElse(false))
          .thenComparingInt(p -> serverFor(h, p).map(ServerState::regionCount).orElse(0))
          .thenComparingInt(PodView::ordinal);
    }

    /**
     * The cluster gate again, before a destructive step (decommission, delete) of a pod admitted
     * earlier: something else may have gone down since (a RegionServer killed, a pod evicted).
     */
    boolean gateStillOpen(PodRoll r) {
      Optional<PodView> pod = podByName(r.getPod());
      String gate = pod.isEmpty() ? r.getPod() + " does not exist" : clusterGate(pod.get());
      if (gate != null) {
        waitFor(Reason.ClusterNotHealthy, gate);
        return false;
      }
      return true;
    }

    /** Why a ready pod may not go down now, or null. */
    String clusterGate(PodView candidate) {
      ClusterSnapshot h = in.hbase();
      if (!h.masterReachable()) {
        return "HBase master unreachable: " + h.error();
      }
      if (h.regionsInTransition() > 0) {
        return h.regionsInTransition() + " regions in transition";
      }
      if (!h.dead().isEmpty()) {
        return "dead RegionServers: "
            + h.dead().stream().map(ServerId::toString).collect(Collectors.joining(", "));
      }
      long othersDown =
          in.pods().stream()
              .filter(p -> !p.name().equals(candidate.name()))
              .filter(p -> !inFlight(p.name()))
              .filter(p -> !p.ready() || p.terminating())
              .count();
      if (othersDown > 0) {
        return othersDown + " other RegionServer pods are not Ready";
      }
      if (missingOutsideRoll() > 0) {
        return missingMessage();
      }
      long serving = in.pods().size() - st.getInFlight().size();
      long live =
          h.live().stream()
              .filter(x -> in.pods().stream().anyMatch(p -> p.servesAs(x.id().host())))
              .count();
      if (live < serving) {
        return live
            + " RegionServers registered with the master, "
            + serving
            + " pods should serve";
      }
      if (serverFor(h, candidate).isEmpty()) {
        return candidate.name()
            + " is Ready but its RegionServer is not registered with the master";
      }
      return null;
    }

    void start(PodView pod, boolean servesNothing) {
      PodRoll r =
          new PodRoll()
              .setPod(pod.name())
              .setUid(pod.uid())
              .setReason(
                  pod.stuck() != null
                      ? "Stuck: " + pod.stuck()
                      : !pod.ready()
                          ? "Unready"
                          : pod.templateChanged() && Objects.equals(pod.revision(), s.revision())
                              ? TEMPLATE_CHANGED
                              : null);
      CacheView c = in.caches().get(pod.name());
      // nothing to retain when HBase will drop the pod's L2 at start (another capacity than
      // planned)
      r.setL2UsedBytesBefore(c == null ? null : l2DroppedAtStart(c) ? 0L : c.l2UsedBytes());
      Optional<ServerState> server = servesNothing ? Optional.empty() : serverFor(in.hbase(), pod);
      st.getInFlight().add(r);
      // With no other RegionServer at all (a single one), a drain would wait forever: the pod is
      // restarted in place, as with InPlace. Others that cannot take regions yet (not reported)
      // make the drain wait instead.
      if (s.strategy() == RolloutSpec.Strategy.DrainAndReload
          && server.isPresent()
          && in.hbase().live().stream().anyMatch(x -> !x.id().sameEndpoint(server.get().id()))) {
        ServerState sv = server.get();
        r.setOldServer(sv.id().toString());
        r.setRegions(
            sv.regions().stream()
                .filter(x -> !META_REGION.equals(x))
                .sorted()
                .collect(Collectors.toList()));
        if (st.getBalancerWasOn() == null) {
          st.setBalancerWasOn(!Boolean.FALSE.equals(in.hbase().balancerOn()));
        }
        // Recorded now, acted on in the next step: a crash in between loses nothing.
        to(r, Step.Draining);
        requeue(Duration.ZERO);
      } else {
        to(r, Step.Deleting);
        requeue(Duration.ZERO);
      }
    }

    void startRollIfIdle() {
      if (st.getPhase() == null || st.getPhase() == Phase.Idle || st.getStartedAt() == null) {
        st.setStartedAt(in.now().toString());
        st.setCurrent(
            new RollSummary()
                .setRevision(s.revision())
                .setStartedAt(st.getStartedAt())
                .setRestarts(0)
                .setColdRestarts(0));
        long drifted =
            in.pods().stream()
                .filter(p -> p.templateChanged() && Objects.equals(p.revision(), s.revision()))
                .count();
        events.add(
            new Event(
                false,
                "RollStarted",
                "rolling RegionServers to revision "
                    + s.revision()
                    + (drifted > 0
                        ? " (" + drifted + " run an older pod template: " + TEMPLATE_CHANGED + ")"
                        : "")));
      }
      st.setPhase(Phase.Rolling);
    }

    // ------------------------------------------------------------------ finish

    Decision finish() {
      long upToDate =
          in.pods().stream()
              .filter(p -> !p.outdated(s.revision()))
              .filter(p -> !inFlight(p.name()))
              .count();
      long outdated = in.pods().size() - upToDate;
      int total = in.pods().size() + in.missing();
      st.setUpdated((int) upToDate);
      st.setTotal(total);
      st.setProgress(upToDate + "/" + total);
      if (outdated == 0
          && st.getInFlight().isEmpty()
          && in.missing() > 0
          && st.getPhase() == Phase.Rolling) {
        // A roll is not finished while a replica has no pod: it comes back on the new template,
        // but it is not serving yet.
        waitFor(Reason.WaitingForPods, missingMessage());
        outdated = in.missing();
      }
      st.setCurrentPod(
          st.getInFlight().isEmpty()
              ? null
              : st.getInFlight().stream().map(PodRoll::getPod).collect(Collectors.joining(",")));
      if (blocked != null) {
        st.setPhase(Phase.Blocked);
        st.setMessage(blocked.message());
        if (Boolean.TRUE.equals(st.getBalancerWasOn())
            && Boolean.FALSE.equals(in.hbase().balancerOn())) {
          // A blocked roll waits for a person: the cluster runs as it did before the roll
          // meanwhile (the balancer goes off again when the roll goes on).
          actions.add(new SwitchBalancer(true));
        }
      } else if (outdated == 0 && st.getInFlight().isEmpty()) {
        if (st.getPhase() == Phase.Rolling
            || st.getPhase() == Phase.Blocked
            || st.getPhase() == Phase.Paused) {
          RollSummary done = st.getCurrent();
          if (done != null) {
            done.setRevision(s.revision()).setFinishedAt(in.now().toString());
            done.setSeconds(
                Duration.between(Instant.parse(done.getStartedAt()), in.now()).toSeconds());
            st.setLastRoll(done);
            st.setCurrent(null);
          }
          events.add(
              new Event(
                  false,
                  "RollFinished",
                  "all "
                      + in.pods().size()
                      + " RegionServers run revision "
                      + s.revision()
                      + (done == null ? "" : ": " + describe(done))));
        }
        if (st.getBalancerWasOn() != null) {
          if (st.getBalancerWasOn() && in.hbase().masterReachable()) {
            actions.add(new SwitchBalancer(true));
            st.setBalancerWasOn(null);
          } else if (!st.getBalancerWasOn()) {
            st.setBalancerWasOn(null);
          } else {
            waitFor(
                Reason.HBaseUnreachable, "waiting for the master to switch the balancer back on");
            requeue(POLL);
          }
        }
        st.setPhase(Phase.Idle);
        st.setStartedAt(null);
        st.setMessage(null);
      } else if (s.paused() && st.getInFlight().isEmpty()) {
        st.setPhase(Phase.Paused);
        st.setMessage(
            "paused with " + outdated + " RegionServers still to restart (spec.rollout.paused)");
      } else {
        st.setPhase(Phase.Rolling);
        st.setMessage(waiting == null ? null : waiting.message());
      }
      Outcome outcome = blocked != null ? blocked : waiting != null ? waiting : new Proceeding();
      return new Decision(st, actions, events, restarted, outcome, requeue);
    }

    // ------------------------------------------------------------------ helpers

    /** A pod passed the warm gate: the roll's figures so far. */
    void count(PodRoll r, boolean warm) {
      RollSummary c = st.getCurrent();
      if (c == null) {
        return; // a roll started by an operator without figures: nothing to add to
      }
      c.setRestarts(c.getRestarts() + 1);
      if (!warm) {
        c.setColdRestarts(c.getColdRestarts() + 1);
      }
      if (r.getDeletedAt() != null && r.getHomeAt() != null) {
        double secs =
            Duration.between(Instant.parse(r.getDeletedAt()), Instant.parse(r.getHomeAt()))
                    .toMillis()
                / 1000.0;
        if (c.getSlowestPodSeconds() == null || secs > c.getSlowestPodSeconds()) {
          c.setSlowestPod(r.getPod());
          c.setSlowestPodSeconds(Math.round(secs * 10) / 10.0);
        }
      }
    }

    String missingMessage() {
      return in.missing()
          + " of "
          + in.replicas()
          + " RegionServer pods do not exist (the StatefulSet controller creates them)";
    }

    Optional<PodView> podByName(String name) {
      return in.pods().stream().filter(p -> p.name().equals(name)).findFirst();
    }

    /**
     * The pod's RegionServer instance newer than the one it had before the restart, having
     * reported.
     */
    Optional<ServerState> newServer(PodRoll r, PodView pod) {
      ClusterSnapshot h = in.hbase();
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

    boolean regionExists(String encoded) {
      return in.hbase().live().stream().anyMatch(x -> x.regions().contains(encoded));
    }

    void to(PodRoll r, Step step) {
      r.setStep(step);
      r.setStepStartedAt(in.now().toString());
    }

    boolean timedOut(PodRoll r, Duration limit) {
      return r.getStepStartedAt() != null
          && Duration.between(Instant.parse(r.getStepStartedAt()), in.now()).compareTo(limit) > 0;
    }

    boolean isBlocked(PodRoll r) {
      return timedOut(r, s.podReadyTimeout());
    }

    void waitFor(Reason reason, String message) {
      if (waiting == null) {
        waiting = new Wait(reason, message);
      }
      requeue(POLL);
    }

    void block(Reason reason, String message) {
      if (blocked == null) {
        blocked = new Blocked(reason, message);
        if (!message.equals(st.getMessage())) {
          events.add(new Event(true, "RollBlocked", message));
        }
      }
      requeue(BLOCKED);
    }

    void requeue(Duration d) {
      if (d.compareTo(requeue) < 0) {
        requeue = d;
      }
    }

    static String reasonSuffix(PodRoll r) {
      return r.getReason() == null ? "" : " (" + r.getReason() + ")";
    }

    /** A deep copy: the previous state is never changed. */
    static RolloutStatus copy(RolloutStatus p) {
      if (p == null) {
        return new RolloutStatus().setPhase(Phase.Idle);
      }
      RolloutStatus c = JSON.convertValue(p, RolloutStatus.class);
      if (c.getInFlight() == null) {
        c.setInFlight(new ArrayList<>());
      }
      return c;
    }
  }
}
