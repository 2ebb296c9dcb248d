package dev.hbase.cache.operator.roll;

import static dev.hbase.cache.operator.roll.RollerTest.NEW;
import static dev.hbase.cache.operator.roll.RollerTest.idle;
import static dev.hbase.cache.operator.roll.RollerTest.threeServers;
import static dev.hbase.cache.operator.roll.RollerTest.with;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.PodRoll.Step;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.Blocked;
import dev.hbase.cache.operator.roll.RollModel.Drain;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import dev.hbase.cache.operator.roll.RollModel.SwitchBalancer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cluster is always given back: whatever keeps a roll from going on (a pause, a gate that stays
 * closed, an HBase master that does not answer for minutes), the cluster runs as it did before the
 * roll meanwhile, and the roll goes on by itself once the cause is gone.
 */
class RollGivesBackTest {

  @Test
  void aPausedRollGivesTheBalancerBackAndTakesItAgainBeforeTheNextDrain() {
    FakeCluster c = threeServers();
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings(NEW),
            500,
            st -> st.getUpdated() != null && st.getUpdated() == 1,
            null);
    var paused = with(FakeCluster.settings(NEW), RolloutSpec.Strategy.DrainAndReload, 1, true);
    s = c.run(s, paused, 200, st -> st.getPhase() == Phase.Paused, null);
    assertThat(s.getPhase()).isEqualTo(Phase.Paused);
    assertThat(c.hbase.balancerOn).as("HBase's balancer once the roll is paused").isTrue();
    // paused for a long while: it stays as it was before the roll
    Instant pausedAt = c.now;
    s = c.run(s, paused, 1000, st -> c.now.isAfter(pausedAt.plus(Duration.ofHours(1))), null);
    assertThat(c.hbase.balancerOn).isTrue();
    assertThat(s.getPhase()).isEqualTo(Phase.Paused);

    List<Roller.Decision> log = new ArrayList<>();
    s = c.run(s, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).isTrue();
    List<Action> actions = log.stream().flatMap(d -> d.actions().stream()).toList();
    int off = actions.indexOf(new SwitchBalancer(false));
    int drain = indexOfFirst(actions, Drain.class);
    assertThat(off).as("the balancer switched off again when the roll went on").isNotNegative();
    assertThat(off).as("before the last pod's drain").isLessThan(drain);
    assertThat(c.hbase.balancerOn).as("and on after the roll").isTrue();
  }

  @Test
  void aRollWaitingBetweenPodsGivesTheBalancerBackAfterTheBoundAndTakesItAgainBeforeTheNextDrain() {
    FakeCluster c = threeServers();
    // the first pod (rs-1) restarting; meanwhile HBase lists a dead server (a crashed instance
    // of rs-2, say): once rs-1 is home, the gate keeps the next pod from starting, with none in
    // flight, for as long as that lasts
    RolloutStatus s = firstPodAt(c, Step.Reloading);
    assertThat(s.getInFlight()).extracting(r -> r.getPod()).containsExactly("rs-1");
    ServerId crashed = c.hbase.servers.get("rs-2").id;
    c.hbase.dead.add(new ServerId(crashed.host(), crashed.port(), crashed.startCode() - 1));
    s = c.run(s, FakeCluster.settings(NEW), 500, st -> st.getInFlight().isEmpty(), null);
    assertThat(c.restarts).containsOnlyKeys("rs-1");
    assertThat(s.getMessage()).contains("dead RegionServers");
    assertThat(c.hbase.balancerOn).as("off between the roll's pods").isFalse();
    Instant from = c.now;
    List<Roller.Decision> log = new ArrayList<>();
    s = runFor(c, s, BalancerSwitch.BETWEEN_PODS.minusSeconds(10), log);
    assertThat(c.hbase.balancerOn).as("still off before the bound").isFalse();
    assertThat(s.getWaitingSince()).isNotNull();
    assertThat(Instant.parse(s.getWaitingSince())).isBetween(from, from.plusSeconds(10));
    s = runFor(c, s, Duration.ofSeconds(20), log);
    assertThat(c.hbase.balancerOn)
        .as("back on once the roll has waited %s between pods", BalancerSwitch.BETWEEN_PODS)
        .isTrue();
    assertThat(s.getMessage())
        .contains("dead RegionServers")
        .contains("balancer back on after 5m between pods");
    assertThat(log.stream().flatMap(d -> d.events().stream()))
        .filteredOn(e -> e.reason().equals("BalancerBackOn"))
        .singleElement()
        .satisfies(e -> assertThat(e.message()).contains("dead RegionServers"));
    // switched on once: an administrator who turns it off meanwhile is not overridden
    c.hbase.balancerOn = false;
    s = runFor(c, s, Duration.ofHours(1), log);
    assertThat(c.hbase.balancerOn).as("left off as the administrator set it").isFalse();
    assertThat(log.stream().flatMap(d -> d.actions().stream()))
        .filteredOn(a -> a.equals(new SwitchBalancer(true)))
        .hasSize(1);
    assertThat(c.restarts).containsOnlyKeys("rs-1");

    // the dead server processed: the roll goes on, with the balancer off again before the next
    // drain
    c.hbase.dead.clear();
    c.hbase.balancerOn = true; // and the administrator's off is over
    log.clear();
    s = c.run(s, FakeCluster.settings(NEW), 1000, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).as("the roll finished: %s", s.getMessage()).isTrue();
    assertThat(s.getWaitingSince()).isNull();
    List<Action> actions = log.stream().flatMap(d -> d.actions().stream()).toList();
    assertThat(actions.indexOf(new SwitchBalancer(false)))
        .as("the balancer off again before the next drain")
        .isNotNegative()
        .isLessThan(indexOfFirst(actions, Drain.class));
    assertThat(c.restarts).containsOnlyKeys("rs-0", "rs-1", "rs-2");
    assertThat(c.hbase.balancerOn).as("on after the roll").isTrue();
  }

  @Test
  void aDrainedPodTheGateKeepsFromItsDeleteGetsItsRegionsBackAfterTheTimeout() {
    FakeCluster c = threeServers();
    // the first pod (rs-1, the fewest regions) drained: its drain is sent
    RolloutStatus s = firstDrainSent(c);
    assertThat(s.getInFlight()).extracting(r -> r.getPod()).containsExactly("rs-1");
    // then another pod is stuck Terminating (its node lost): the gate stays closed
    FakeCluster.Pod lost = stuckTerminating(c, "rs-0");
    List<Roller.Decision> log = new ArrayList<>();
    s = runFor(c, s, Duration.ofMinutes(15), log);
    assertThat(c.restarts).as("no pod restarted while the gate is closed").isEmpty();
    assertThat(s.getInFlight()).as("the drained pod left the roll").isEmpty();
    assertThat(c.hbase.servers.get("rs-1").regions)
        .as("rs-1's regions back on it")
        .containsExactlyInAnyOrder("b0", "b1");
    assertThat(c.hbase.decommissioned).as("its decommission mark cleared").isEmpty();
    assertThat(log)
        .extracting(Roller.Decision::outcome)
        .filteredOn(o -> o instanceof Blocked b && b.reason() == Reason.DrainTimeout)
        .first()
        .satisfies(
            o ->
                assertThat(((Blocked) o).message())
                    .contains("rs-1 was drained, but the cluster gate kept it")
                    .contains("other RegionServer pods are not Ready"));
    assertThat(c.hbase.balancerOn).as("the balancer as before the roll").isTrue();

    // the lost node's pod comes back: the roll goes on by itself after the retry time
    lost.terminating = false;
    lost.readyAt = c.now;
    s = c.run(s, FakeCluster.settings(NEW), 2000, st -> idle(st) && c.allAt(NEW), null);
    assertThat(idle(s)).isTrue();
    assertThat(c.restarts).containsOnlyKeys("rs-0", "rs-1", "rs-2");
  }

  @Test
  void aReloadOutlivingAnHBaseMasterOutageGoesOnWhenTheMasterIsBack() {
    FakeCluster c = threeServers();
    c.hbase.misplaceOnRecommission = 1; // one region of the first pod does not come home at once
    RolloutStatus s = firstPodAt(c, Step.Reloading);
    assertThat(s.getInFlight()).extracting(r -> r.getStep()).containsExactly(Step.Reloading);
    // the master is gone for 15 minutes, longer than podReadyTimeout (10m)
    c.hbase.masterReachable = false;
    s = runFor(c, s, Duration.ofMinutes(15), null);
    c.hbase.masterReachable = true;
    List<Roller.Decision> log = new ArrayList<>();
    s = c.run(s, FakeCluster.settings(NEW), 1000, st -> idle(st) && c.allAt(NEW), log);
    assertThat(log)
        .extracting(Roller.Decision::outcome)
        .as("no step blocked once the master answered again")
        .noneMatch(o -> o instanceof Blocked);
    assertThat(idle(s)).as("the roll finished: %s", s.getMessage()).isTrue();
    assertThat(c.restarts).containsOnlyKeys("rs-0", "rs-1", "rs-2");
  }

  @Test
  void aDrainThatCannotFinishStillTimesOutUnderAMasterThatAnswersEveryOtherTime() {
    FakeCluster c = threeServers();
    c.hbase.unmovable.add("b1"); // rs-1 (first) cannot be emptied
    Instant from = c.now;
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings(NEW),
            5000,
            st -> {
              if (!st.getInFlight().isEmpty()) {
                c.hbase.masterReachable = !c.hbase.masterReachable; // flapping from the drain on
              }
              return st.getPhase() == Phase.Blocked;
            },
            log);
    c.hbase.masterReachable = true;
    assertThat(s.getPhase())
        .as("blocked, not waiting for ever: %s", s.getMessage())
        .isEqualTo(Phase.Blocked);
    assertThat(log.get(log.size() - 1).outcome())
        .isInstanceOfSatisfying(
            Blocked.class, b -> assertThat(b.reason()).isEqualTo(Reason.DrainTimeout));
    // only the time the master answered counts: later than podReadyTimeout (10m), not never
    // (the master answers on the 1 s steps, not on the 5 s ones: seen 65 min; counting the outages
    // too, it would be 10)
    assertThat(Duration.between(from, c.now)).isGreaterThan(Duration.ofMinutes(30));
    assertThat(c.hbase.servers.get("rs-1").regions).containsExactlyInAnyOrder("b0", "b1");
  }

  @Test
  void aDrainedPodBeforeItsDeleteWaitsOutAMasterOutageWithoutLosingItsTime() {
    FakeCluster c = threeServers();
    RolloutStatus s = firstDrainSent(c);
    stuckTerminating(c, "rs-0"); // the gate closed
    s =
        c.run(
            s,
            FakeCluster.settings(NEW),
            100,
            st -> st.getInFlight().stream().anyMatch(r -> r.getStep() == Step.Deleting),
            null);
    // the master gone for 15 minutes: nothing is sent to it (FakeCluster fails the test if so)
    c.hbase.masterReachable = false;
    s = runFor(c, s, Duration.ofMinutes(15), null);
    assertThat(s.getInFlight()).extracting(r -> r.getStep()).containsExactly(Step.Deleting);
    c.hbase.masterReachable = true;
    Instant back = c.now;
    List<Roller.Decision> log = new ArrayList<>();
    s = c.run(s, FakeCluster.settings(NEW), 3000, st -> st.getPhase() == Phase.Blocked, log);
    assertThat(log.get(log.size() - 1).outcome())
        .isInstanceOfSatisfying(
            Blocked.class, b -> assertThat(b.reason()).isEqualTo(Reason.DrainTimeout));
    assertThat(Duration.between(back, c.now))
        .as("the gate's timeout counted from the master's return, not from the drain")
        .isGreaterThan(Duration.ofMinutes(9));
    assertThat(c.hbase.servers.get("rs-1").regions).containsExactlyInAnyOrder("b0", "b1");
  }

  @Test
  void aSpecChangeDuringAMasterOutageKeepsAWaitingPodsRegionsComingHome() {
    FakeCluster c = threeServers();
    RolloutStatus s = firstPodAt(c, Step.WaitingReady);
    assertThat(s.getInFlight()).extracting(r -> r.getPod()).containsExactly("rs-1");
    c.vanish("rs-1"); // its pod object not re-created yet
    c.hbase.masterReachable = false;
    s = runFor(c, s, Duration.ofMinutes(15), null);
    // the spec changes while the master is still gone: rs-1's restart must not be given up
    c.templateRevision = "rev-newer";
    s = c.run(s, FakeCluster.settings("rev-newer"), 1, st -> true, null);
    assertThat(s.getInFlight()).extracting(r -> r.getPod()).contains("rs-1");
    c.hbase.masterReachable = true;
    c.reappear("rs-1");
    s =
        c.run(
            s,
            FakeCluster.settings("rev-newer"),
            2000,
            st -> idle(st) && c.allAt("rev-newer"),
            null);
    assertThat(idle(s)).as("the roll finished: %s", s.getMessage()).isTrue();
    assertThat(c.hbase.servers.get("rs-1").regions)
        .as("rs-1's drained regions came home")
        .contains("b0", "b1");
  }

  @Test
  void aRestartedPodWaitingForAMasterThatDoesNotAnswerIsNotBlockedForIt() {
    FakeCluster c = threeServers();
    RolloutStatus s = firstPodAt(c, Step.WaitingReady);
    c.hbase.masterReachable = false;
    List<Roller.Decision> log = new ArrayList<>();
    s = runFor(c, s, Duration.ofMinutes(15), log);
    assertThat(log)
        .extracting(Roller.Decision::outcome)
        .as("waits for the master, not blocked by the pod's ready timeout")
        .noneMatch(o -> o instanceof Blocked)
        .anyMatch(o -> o instanceof RollModel.Wait w && w.reason() == Reason.HBaseUnreachable);
    c.hbase.masterReachable = true;
    s = c.run(s, FakeCluster.settings(NEW), 1000, st -> idle(st) && c.allAt(NEW), null);
    assertThat(idle(s)).as("the roll finished: %s", s.getMessage()).isTrue();
  }

  /** A roll to NEW from the start until its first pod (rs-1) reaches {@code step}. */
  static RolloutStatus firstPodAt(FakeCluster c, Step step) {
    return c.run(
        null,
        FakeCluster.settings(NEW),
        500,
        st -> st.getInFlight().stream().anyMatch(r -> r.getStep() == step),
        null);
  }

  /** A roll to NEW from the start until its first drain (rs-1's) is sent. */
  static RolloutStatus firstDrainSent(FakeCluster c) {
    return c.run(
        null,
        FakeCluster.settings(NEW),
        100,
        st -> c.executed.stream().anyMatch(a -> a instanceof Drain),
        null);
  }

  /** Another pod stuck Terminating (its node lost): the cluster gate stays closed. */
  static FakeCluster.Pod stuckTerminating(FakeCluster c, String pod) {
    FakeCluster.Pod p = c.pods.get(pod);
    p.terminating = true;
    p.ready = false;
    p.readyAt = null;
    // its node is lost with it: the RegionServer is gone (a live one would be drained as a stop)
    c.hbase.unregister(pod);
    return p;
  }

  /** The roller at the current revision for {@code d} of simulated time. */
  static RolloutStatus runFor(
      FakeCluster c, RolloutStatus s, Duration d, List<Roller.Decision> log) {
    Instant until = c.now.plus(d);
    return c.run(s, FakeCluster.settings(NEW), 2000, st -> c.now.isAfter(until), log);
  }

  static int indexOfFirst(List<Action> actions, Class<?> type) {
    for (int i = 0; i < actions.size(); i++) {
      if (type.isInstance(actions.get(i))) {
        return i;
      }
    }
    return -1;
  }
}
