package dev.hbase.cache.operator.roll;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.PodRoll.Step;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.Blocked;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.EventReason;
import dev.hbase.cache.operator.roll.RollModel.Input;
import dev.hbase.cache.operator.roll.RollModel.Outcome;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.RollModel.Proceeding;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import dev.hbase.cache.operator.roll.RollModel.Restarted;
import dev.hbase.cache.operator.roll.RollModel.Wait;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One roller step's working state, which the pieces of the step share ({@link Admission}, {@link
 * PodLifecycle}, {@link ClusterGate}, {@link RollBook}, {@link BalancerSwitch}): what the step sees
 * (the input), the rollout state it changes (a copy of the previous one) and what it accumulates
 * (actions, events, completed restarts, why it waits or is blocked, when to look again). It records
 * and answers small questions about the input; it decides nothing and calls none of the pieces.
 */
final class StepState {
  static final Duration FAST = Duration.ofSeconds(1);
  static final Duration POLL = Duration.ofSeconds(5);
  static final Duration IDLE = Duration.ofSeconds(60);
  static final Duration BLOCKED = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What the step sees. */
  final Input in;

  /** The roll's knobs ({@code in.settings()}). */
  final RollModel.Settings s;

  /** The new rollout state: a copy of the previous one, changed by the step. */
  final RolloutStatus st;

  final List<Action> actions = new ArrayList<>();

  /**
   * Whether this step expires the pod's RegionServer instance ({@link Crashes}): it is dead to
   * HBase once the action is carried out, so nothing else of the step may be sent to it (a drain of
   * it, or regions sent back to it, would fail). Found by the model check (RollerModelCheckTest).
   */
  boolean expiring(String pod) {
    return actions.stream()
        .anyMatch(a -> a instanceof RollModel.ExpireServer x && x.pod().equals(pod));
  }

  final List<Event> events = new ArrayList<>();
  final List<Restarted> restarted = new ArrayList<>();

  /** {@code status.lastCrash}: a copy of the input's, changed by {@link Crashes}; or null. */
  dev.hbase.cache.api.v1alpha1.status.CrashStatus lastCrash;

  private Duration requeue = IDLE;
  private Wait waiting;
  private Blocked blocked;

  StepState(RolloutStatus previous, Input in) {
    this.in = in;
    this.s = in.settings();
    this.st = copy(previous);
    this.lastCrash =
        in.lastCrash() == null
            ? null
            : JSON.convertValue(
                in.lastCrash(), dev.hbase.cache.api.v1alpha1.status.CrashStatus.class);
  }

  ClusterSnapshot hbase() {
    return in.hbase();
  }

  Instant now() {
    return in.now();
  }

  /** The first wait of the step, or null. */
  Wait waiting() {
    return waiting;
  }

  /** Why the step is blocked, or null. */
  Blocked blocked() {
    return blocked;
  }

  Duration requeue() {
    return requeue;
  }

  /** Blocked, else waiting, else proceeding. */
  Outcome outcome() {
    return blocked != null ? blocked : waiting != null ? waiting : new Proceeding();
  }

  /** The roll waits (the first reason of the step is kept) and looks again soon. */
  void waitFor(Reason reason, String message) {
    if (waiting == null) {
      waiting = new Wait(reason, message);
    }
    requeue(POLL);
  }

  /** The roll is blocked (the first reason of the step is kept); a new message is an event. */
  void block(Reason reason, String message) {
    if (blocked == null) {
      blocked = new Blocked(reason, message);
      if (!message.equals(st.getMessage())) {
        events.add(new Event(true, EventReason.RollBlocked, message));
      }
    }
    requeue(BLOCKED);
  }

  /** Look again after {@code d} at the latest. */
  void requeue(Duration d) {
    if (d.compareTo(requeue) < 0) {
      requeue = d;
    }
  }

  void to(PodRoll r, Step step) {
    r.setStep(step);
    r.setStepStartedAt(in.now().toString());
    r.setMasterUnreachableSince(null);
  }

  /**
   * Whether the pod's step has run longer than {@code limit}, not counting an HBase master outage:
   * while one is open ({@code masterUnreachableSince}) the step's clock stands at its start.
   */
  boolean timedOut(PodRoll r, Duration limit) {
    Instant until =
        r.getMasterUnreachableSince() != null
            ? Instant.parse(r.getMasterUnreachableSince())
            : in.now();
    return r.getStepStartedAt() != null
        && Duration.between(Instant.parse(r.getStepStartedAt()), until).compareTo(limit) > 0;
  }

  /**
   * The master answers again: the outage since {@code masterUnreachableSince} does not count
   * against the pod's step, whose start moves on by it (never past {@code now}: another leader's
   * clock may differ).
   */
  static void outageOver(PodRoll r, Instant now) {
    if (r.getMasterUnreachableSince() == null) {
      return;
    }
    Duration outage = Duration.between(Instant.parse(r.getMasterUnreachableSince()), now);
    if (r.getStepStartedAt() != null && !outage.isNegative()) {
      Instant shifted = Instant.parse(r.getStepStartedAt()).plus(outage);
      r.setStepStartedAt((shifted.isAfter(now) ? now : shifted).toString());
    }
    r.setMasterUnreachableSince(null);
  }

  /** The pod of this name, below the replicas or leaving (a scale-down). */
  Optional<PodView> podByName(String name) {
    return java.util.stream.Stream.concat(in.pods().stream(), in.leaving().stream())
        .filter(p -> p.name().equals(name))
        .findFirst();
  }

  boolean inFlight(String pod) {
    return st.getInFlight().stream().anyMatch(r -> r.getPod().equals(pod));
  }

  /** A deep copy of one pod's entry. */
  static PodRoll copy(PodRoll r) {
    return JSON.convertValue(r, PodRoll.class);
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
