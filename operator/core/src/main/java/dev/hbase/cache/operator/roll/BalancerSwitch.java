package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.EventReason;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import dev.hbase.cache.operator.roll.RollModel.SwitchBalancer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * HBase's balancer during a roll: every decision to switch it off or on. A roll that drains
 * switches it off (it would move regions back onto a server being drained, or away from one being
 * reloaded) and back on when it is done, if it was on before the roll ({@code
 * status.rollout.balancerWasOn}, recorded when the first pod to drain is admitted). While the roll
 * cannot go on (blocked, or held because the policy cannot be applied) the cluster runs as it did
 * before the roll. Between pods (none in flight, the next one waiting for a gate, a cache sample or
 * its pods) it stays off for at most {@link #BETWEEN_PODS}.
 */
final class BalancerSwitch {
  /**
   * How long a roll keeps the balancer off while it waits between pods: one period of HBase's own
   * balancer ({@code hbase.balancer.period}, 5 minutes by default), so a wait costs the cluster at
   * most one balancer run. A pod in flight is bounded by podReadyTimeout instead; a roll that only
   * pauses for the next pod's admission (seconds) never reaches it.
   */
  static final Duration BETWEEN_PODS = Duration.ofMinutes(5);

  private final StepState t;

  BalancerSwitch(StepState t) {
    this.t = t;
  }

  /**
   * At the start of a step with pods in flight: off for the whole roll, whoever turned it on (a
   * blocked roll left it on: it goes off when the roll goes on).
   */
  void offWhileRolling() {
    RolloutStatus st = t.st;
    if (Boolean.TRUE.equals(st.getBalancerWasOn())
        && !st.getInFlight().isEmpty()
        && st.getPhase() != Phase.Blocked
        && Boolean.TRUE.equals(t.hbase().balancerOn())) {
      t.actions.add(new SwitchBalancer(false));
    }
  }

  /**
   * A pod admitted to be drained: whether the balancer was on before the roll, recorded once per
   * roll (an unknown state counts as on). It is switched off in the next step ({@link
   * #offWhileRolling}).
   */
  void rememberBeforeDrain() {
    if (t.st.getBalancerWasOn() == null) {
      t.st.setBalancerWasOn(!Boolean.FALSE.equals(t.hbase().balancerOn()));
    }
  }

  /**
   * A blocked roll waits for a person: the cluster runs as it did before the roll meanwhile (the
   * balancer goes off again when the roll goes on).
   */
  void backOnWhileBlocked() {
    backOnWhileHeld(t.st, t.hbase(), t.actions);
  }

  /**
   * The roll is paused between pods ({@code spec.rollout.paused}, none in flight): the cluster runs
   * as before the roll meanwhile, which may be for days. The balancer goes off again in the step
   * after the next pod is admitted ({@link #offWhileRolling}), before its drain.
   */
  void backOnWhilePaused() {
    backOnWhileHeld(t.st, t.hbase(), t.actions);
  }

  /**
   * The roll goes on with no pod in flight (waiting to admit the next): the wait is timed from its
   * start ({@code status.rollout.waitingSince}, only while the roll has the balancer off), and past
   * {@link #BETWEEN_PODS} the balancer goes back on as before the roll. It goes off again in the
   * step after the next pod is admitted ({@link #offWhileRolling}), before its drain. With a pod in
   * flight, or the roll blocked, paused or done, there is no such wait.
   */
  void boundedBetweenPods() {
    RolloutStatus st = t.st;
    if (!st.getInFlight().isEmpty() || !Boolean.TRUE.equals(st.getBalancerWasOn())) {
      notBetweenPods();
      return;
    }
    if (st.getWaitingSince() == null) {
      st.setWaitingSince(t.now().toString());
    }
    Duration left =
        Duration.between(t.now(), Instant.parse(st.getWaitingSince()).plus(BETWEEN_PODS));
    if (left.isNegative() || left.isZero()) {
      // once per wait: a balancer an administrator turns off meanwhile stays off
      String waiting = st.getMessage();
      if (st.getBalancerBackAt() == null && backOnWhileHeld(st, t.hbase(), t.actions)) {
        st.setBalancerBackAt(t.now().toString());
        t.events.add(
            new Event(false, EventReason.BalancerBackOn, Narration.backOnBetweenPods(waiting)));
      }
      if (st.getBalancerBackAt() != null) {
        st.setMessage(Narration.withBalancerBackOn(waiting));
      }
    } else {
      t.requeue(left);
    }
  }

  /** No wait between pods: a pod is in flight, or the roll is blocked, paused or done. */
  void notBetweenPods() {
    t.st.setWaitingSince(null);
    t.st.setBalancerBackAt(null);
  }

  /**
   * The roll is done: back on if it was on before the roll, once the master can be asked (until
   * then the roll waits for it).
   */
  void backOnAfterRoll() {
    RolloutStatus st = t.st;
    if (st.getBalancerWasOn() != null) {
      if (st.getBalancerWasOn() && t.hbase().masterReachable()) {
        t.actions.add(new SwitchBalancer(true));
        st.setBalancerWasOn(null);
      } else if (!st.getBalancerWasOn()) {
        st.setBalancerWasOn(null);
      } else {
        t.waitFor(Reason.HBaseUnreachable, "waiting for the master to switch the balancer back on");
        t.requeue(StepState.POLL);
      }
    }
  }

  /**
   * The policy is deleted mid-roll ({@link Roller#release}): back on if it was on before the roll.
   * HBase is not asked first (switching on a balancer that is on changes nothing); the cleanup asks
   * it afterwards, and keeps the policy until the master shows it on (controller.ReleaseStep).
   */
  static void backOnWhenReleased(RolloutStatus st, List<Action> actions) {
    if (Boolean.TRUE.equals(st.getBalancerWasOn())) {
      actions.add(new SwitchBalancer(true));
    }
  }

  /**
   * The roll holds or is blocked: back on if the roll switched it off (it was on before the roll
   * and is off now). Whether it was switched.
   */
  static boolean backOnWhileHeld(RolloutStatus st, ClusterSnapshot h, List<Action> actions) {
    if (Boolean.TRUE.equals(st.getBalancerWasOn()) && Boolean.FALSE.equals(h.balancerOn())) {
      actions.add(new SwitchBalancer(true));
      return true;
    }
    return false;
  }
}
