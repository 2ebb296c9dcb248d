package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.status.CrashStatus;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.Blocked;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.EventReason;
import dev.hbase.cache.operator.roll.RollModel.Input;
import dev.hbase.cache.operator.roll.RollModel.Outcome;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import dev.hbase.cache.operator.roll.RollModel.Recommission;
import dev.hbase.cache.operator.roll.RollModel.Restarted;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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
 *
 * <p>This class is the public entry point and the coordinator of a step; the step's work is done by
 * package-private pieces that share one {@link StepState} (the input, the rollout state being
 * changed, the actions, events and waits accumulated):
 *
 * <ul>
 *   <li>{@link Admission}: which out-of-date pods start their restart now, in which order;
 *   <li>{@link Stops}: pods someone else deletes or evicts, taken in flight to be drained warm;
 *   <li>{@link Crashes}: a RegionServer the kubelet saw die is expired in HBase at once;
 *   <li>{@link Homecomings}: a RegionServer restarted in its pod (no delete) gets its regions back;
 *   <li>{@link PodLifecycle}: a pod in flight, from its drain to the warm gate;
 *   <li>{@link ClusterGate}: may a pod go down now (the cluster's health and the budget);
 *   <li>{@link RollBook}: a roll's start, figures, progress, phase and message;
 *   <li>{@link BalancerSwitch}: every decision to switch HBase's balancer off or on;
 *   <li>{@link Narration}: the text of events and messages.
 * </ul>
 */
public final class Roller {

  /**
   * The most RegionServers down at once: maxUnavailable, but never every one (with a single
   * replica, that one). The PodDisruptionBudget of the RegionServers allows the same.
   */
  public static int budget(int maxUnavailable, int replicas) {
    return ClusterGate.budget(maxUnavailable, replicas);
  }

  /** The reason of a pod restarted because another manager changed the pod template. */
  static final String TEMPLATE_CHANGED = Narration.TEMPLATE_CHANGED;

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
      Duration requeueAfter,
      CrashStatus lastCrash) {

    /** A decision that leaves {@code status.lastCrash} as it was (null). */
    public Decision(
        RolloutStatus state,
        List<Action> actions,
        List<Event> events,
        List<Restarted> restarted,
        Outcome outcome,
        Duration requeueAfter) {
      this(state, actions, events, restarted, outcome, requeueAfter, null);
    }

    public boolean degraded() {
      return outcome instanceof Blocked;
    }
  }

  private Roller() {}

  /**
   * One step. The pieces share the step's state ({@link StepState}) and call each other only
   * downwards: Admission and PodLifecycle use ClusterGate, RollBook and BalancerSwitch; all of them
   * use StepState and Narration; none calls back into Roller.
   */
  public static Decision step(RolloutStatus previous, Input in) {
    // HBase only as the policy's own cluster ({@link OwnCluster}): a snapshot that shows a server
    // of no pod of the namespace refuses the step whole; one that cannot show it (no server
    // registered) refuses a step that would write to HBase
    String notOwn = OwnCluster.refusal(in.hbase(), in.allPods(), in.zone());
    if (notOwn != null && OwnCluster.foreign(in.hbase(), in.allPods(), in.zone())) {
      return refused(previous, notOwn);
    }
    Decision d = stepOnOwnCluster(previous, in);
    if (notOwn != null && d.actions().stream().anyMatch(OwnCluster::writesHBase)) {
      return refused(previous, notOwn);
    }
    return d;
  }

  /**
   * The step refused because HBase is not shown to be the policy's: the roll's state as it was,
   * Blocked with the refusal as its message (a Warning event when that message is new), and nothing
   * sent, to HBase or to a pod. It goes on from there once the cluster is the policy's.
   */
  private static Decision refused(RolloutStatus previous, String why) {
    RolloutStatus st = StepState.copy(previous);
    List<Event> events =
        why.equals(st.getMessage())
            ? List.of()
            : List.of(new Event(true, EventReason.ForeignCluster, why));
    st.setPhase(Phase.Blocked);
    st.setMessage(why);
    return new Decision(
        st,
        List.of(),
        events,
        List.of(),
        new Blocked(Reason.ForeignCluster, why),
        StepState.BLOCKED);
  }

  private static Decision stepOnOwnCluster(RolloutStatus previous, Input in) {
    StepState t = new StepState(previous, in);
    ClusterGate gate = new ClusterGate(t);
    RollBook book = new RollBook(t);
    BalancerSwitch balancer = new BalancerSwitch(t);
    PodLifecycle lifecycle = new PodLifecycle(t, gate, book);
    Admission admission = new Admission(t, gate, book, balancer);
    Stops stops = new Stops(t, balancer);
    Homecomings homecomings = new Homecomings(t, balancer);

    // first, whatever the roll's state: a RegionServer the kubelet saw die is expired at once, and
    // its action goes before any other (the first of a step is always sent)
    new Crashes(t).admit();

    boolean newRevision = !Objects.equals(t.st.getRevision(), t.s.revision());
    if (newRevision) {
      // A spec change unblocks: pods stuck on the old revision are out of date again. That holds
      // before the ready timeout too (seen on kind: a bad JVM flag and podReadyTimeout 30s, then
      // both reverted; under the restored 10m the crash-looping instance was not "blocked" yet,
      // so the roll waited for it to become Ready on the bad template, which it never would).
      t.st.getInFlight().removeIf(lifecycle::failedOnAnOldRevision);
      t.st.setRevision(t.s.revision());
    }
    if (t.st.getRetryAt() != null) {
      if (newRevision || !t.now().isBefore(Instant.parse(t.st.getRetryAt()))) {
        t.st.setRetryAt(null); // a spec change, or the backoff after a failed drain is over
      } else if (t.st.getInFlight().isEmpty()) {
        stops.admit(); // a stop is drained whatever the roll's state
        // the same message: no new event (none left when another pod finished meanwhile)
        t.block(
            Reason.DrainTimeout,
            Objects.requireNonNullElse(
                t.st.getMessage(), "a drain timed out: the roll goes on at " + t.st.getRetryAt()));
        orphans(t, in);
        return finish(t, book, balancer);
      }
    }
    balancer.offWhileRolling();
    for (PodRoll r : List.copyOf(t.st.getInFlight())) {
      lifecycle.advance(r);
    }
    stops.admit(); // before the roll's admission: a stopping pod is the stop's, not the roll's
    homecomings.admit(); // a server restarted in its pod gets its regions back before a drain
    if (t.blocked() == null) {
      admission.admit();
    }
    orphans(t, in);
    return finish(t, book, balancer);
  }

  /**
   * A mark the status lost (the second record has it): given back as the roll goes on, on a cluster
   * shown to be the policy's only. Not while it cannot be shown (no server registered): a write to
   * HBase would refuse the whole step then ({@link #step}), the restarts of pods with it.
   */
  private static void orphans(StepState t, Input in) {
    if (OwnCluster.refusal(in.hbase(), in.allPods(), in.zone()) == null) {
      t.actions.addAll(
          Owed.orphanedMarks(in.recordedMarks(), t.st, t.hbase(), t.actions, in.allPods()));
    }
  }

  /** The step's end: progress, phase and message, the balancer, and the decision. */
  private static Decision finish(StepState t, RollBook book, BalancerSwitch balancer) {
    long outdated = book.tally();
    if (t.blocked() != null) {
      book.blocked();
      balancer.notBetweenPods();
      balancer.backOnWhileBlocked();
    } else if (outdated == 0 && t.st.getInFlight().isEmpty()) {
      book.finished();
      balancer.notBetweenPods();
      balancer.backOnAfterRoll();
    } else {
      book.goingOn(outdated);
      if (t.st.getPhase() == Phase.Paused) {
        balancer.notBetweenPods();
        balancer.backOnWhilePaused();
      } else {
        balancer.boundedBetweenPods();
      }
    }
    return new Decision(
        t.st, t.actions, t.events, t.restarted, t.outcome(), t.requeue(), t.lastCrash);
  }

  /**
   * Whether a step needs the HBase master's view (and fresh cache samples): some pod is not at the
   * revision, some pod is stopping that is not in flight ({@code pods} with the leaving ones), a
   * container restarted in its pod lately ({@link Homecomings}), or the previous roll left work
   * (pods in flight, a balancer to switch back on). An idle cluster is not asked.
   */
  public static boolean needsHBase(
      RolloutStatus previous, List<PodView> pods, String revision, Instant now) {
    return needsHBase(previous, null, pods, revision, now);
  }

  /**
   * Same, and a RegionServer container terminated lately or the last crash's regions still followed
   * ({@link Crashes}).
   */
  public static boolean needsHBase(
      RolloutStatus previous,
      CrashStatus lastCrash,
      List<PodView> pods,
      String revision,
      Instant now) {
    return pods.stream().anyMatch(p -> p.outdated(revision))
        || Crashes.pending(pods, lastCrash, now)
        || Homecomings.recent(pods, now)
        || Stops.pending(previous, pods)
        || Stops.returning(previous, pods)
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
   * The policy is deleted mid-roll: what HBase gets back, as a roll would leave it. The balancer as
   * before the roll ({@link BalancerSwitch}, its one owner), first, as it matters most; then each
   * drained server's decommission mark cleared (its regions stay where the drain put them: the
   * operator that would send them home is going). The caller carries each out on its own, best
   * effort. Empty when the roll left HBase as it found it.
   */
  public static List<Action> release(RolloutStatus previous) {
    return release(previous, List.of());
  }

  /**
   * Same, and the marks of the servers in {@code recordedMarks} (their ServerNames, as {@link
   * #marked} gave them to a second record) that the state no longer holds: a status lost after a
   * drain began still clears that server's mark (its regions stay where the drain put them).
   */
  public static List<Action> release(
      RolloutStatus previous, java.util.Collection<String> recordedMarks) {
    List<Action> actions = releaseOf(previous);
    List<String> held = marked(previous);
    for (String m : recordedMarks) {
      if (!held.contains(m)) {
        try {
          actions.add(new Recommission(ServerId.parse(m), List.of()));
        } catch (IllegalArgumentException notAServerName) {
          continue; // a record edited by hand
        }
      }
    }
    return actions;
  }

  /**
   * The servers a roll holds decommissioned or may mark next (each in-flight pod's old instance):
   * what {@link #release} clears, as ServerNames, for a record kept beside the status.
   */
  public static List<String> marked(RolloutStatus st) {
    if (st == null || st.getInFlight() == null) {
      return List.of();
    }
    return st.getInFlight().stream()
        .map(PodRoll::getOldServer)
        .filter(Objects::nonNull)
        .distinct()
        .toList();
  }

  /**
   * What a second record of the marks holds after a step: the servers recorded and those the state
   * holds ({@link #marked}); with {@code after}, the snapshot the step was taken on, a recorded
   * server the state no longer holds goes once that snapshot shows it unmarked (it stays while the
   * master does not answer, and when the status lost it mid-drain).
   */
  public static List<String> marksToRecord(
      List<String> recorded, RolloutStatus state, ClusterSnapshot after) {
    List<String> held = marked(state);
    List<String> kept =
        after == null
            ? recorded
            : recorded.stream()
                .filter(
                    m ->
                        held.contains(m)
                            || !after.masterReachable()
                            || after.decommissioned().stream()
                                .anyMatch(d -> d.toString().equals(m)))
                .toList();
    return java.util.stream.Stream.concat(kept.stream(), held.stream()).distinct().toList();
  }

  private static List<Action> releaseOf(RolloutStatus previous) {
    List<Action> actions = new ArrayList<>();
    if (previous == null) {
      return actions;
    }
    BalancerSwitch.backOnWhenReleased(previous, actions);
    if (previous.getInFlight() != null) {
      for (PodRoll f : previous.getInFlight()) {
        if (f.getOldServer() != null) {
          // a status edited by hand may hold a server name that does not parse: its mark stays,
          // and the balancer and every other server are still given back
          try {
            actions.add(new Recommission(ServerId.parse(f.getOldServer()), List.of()));
          } catch (IllegalArgumentException notAServerName) {
            continue;
          }
        }
      }
    }
    return actions;
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
   * @param zone the policy's namespace in DNS: nothing is given back to a cluster that is not shown
   *     to be the policy's ({@link OwnCluster}; without pods, by the DNS names of its servers only)
   */
  public static Decision hold(
      RolloutStatus previous, List<PodView> pods, ClusterSnapshot hbase, String why, Zone zone) {
    return hold(previous, pods, hbase, why, zone, List.of());
  }

  /**
   * Same, and the marks of {@code recordedMarks} (the second record of the marks) that the state no
   * longer holds cleared ({@link Owed#orphanedMarks}), on the policy's own cluster only.
   */
  public static Decision hold(
      RolloutStatus previous,
      List<PodView> pods,
      ClusterSnapshot hbase,
      String why,
      Zone zone,
      List<String> recordedMarks) {
    RolloutStatus st = StepState.copy(previous);
    List<Action> actions = new ArrayList<>();
    List<Event> events = new ArrayList<>();
    if (!hbase.masterReachable()) {
      return new Decision(
          st,
          actions,
          events,
          List.of(),
          new Blocked(Reason.HBaseUnreachable, "held (" + why + "); " + hbase.error()),
          StepState.POLL);
    }
    // what a hold gives back is HBase's too: only to the policy's own cluster
    String notOwn = OwnCluster.refusal(hbase, pods == null ? List.of() : pods, zone);
    if (notOwn != null) {
      String message = "held (" + why + "); " + notOwn;
      if (!message.equals(st.getMessage())) {
        events.add(new Event(true, EventReason.ForeignCluster, message));
      }
      st.setPhase(Phase.Blocked);
      st.setMessage(message);
      return new Decision(
          st,
          actions,
          events,
          List.of(),
          new Blocked(Reason.ForeignCluster, message),
          StepState.BLOCKED);
    }
    st.getInFlight().forEach(r -> StepState.outageOver(r, hbase.at()));
    boolean balancerBackOn = BalancerSwitch.backOnWhileHeld(st, hbase, actions);
    List<String> returned = new ArrayList<>();
    for (PodRoll r : List.copyOf(st.getInFlight())) {
      // A drained pod is deleted in the step that finds its drain complete, so "Draining" may
      // already be deleted (the status write after the delete failed): the pod as observed says,
      // or, when the pods cannot be observed, whether its old instance still serves.
      // And its old instance still live: one that died meanwhile takes no region back; and
      // reported: one that has registered but sent no load report yet takes none either (HBase
      // refuses it, NotReady), the next hold sends them (both found by the model check,
      // RollerModelCheckTest).
      boolean notDeleted =
          switch (r.getStep()) {
            case Draining -> pods == null || sameInstanceRunning(pods, r);
            case Deleting -> pods != null && sameInstanceRunning(pods, r);
            default -> false;
          };
      notDeleted &=
          r.getOldServer() == null
              || hbase
                  .live(ServerId.parse(r.getOldServer()))
                  .map(ClusterSnapshot.ServerState::reported)
                  .orElse(false);
      // a stop's server goes down anyway: its regions are not sent back to it
      if (notDeleted && r.getOldServer() != null && !RollModel.isStop(r)) {
        actions.add(
            new Recommission(
                ServerId.parse(r.getOldServer()),
                r.getRegions() == null ? List.of() : r.getRegions()));
        st.getInFlight().remove(r);
        returned.add(r.getPod());
      }
    }
    if (pods != null) { // whose servers they are cannot be told without the pods
      actions.addAll(Owed.orphanedMarks(recordedMarks, st, hbase, actions, pods));
    }
    String message = Narration.held(why, balancerBackOn, returned);
    if (!actions.isEmpty()) {
      events.add(new Event(true, EventReason.RollHeld, message));
    }
    st.setPhase(Phase.Blocked);
    st.setMessage(message);
    st.setCurrentPod(
        st.getInFlight().isEmpty()
            ? null
            : st.getInFlight().stream().map(PodRoll::getPod).collect(Collectors.joining(",")));
    return new Decision(
        st,
        actions,
        events,
        List.of(),
        new Blocked(Reason.PolicyInvalid, message),
        StepState.BLOCKED);
  }

  private static boolean sameInstanceRunning(List<PodView> pods, PodRoll r) {
    return pods.stream()
        .anyMatch(
            p -> p.name().equals(r.getPod()) && p.uid().equals(r.getUid()) && !p.terminating());
  }

  /** A finished roll in a sentence (the RollFinished event). */
  public static String describe(RollSummary r) {
    return Narration.describe(r);
  }
}
