package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.EventReason;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The roll's book in {@code status.rollout}: when a roll starts and finishes, its figures ({@code
 * current}, then {@code lastRoll}: restarts, cold restarts, the slowest pod), the progress, and the
 * phase and message a step ends with.
 */
final class RollBook {
  private final StepState t;

  RollBook(StepState t) {
    this.t = t;
  }

  /** A pod is about to be admitted: a roll starts unless one is under way (RollStarted). */
  void startIfIdle() {
    RolloutStatus st = t.st;
    if (st.getPhase() == null || st.getPhase() == Phase.Idle || st.getStartedAt() == null) {
      st.setStartedAt(t.now().toString());
      st.setCurrent(
          new RollSummary()
              .setRevision(t.s.revision())
              .setStartedAt(st.getStartedAt())
              .setRestarts(0)
              .setColdRestarts(0));
      long drifted =
          t.in.pods().stream()
              .filter(p -> p.templateChanged() && Objects.equals(p.revision(), t.s.revision()))
              .count();
      t.events.add(
          new Event(
              false, EventReason.RollStarted, Narration.rollStarted(t.s.revision(), drifted)));
    }
    st.setPhase(Phase.Rolling);
  }

  /** A pod passed the warm gate: the roll's figures so far. */
  void count(PodRoll r, boolean warm) {
    RollSummary c = t.st.getCurrent();
    if (c == null) {
      return; // a roll started by an operator without figures: nothing to add to
    }
    c.setRestarts(c.getRestarts() + 1);
    if (!warm) {
      c.setColdRestarts(c.getColdRestarts() + 1);
    }
    if (r.getDeletedAt() != null && r.getHomeAt() != null) {
      double secs =
          Duration.between(Instant.parse(r.getDeletedAt()), Instant.parse(r.getHomeAt())).toMillis()
              / 1000.0;
      if (c.getSlowestPodSeconds() == null || secs > c.getSlowestPodSeconds()) {
        c.setSlowestPod(r.getPod());
        c.setSlowestPodSeconds(Math.round(secs * 10) / 10.0);
      }
    }
  }

  /**
   * The progress at the end of a step (updated, total, the pods in flight), and how many
   * RegionServers are still to restart.
   */
  long tally() {
    RolloutStatus st = t.st;
    long upToDate =
        t.in.pods().stream()
            .filter(p -> !p.outdated(t.s.revision()))
            .filter(p -> !t.inFlight(p.name()))
            .count();
    long outdated = t.in.pods().size() - upToDate;
    int total = t.in.pods().size() + t.in.missing();
    st.setUpdated((int) upToDate);
    st.setTotal(total);
    st.setProgress(upToDate + "/" + total);
    if (outdated == 0
        && st.getInFlight().isEmpty()
        && t.in.missing() > 0
        && st.getPhase() == Phase.Rolling) {
      // A roll is not finished while a replica has no pod: it comes back on the new template,
      // but it is not serving yet.
      t.waitFor(Reason.WaitingForPods, Narration.missing(t.in));
      outdated = t.in.missing();
    }
    st.setCurrentPod(
        st.getInFlight().isEmpty()
            ? null
            : st.getInFlight().stream().map(PodRoll::getPod).collect(Collectors.joining(",")));
    return outdated;
  }

  /** The step is blocked: the phase says so, the message says why. */
  void blocked() {
    t.st.setPhase(Phase.Blocked);
    t.st.setMessage(t.blocked().message());
  }

  /**
   * Every pod runs the revision: a roll under way finishes (its figures become {@code lastRoll},
   * RollFinished), and the rollout goes idle.
   */
  void finished() {
    RolloutStatus st = t.st;
    if (st.getPhase() == Phase.Rolling
        || st.getPhase() == Phase.Blocked
        || st.getPhase() == Phase.Paused) {
      RollSummary done = st.getCurrent();
      if (done != null) {
        done.setRevision(t.s.revision()).setFinishedAt(t.now().toString());
        done.setSeconds(Duration.between(Instant.parse(done.getStartedAt()), t.now()).toSeconds());
        st.setLastRoll(done);
        st.setCurrent(null);
      }
      if (st.getStartedAt() != null) { // not after a stop alone: no roll was started
        t.events.add(
            new Event(
                false,
                EventReason.RollFinished,
                Narration.rollFinished(t.in.pods().size(), t.s.revision(), done)));
      }
    }
    st.setPhase(Phase.Idle);
    st.setStartedAt(null);
    st.setMessage(null);
  }

  /** Pods are still to restart: paused (nothing in flight), or rolling with the step's wait. */
  void goingOn(long outdated) {
    RolloutStatus st = t.st;
    if (t.s.paused() && st.getInFlight().isEmpty()) {
      st.setPhase(Phase.Paused);
      st.setMessage(
          "paused with " + outdated + " RegionServers still to restart (spec.rollout.paused)");
    } else {
      st.setPhase(Phase.Rolling);
      st.setMessage(t.waiting() == null ? null : t.waiting().message());
    }
  }
}
