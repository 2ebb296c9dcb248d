package dev.hbase.cache.operator.roll;

import static dev.hbase.cache.operator.roll.RollerTest.NEW;
import static dev.hbase.cache.operator.roll.RollerTest.idle;
import static dev.hbase.cache.operator.roll.RollerTest.with;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.DeletePod;
import dev.hbase.cache.operator.roll.RollModel.Drain;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.Recommission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Stops the roll did not decide (issue: every stop is a warm stop): a pod someone else deletes or
 * evicts has its regions moved to where they are cached while its preStop hook holds its
 * RegionServer, and gets them back when it returns; a pod a scale-down removes gives them to the
 * others and leaves; a pod scaled away mid-roll does not hold the roll.
 */
class RollStopsTest {

  /** Three servers at the revision, idle: nothing to roll. */
  static FakeCluster settled() {
    FakeCluster c =
        new FakeCluster(3, NEW)
            .regions("rs-0", "a0", "a1", "a2")
            .regions("rs-1", "b0", "b1", "b2")
            .regions("rs-2", "c0", "c1")
            .meta("rs-2");
    // every server caches every region (as after a warm roll): a drain has a warm target for each
    c.hbase
        .servers
        .values()
        .forEach(
            s ->
                List.of("a0", "a1", "a2", "b0", "b1", "b2", "c0", "c1")
                    .forEach(r -> s.cachedMb.put(r, c.hbase.regionMb)));
    return c;
  }

  static List<Event> events(List<Roller.Decision> log) {
    return log.stream().flatMap(d -> d.events().stream()).toList();
  }

  static List<Action> actions(List<Roller.Decision> log) {
    return log.stream().flatMap(d -> d.actions().stream()).toList();
  }

  @Test
  void aPodDeletedBySomeoneElseIsDrainedBeforeItStopsAndItsRegionsGoHomeWhenItReturns() {
    FakeCluster c = settled();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    assertThat(idle(s)).isTrue();

    c.stopByOther("rs-1", "EvictionByEvictionAPI");
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus mid =
        c.run(s, FakeCluster.settings(NEW), 20, st -> !st.getInFlight().isEmpty(), log);
    PodRoll r = mid.getInFlight().get(0);
    assertThat(r.getPod()).isEqualTo("rs-1");
    assertThat(r.getStoppedBy()).isEqualTo("EvictionByEvictionAPI");
    assertThat(r.getRegions()).containsExactly("b0", "b1", "b2");

    s = c.run(mid, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).as("the stop is over: %s", s.getMessage()).isTrue();
    assertThat(c.closedCold).as("regions rs-1 still held when its RegionServer stopped").isZero();
    assertThat(c.drainedToUncached).as("regions drained to a server without them cached").isZero();
    assertThat(c.drainedToCached).isEqualTo(3);
    assertThat(c.hbase.regionsOf("rs-1"))
        .as("rs-1's regions back on it")
        .containsExactlyInAnyOrder("b0", "b1", "b2");
    assertThat(c.hbase.marks()).as("decommission marks left").isEmpty();
    assertThat(c.hbase.balancerOn).as("the balancer on again").isTrue();
    assertThat(actions(log)).noneMatch(a -> a instanceof DeletePod);
    assertThat(c.restarts).containsOnlyKeys("rs-1");
    assertThat(events(log))
        .extracting(Event::reason)
        .contains("WarmStop", "PodRestarted")
        .doesNotContain("RollStarted", "RollFinished");
    assertThat(c.maxDown).isEqualTo(1);
  }

  @Test
  void withoutTheDrainTheStoppingServerClosesItsRegionsCold() {
    // what the test above guards: the same stop with the roller not reacting to it (InPlace
    // renders no preStop hook and takes no stop in flight)
    FakeCluster c = settled();
    c.preStopHook = false;
    var inPlace = with(FakeCluster.settings(NEW), RolloutSpec.Strategy.InPlace, 1, false);
    RolloutStatus s = c.run(null, inPlace, 5, RollerTest::idle, null);
    c.stopByOther("rs-1", "Deleted");
    List<Roller.Decision> log = new ArrayList<>();
    s = c.run(s, inPlace, 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(c.closedCold).isEqualTo(3);
    assertThat(c.hbase.regionsOf("rs-1")).as("rs-1 back with none of its regions").isEmpty();
    assertThat(actions(log)).noneMatch(a -> a instanceof Drain);
  }

  @Test
  void aStopDuringARollIsDrainedWithoutTheGateAndTheRollWaitsForIt() {
    FakeCluster c = RollerTest.threeServers();
    List<Roller.Decision> log = new ArrayList<>();
    // the roll drains its first pod (rs-1, the fewest regions)
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings(NEW),
            50,
            st -> st.getInFlight().stream().anyMatch(f -> f.getStep() == PodRoll.Step.WaitingReady),
            log);
    // a node drain evicts rs-0 meanwhile (a PodDisruptionBudget would refuse it; kubectl delete
    // does not ask)
    c.stopByOther("rs-0", "Deleted");
    s = c.run(s, FakeCluster.settings(NEW), 2000, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).as("roll over: %s", s.getMessage()).isTrue();
    assertThat(c.closedCold).as("regions closed cold by a stopping server").isZero();
    assertThat(c.hbase.regionsOf("rs-0")).containsExactlyInAnyOrder("a0", "a1", "a2", "a3");
    assertThat(c.restarts).containsEntry("rs-0", 1).containsEntry("rs-1", 1);
    assertThat(c.hbase.marks()).isEmpty();
  }

  @Test
  void aScaleDownMovesTheLeavingServersRegionsToTheOthersAndTheStopEnds() {
    FakeCluster c = settled();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.scaleTo(2);
    List<Roller.Decision> log = new ArrayList<>();
    s =
        c.run(
            s, FakeCluster.settings(NEW), 500, st -> idle(st) && !c.pods.containsKey("rs-2"), log);
    assertThat(idle(s)).as("stop over: %s", s.getMessage()).isTrue();
    assertThat(c.closedCold).as("regions rs-2 still held when it stopped").isZero();
    assertThat(c.hbase.regionsOf("rs-0").size() + c.hbase.regionsOf("rs-1").size())
        .as("every region on the two servers left")
        .isEqualTo(9);
    assertThat(s.getInFlight()).isEmpty();
    assertThat(c.hbase.marks()).as("rs-2's decommission mark cleared").isEmpty();
    assertThat(actions(log)).contains(new Recommission(firstDrained(log), List.of()));
    assertThat(events(log)).extracting(Event::reason).contains("WarmStop", "ScaledDown");
    assertThat(log.stream().flatMap(d -> d.state().getInFlight().stream()))
        .filteredOn(f -> f.getPod().equals("rs-2"))
        .allSatisfy(f -> assertThat(f.getStoppedBy()).isEqualTo("ScaledDown"));
  }

  @Test
  void aScaleUpBringsTheRemovedPodBackOnItsKeptCacheAndItsRegionsWithIt() {
    FakeCluster c = settled();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    s.setCacheVolumesWhenScaled("Retain"); // as RollStep records it from the StatefulSet
    c.scaleTo(2);
    s =
        c.run(
            s, FakeCluster.settings(NEW), 500, st -> idle(st) && !c.pods.containsKey("rs-2"), null);
    assertThat(s.getScaledDown())
        .singleElement()
        .satisfies(r -> assertThat(r.getRegions()).containsExactly("c0", "c1"));

    c.scaleTo(3);
    List<Roller.Decision> log = new ArrayList<>();
    s = c.run(s, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).as("back: %s", s.getMessage()).isTrue();
    assertThat(c.hbase.regionsOf("rs-2"))
        .as("rs-2's regions back on it, where its kept cache holds them")
        .contains("c0", "c1");
    assertThat(s.getScaledDown()).isNull();
    assertThat(events(log)).extracting(Event::reason).contains("ScaledUp", "PodRestarted");
    assertThat(log).noneMatch(Roller.Decision::degraded);
  }

  @Test
  void withItsCacheVolumeDeletedAScaledDownPodIsNotRemembered() {
    FakeCluster c = settled();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    s.setCacheVolumesWhenScaled("Delete");
    c.scaleTo(2);
    s =
        c.run(
            s, FakeCluster.settings(NEW), 500, st -> idle(st) && !c.pods.containsKey("rs-2"), null);
    assertThat(s.getScaledDown()).isNull();
  }

  @Test
  void aServerAScaleDownStoppedStaysDeadInHBaseWithoutClosingTheGateForTheNextRoll() {
    FakeCluster c = settled();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    ServerId gone = c.hbase.servers.get("rs-2").id;
    ServerId rs1 = c.hbase.servers.get("rs-1").id;
    ServerId earlierOfRs1 = new ServerId(rs1.host(), rs1.port(), rs1.startCode() - 1);
    c.scaleTo(2);
    s =
        c.run(
            s, FakeCluster.settings(NEW), 500, st -> idle(st) && !c.pods.containsKey("rs-2"), null);
    // HBase lists the stopped server as dead until a server registers at its endpoint (real
    // HBase: DrainAndReloadIT), which a permanent scale-down never brings
    c.hbase.dead.add(gone);
    // a dead instance of a pod the StatefulSet still has closes the gate, as before
    c.hbase.dead.add(earlierOfRs1);
    c.restarts.clear();
    c.templateRevision = "rev-next";
    List<Roller.Decision> log = new ArrayList<>();
    s = c.run(s, FakeCluster.settings("rev-next"), 50, st -> false, log);
    assertThat(c.restarts).as("nothing restarted while rs-1's dead instance is listed").isEmpty();
    assertThat(s.getMessage()).contains("dead RegionServers: " + earlierOfRs1);
    assertThat(s.getMessage()).doesNotContain(gone.host());

    c.hbase.dead.remove(earlierOfRs1);
    s =
        c.run(
            s, FakeCluster.settings("rev-next"), 1000, st -> idle(st) && c.allAt("rev-next"), log);
    assertThat(idle(s)).as("the next roll finished: %s", s.getMessage()).isTrue();
    assertThat(c.restarts).containsOnlyKeys("rs-0", "rs-1");
    assertThat(c.hbase.dead)
        .as("HBase still lists it: nothing was sent to clear it")
        .contains(gone);
  }

  @Test
  void aPodScaledAwayWhileTheRollRestartsItDoesNotHoldTheRoll() {
    FakeCluster c = RollerTest.threeServers();
    c.restartTime = Duration.ofMinutes(30); // rs-1 does not come back before the scale-down
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings(NEW),
            100,
            st ->
                st.getInFlight().stream()
                    .anyMatch(
                        f -> f.getPod().equals("rs-1") && f.getStep() == PodRoll.Step.WaitingReady),
            null);
    // the StatefulSet is scaled to 1 while rs-1 restarts: rs-1 and rs-2 are gone for good
    c.replicas = 1;
    c.pods.remove("rs-1");
    c.hbase.unregister("rs-1");
    c.stopByOther("rs-2", "Deleted");
    c.restartTime = Duration.ofSeconds(20);
    List<Roller.Decision> log = new ArrayList<>();
    s =
        c.run(
            s,
            FakeCluster.settings(NEW),
            1000,
            st -> idle(st) && c.pods.size() == 1 && c.allAt(NEW),
            log);
    assertThat(s.getPhase()).as("roll: %s", s.getMessage()).isEqualTo(Phase.Idle);
    assertThat(log).noneMatch(Roller.Decision::degraded);
    assertThat(events(log)).extracting(Event::reason).contains("ScaledDown");
  }

  @Test
  void aStoppedPodThatDoesNotComeBackLeavesTheRollWithAWarningNotABlock() {
    FakeCluster c = settled();
    c.restartTime = Duration.ofHours(2); // its node is gone: the pod is not scheduled again
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.stopByOther("rs-0", "DeletionByTaintManager");
    List<Roller.Decision> log = new ArrayList<>();
    s = c.run(s, FakeCluster.settings(NEW), 2000, st -> idle(st), log);
    assertThat(idle(s)).isTrue();
    assertThat(log).noneMatch(Roller.Decision::degraded);
    assertThat(events(log))
        .filteredOn(e -> e.reason().equals("StoppedPodNotBack"))
        .singleElement()
        .satisfies(e -> assertThat(e.warning()).isTrue());
    assertThat(c.hbase.marks()).isEmpty();
    assertThat(c.closedCold).isZero();
  }

  /** A warm gate that holds a while: the pod's entry stays in flight after its regions are home. */
  static RollModel.Settings slowGate() {
    return new RollModel.Settings(
        NEW,
        RolloutSpec.Strategy.DrainAndReload,
        1,
        false,
        Duration.ofMinutes(10),
        0.95,
        0.99,
        Duration.ofMinutes(5),
        true,
        false,
        0);
  }

  @Test
  void aPodStoppedAgainDuringItsWarmGateIsDrainedAgainAndItsRegionsComeHomeOnceMore() {
    FakeCluster c = settled();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.stopByOther("rs-1", "Deleted");
    List<Roller.Decision> log = new ArrayList<>();
    s =
        c.run(
            s,
            slowGate(),
            500,
            st -> st.getInFlight().stream().anyMatch(f -> f.getStep() == PodRoll.Step.WarmGate),
            log);
    // the returned instance is evicted in turn (a node drain during its warm gate)
    c.stopByOther("rs-1", "EvictionByEvictionAPI");
    s = c.run(s, slowGate(), 4000, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).as("over: %s", s.getMessage()).isTrue();
    assertThat(c.closedCold).as("regions closed cold by the second stop").isZero();
    assertThat(c.hbase.regionsOf("rs-1")).containsExactlyInAnyOrder("b0", "b1", "b2");
    assertThat(events(log)).filteredOn(e -> e.reason().equals("WarmStop")).hasSize(2);
  }

  @Test
  void aScaleDownOfTwoDoesNotDrainTheFirstOntoTheNextToGo() {
    // OrderedReady 3 -> 1: rs-2 stops first while rs-1, also going, is not terminating yet
    FakeCluster c = settled();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.replicas = 1;
    c.stopByOther("rs-2", "Deleted");
    List<Roller.Decision> log = new ArrayList<>();
    s =
        c.run(
            s, FakeCluster.settings(NEW), 500, st -> idle(st) && !c.pods.containsKey("rs-2"), log);
    assertThat(c.hbase.regionsOf("rs-0"))
        .as("rs-2's regions on rs-0, the one that stays")
        .contains("c0", "c1");
    assertThat(c.closedCold).isZero();
  }

  @Test
  void aPodStuckTerminatingWithItsServerLiveIsNotTakenAgainAndAgain() {
    // its node cut off from the API server but not from HBase: the pod stays terminating
    FakeCluster c = settled();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.stopByOther("rs-0", "DeletionByTaintManager");
    FakeCluster.Pod p = c.pods.get("rs-0");
    p.heldUntil = null; // the kubelet never learns of the delete: the RegionServer keeps running
    p.readyAt = null;
    List<Roller.Decision> log = new ArrayList<>();
    s = c.run(s, FakeCluster.settings(NEW), 3000, RollerTest::idle, log);
    assertThat(idle(s)).isTrue();
    assertThat(c.hbase.marks())
        .as("the live server keeps its mark: no region goes to it")
        .isNotEmpty();
    s = c.run(s, FakeCluster.settings(NEW), 3000, st -> false, log);
    assertThat(events(log))
        .extracting(Event::reason)
        .containsOnlyOnce("WarmStop", "StoppedPodNotBack");
  }

  private static dev.hbase.cache.operator.hbase.ServerId firstDrained(List<Roller.Decision> log) {
    return actions(log).stream()
        .filter(a -> a instanceof Drain)
        .map(a -> ((Drain) a).server())
        .findFirst()
        .orElseThrow();
  }
}
