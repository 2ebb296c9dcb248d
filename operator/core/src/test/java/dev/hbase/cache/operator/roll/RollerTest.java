package dev.hbase.cache.operator.roll;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.PodRoll.Step;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.Blocked;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import dev.hbase.cache.operator.roll.RollModel.Wait;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The roller's decisions against a simulated cluster (Strimzi's KafkaRollerTest is the model). */
class RollerTest {
  static final String NEW = "rev-new";

  static FakeCluster threeServers() {
    // rs-1 has the fewest regions, rs-2 hosts hbase:meta: the order must be rs-1, rs-0, rs-2.
    return new FakeCluster(3, "rev-old")
        .regions("rs-0", "a0", "a1", "a2", "a3")
        .regions("rs-1", "b0", "b1")
        .regions("rs-2", "c0", "c1", "c2")
        .meta("rs-2");
  }

  static boolean idle(RolloutStatus s) {
    return s.getPhase() == Phase.Idle;
  }

  static RollModel.Settings with(
      RollModel.Settings s, RolloutSpec.Strategy strategy, int maxUnavailable, boolean paused) {
    return copy(s, strategy, maxUnavailable, paused, s.cacheReset(), s.plannedL2Bytes());
  }

  static RollModel.Settings withCacheReset(RollModel.Settings s) {
    return copy(s, s.strategy(), s.maxUnavailable(), s.paused(), true, s.plannedL2Bytes());
  }

  static RollModel.Settings withPlannedL2(RollModel.Settings s, long bytes) {
    return copy(s, s.strategy(), s.maxUnavailable(), s.paused(), s.cacheReset(), bytes);
  }

  private static RollModel.Settings copy(
      RollModel.Settings s,
      RolloutSpec.Strategy strategy,
      int maxUnavailable,
      boolean paused,
      boolean cacheReset,
      long plannedL2Bytes) {
    return new RollModel.Settings(
        s.revision(),
        strategy,
        maxUnavailable,
        paused,
        s.podReadyTimeout(),
        s.minRetainedFraction(),
        s.minHitRatio(),
        s.warmTimeout(),
        s.persistent(),
        cacheReset,
        plannedL2Bytes);
  }

  @Test
  void drainAndReloadRollsOneAtATimeFewestRegionsFirstMetaLast() {
    FakeCluster c = threeServers();
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).isTrue();
    assertThat(c.restartOrder).containsExactly("rs-1", "rs-0", "rs-2");
    assertThat(c.restarts)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
    assertThat(c.maxDown).isEqualTo(1);
    // every pod got its own regions back, on its new instance
    // every pod got its own regions back, on its new instance; hbase:meta, moved off rs-2 alone
    // before its drain, stays where it went (moving it back would stall every client again)
    assertThat(c.hbase.servers.get("rs-0").regions)
        .containsExactlyInAnyOrder("a0", "a1", "a2", "a3");
    assertThat(c.hbase.servers.get("rs-1").regions)
        .containsExactlyInAnyOrder("b0", "b1", RollModel.META_REGION);
    assertThat(c.hbase.servers.get("rs-2").regions).containsExactlyInAnyOrder("c0", "c1", "c2");
    // the balancer was off during the roll and is back on; no decommission mark is left
    assertThat(c.executed)
        .filteredOn(a -> a instanceof RollModel.SwitchBalancer)
        .extracting(a -> ((RollModel.SwitchBalancer) a).on())
        .containsExactly(false, true);
    assertThat(c.hbase.balancerOn).isTrue();
    assertThat(c.hbase.decommissioned).isEmpty();
    assertThat(s.getUpdated()).isEqualTo(3);
    assertThat(s.getProgress()).isEqualTo("3/3");
    assertThat(log)
        .flatExtracting(Roller.Decision::restarted)
        .extracting(RollModel.Restarted::pod)
        .containsExactly("rs-1", "rs-0", "rs-2");
    assertThat(log)
        .flatExtracting(Roller.Decision::restarted)
        .allSatisfy(r -> assertThat(r.retainedFraction()).isEqualTo(1.0));
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .extracting(RollModel.Event::reason)
        .contains("RollStarted", "RollFinished");
    // each PodRestarted event: its regions home, how long after the delete, how much cached there
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .filteredOn(e -> e.reason().equals("PodRestarted") && e.message().startsWith("rs-1"))
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.message())
                    .matches(
                        "rs-1 is back: 2/2 regions home \\d+\\.\\d s after its delete, 100% of them"
                            + " cached there, 100.0% of its L2 retained"));
    // the roll's figures: in the status (lastRoll) and in the RollFinished event
    RollSummary last = s.getLastRoll();
    assertThat(s.getCurrent()).isNull();
    assertThat(last.getRevision()).isEqualTo(NEW);
    assertThat(last.getRestarts()).isEqualTo(3);
    assertThat(last.getColdRestarts()).isZero();
    assertThat(last.getSeconds())
        .isEqualTo(
            Duration.between(
                    Instant.parse(last.getStartedAt()), Instant.parse(last.getFinishedAt()))
                .toSeconds())
        .isPositive();
    assertThat(last.getSlowestPod()).isIn("rs-0", "rs-1", "rs-2");
    // delete -> Ready takes the simulated restart time, then the reload
    assertThat(last.getSlowestPodSeconds()).isGreaterThan(c.restartTime.toSeconds());
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .filteredOn(e -> e.reason().equals("RollFinished"))
        .singleElement()
        .satisfies(e -> assertThat(e.message()).contains(Roller.describe(last)));
  }

  @Test
  void aDrainSendsEachRegionWhereItsBlocksAreCached() {
    FakeCluster c = threeServers();
    // rs-1 is admitted first; what rs-0 and rs-2 cache of its regions decides where they go
    c.hbase.servers.get("rs-0").cachedMb.put("b1", 40);
    c.hbase.servers.get("rs-2").cachedMb.put("b0", 40);
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    Roller.Decision d2 = Roller.step(d.state(), c.input(FakeCluster.settings(NEW)));
    assertThat(d2.actions())
        .filteredOn(a -> a instanceof RollModel.Drain)
        .singleElement()
        .satisfies(
            a ->
                assertThat(((RollModel.Drain) a).targets())
                    .containsOnly(
                        Map.entry("b0", c.hbase.servers.get("rs-2").id),
                        Map.entry("b1", c.hbase.servers.get("rs-0").id)));
  }

  @Test
  void theNextRollDrainsEachRegionToTheServerThatCachedItInTheLastOne() {
    FakeCluster c = threeServers();
    c.run(null, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), null);
    Map<String, ServerId> first = drainTargets(c.executed);
    int movesBefore = c.hbase.moves;
    assertThat(c.drainedToUncached)
        .as("the first roll's drains: nothing cached anywhere")
        .isPositive();

    c.executed.clear();
    c.drainedToCached = 0;
    c.drainedToUncached = 0;
    c.templateRevision = "rev-3";
    RolloutStatus s =
        c.run(null, FakeCluster.settings("rev-3"), 500, st -> idle(st) && c.allAt("rev-3"), null);
    assertThat(idle(s)).isTrue();
    Map<String, ServerId> second = drainTargets(c.executed);
    first.remove(RollModel.META_REGION); // it stays where a drain took it: its source differs
    assertThat(second.keySet()).containsAll(first.keySet());
    // same host and port (the start code changes with each restart)
    first.forEach(
        (region, target) ->
            assertThat(second.get(region).sameEndpoint(target))
                .as(
                    "%s drained to %s in the first roll, %s in the second",
                    region, target, second.get(region))
                .isTrue());
    assertThat(c.hbase.moves).isGreaterThan(movesBefore);
    // the first roll had to send regions where they had never been; the second found every one
    // cached where it went (the roll is warm from the second on)
    assertThat(c.drainedToUncached).as("drained to a server without their blocks").isZero();
    assertThat(c.drainedToCached).isGreaterThanOrEqualTo(first.size());
  }

  @Test
  void aDrainThatTimesOutGivesTheClusterBackAndIsTriedAgainLater() {
    FakeCluster c = threeServers();
    c.hbase.unmovable.add("b1"); // rs-1 (first) cannot be emptied
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 1000, st -> st.getPhase() == Phase.Blocked, log);
    Roller.Decision last = log.get(log.size() - 1);
    assertThat(reason(last)).isEqualTo(Reason.DrainTimeout);
    assertThat(s.getMessage()).contains("rs-1").contains("went back").contains("tried again at");
    // the cluster as before the roll: rs-1 serves its regions again, unmarked, balancer on
    assertThat(c.hbase.servers.get("rs-1").regions).containsExactlyInAnyOrder("b0", "b1");
    assertThat(c.hbase.decommissioned).isEmpty();
    assertThat(c.hbase.balancerOn).isTrue();
    assertThat(s.getInFlight()).isEmpty();
    assertThat(c.restarts).isEmpty();
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .filteredOn(e -> e.reason().equals("RollBlocked"))
        .hasSize(1);

    // nothing starts during the backoff (ten minutes, polled every 30 s): one event, no restart
    List<Roller.Decision> waiting = new ArrayList<>();
    s = c.run(s, FakeCluster.settings(NEW), 19, st -> false, waiting);
    assertThat(s.getPhase()).isEqualTo(Phase.Blocked);
    assertThat(waiting).flatExtracting(Roller.Decision::actions).isEmpty();
    assertThat(waiting).flatExtracting(Roller.Decision::events).isEmpty();
    assertThat(c.hbase.decommissioned).isEmpty();

    // the cause gone, the next try drains and the roll finishes
    c.hbase.unmovable.clear();
    s = c.run(s, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(idle(s)).isTrue();
    assertThat(s.getRetryAt()).isNull();
    assertThat(c.restarts)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
  }

  @Test
  void aDrainWithNowhereToGoTimesOutAndGivesTheClusterBack() {
    FakeCluster c = threeServers();
    // someone else marked the other two servers: no RegionServer may take rs-1's regions
    var marked = List.of(c.hbase.servers.get("rs-0").id, c.hbase.servers.get("rs-2").id);
    c.hbase.decommissioned.addAll(marked);
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 1000, st -> st.getPhase() == Phase.Blocked, log);
    assertThat(s.getPhase()).as("the roll after 1000 looks").isEqualTo(Phase.Blocked);
    assertThat(reason(log.get(log.size() - 1))).isEqualTo(Reason.DrainTimeout);
    assertThat(s.getMessage())
        .contains("rs-1's drain could not begin within 10m")
        .contains("no RegionServer can take the regions")
        .contains("tried again at");
    // the cluster as before the roll: balancer on, rs-1 unmarked with its regions, the marks
    // someone else set left alone
    assertThat(c.hbase.balancerOn).isTrue();
    assertThat(c.hbase.decommissioned).containsExactlyInAnyOrderElementsOf(marked);
    assertThat(c.hbase.servers.get("rs-1").regions).containsExactlyInAnyOrder("b0", "b1");
    assertThat(s.getInFlight()).isEmpty();
    assertThat(c.restarts).isEmpty();

    // their owner clears the marks: the roll goes on after the backoff and finishes
    c.hbase.decommissioned.clear();
    s = c.run(s, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(idle(s)).isTrue();
    assertThat(c.restarts)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
  }

  @Test
  void aGateClosedPastTheTimeoutBeforeTheDrainBlocksWithTheBalancerOn() {
    FakeCluster c = threeServers();
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 1, st -> true, log); // admission
    assertThat(s.getInFlight())
        .singleElement()
        .extracting(PodRoll::getStep)
        .isEqualTo(PodRoll.Step.Draining);
    assertThat(c.hbase.decommissioned).as("admitted, not drained yet").isEmpty();
    // another server goes down for good (a lost node) before the drain begins
    String admitted = s.getInFlight().get(0).getPod();
    String lost =
        c.pods.keySet().stream().filter(p -> !p.equals(admitted)).findFirst().orElseThrow();
    c.pods.get(lost).ready = false;
    s = c.run(s, FakeCluster.settings(NEW), 1000, st -> st.getPhase() == Phase.Blocked, log);
    assertThat(s.getPhase()).as("the roll after 1000 looks").isEqualTo(Phase.Blocked);
    assertThat(reason(log.get(log.size() - 1))).isEqualTo(Reason.DrainTimeout);
    assertThat(s.getMessage())
        .contains(admitted + "'s drain could not begin within 10m")
        .contains("not Ready");
    assertThat(c.hbase.balancerOn).as("HBase's balancer while Blocked").isTrue();
    assertThat(c.hbase.decommissioned).isEmpty();
    assertThat(s.getInFlight()).isEmpty();
    assertThat(c.restarts).isEmpty();
  }

  @Test
  void serversThatHaveNotReportedYetMakeTheDrainWaitNotSkip() {
    FakeCluster c = threeServers();
    c.now = c.now.minus(c.hbase.reportDelay); // every server registered, none reported yet
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).isTrue();
    assertThat(drainTargets(c.executed).keySet()).contains("b0", "b1", "a0", "c0");
    assertThat(c.hbase.servers.get("rs-1").regions).contains("b0", "b1");
    assertThat(c.hbase.servers.get("rs-0").regions).doesNotContain("b0", "b1");
  }

  @Test
  void aSingleRegionServerIsRestartedWithoutADrainNobodyCouldTakeItsRegions() {
    FakeCluster c = new FakeCluster(1, "rev-old").regions("rs-0", "a0", "a1").meta("rs-0");
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 200, st -> idle(st) && c.allAt(NEW), null);
    assertThat(idle(s)).isTrue();
    assertThat(c.restarts).containsOnly(Map.entry("rs-0", 1));
    assertThat(c.executed).noneMatch(a -> a instanceof RollModel.Drain);
  }

  @Test
  void regionsGoBackOnceTheNewInstanceReportsWithoutWaitingForTheReadinessProbe() {
    FakeCluster c = threeServers();
    c.readinessLag = Duration.ofSeconds(10); // the chart's probe period
    List<Roller.Decision> log = new ArrayList<>();
    c.run(null, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    // each restarted pod got its regions back while it was not Ready yet
    assertThat(c.recommissionedWhileUnready).containsExactlyInAnyOrder("rs-0", "rs-1", "rs-2");
    assertThat(c.maxDown).isEqualTo(1);
  }

  @Test
  void withRegionServerGroupsEachDrainStaysInsideTheDrainedServersGroup() {
    // rs-0 and rs-1 in group g1, rs-2 and rs-3 in default: without the group filter rs-1's
    // regions go to rs-2 or rs-3 (fewer regions, or a higher rendezvous hash) as well
    FakeCluster c =
        new FakeCluster(4, "rev-old")
            .regions("rs-0", "a0", "a1", "a2", "a3", "a4", "a5")
            .regions("rs-1", "b0", "b1", "b2", "b3", "b4", "b5")
            .regions("rs-2", "c0")
            .regions("rs-3", "d0")
            .meta("rs-3");
    c.hbase.servers.values().stream()
        .filter(s -> s.id.host().startsWith("rs-0.") || s.id.host().startsWith("rs-1."))
        .forEach(s -> c.hbase.groups.put(s.id.hostAndPort(), "g1"));
    List<String> crossings = new ArrayList<>();
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings(NEW),
            500,
            st -> {
              c.executed.stream()
                  .filter(a -> a instanceof RollModel.Drain)
                  .map(a -> (RollModel.Drain) a)
                  .forEach(
                      d ->
                          d.targets()
                              .forEach(
                                  (region, to) -> {
                                    boolean g1 = inG1(d.server()), toG1 = inG1(to);
                                    if (g1 != toG1) {
                                      crossings.add(region + ": " + d.server() + " -> " + to);
                                    }
                                  }));
              return idle(st) && c.allAt(NEW);
            },
            null);
    assertThat(idle(s)).isTrue();
    assertThat(drainTargets(c.executed)).isNotEmpty();
    assertThat(crossings).as("drains that left their RegionServer group").isEmpty();
    assertThat(c.restarts).containsOnlyKeys("rs-0", "rs-1", "rs-2", "rs-3");
  }

  private static boolean inG1(ServerId id) {
    return id.host().startsWith("rs-0.") || id.host().startsWith("rs-1.");
  }

  static Map<String, ServerId> drainTargets(List<Action> executed) {
    Map<String, ServerId> out = new java.util.HashMap<>();
    executed.stream()
        .filter(a -> a instanceof RollModel.Drain)
        .forEach(a -> out.putAll(((RollModel.Drain) a).targets()));
    return out;
  }

  @Test
  void aReplicaWithoutAPodCountsInProgressAndNoOtherPodGoesDown() {
    FakeCluster c = threeServers();
    c.vanish("rs-0"); // evicted; the StatefulSet controller has not re-created it yet
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 30, st -> false, log);

    assertThat(c.restarts).as("a RegionServer is already down: nobody else is restarted").isEmpty();
    assertThat(s.getProgress()).isEqualTo("0/3");
    assertThat(s.getTotal()).isEqualTo(3);
    assertThat(log.get(log.size() - 1).outcome())
        .isEqualTo(
            new Wait(
                Reason.ClusterNotHealthy,
                "1 of 3 RegionServer pods do not exist (the StatefulSet controller creates them)"));

    c.reappear("rs-0"); // re-created from the new template: nothing to do for it
    s = c.run(s, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).isTrue();
    assertThat(c.restarts).containsOnly(Map.entry("rs-1", 1), Map.entry("rs-2", 1));
    assertThat(c.maxDown).isEqualTo(1);
    assertThat(s.getProgress()).isEqualTo("3/3");
  }

  @Test
  void aRollDoesNotFinishWhileAReplicaHasNoPod() {
    FakeCluster c = threeServers();
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 500, st -> c.restartOrder.size() == 3, log);
    c.vanish("rs-1"); // already updated, then evicted while rs-2 restarts
    s = c.run(s, FakeCluster.settings(NEW), 60, st -> false, log);

    assertThat(s.getPhase()).isEqualTo(Phase.Rolling);
    assertThat(s.getInFlight()).isEmpty();
    assertThat(s.getProgress()).isEqualTo("2/3");
    assertThat(reason(log.get(log.size() - 1))).isEqualTo(Reason.WaitingForPods);
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .extracting(RollModel.Event::reason)
        .doesNotContain("RollFinished");

    c.reappear("rs-1");
    s = c.run(s, FakeCluster.settings(NEW), 100, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).isTrue();
    assertThat(s.getProgress()).isEqualTo("3/3");
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .extracting(RollModel.Event::reason)
        .containsOnlyOnce("RollFinished");
    assertThat(c.restarts)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
  }

  @Test
  void aBalancerThatWasOffStaysOff() {
    FakeCluster c = threeServers();
    c.hbase.balancerOn = false;
    c.run(null, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(c.executed).noneMatch(a -> a instanceof RollModel.SwitchBalancer);
    assertThat(c.hbase.balancerOn).isFalse();
  }

  @Test
  void recommissionWaitsForTheNewInstancesFirstReport() {
    FakeCluster c = threeServers();
    c.hbase.reportDelay = Duration.ofSeconds(8);
    // FakeCluster asserts on every recommission that the target has reported.
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(idle(s)).isTrue();
  }

  @Test
  void stragglersAreSentBackAgain() {
    FakeCluster c = threeServers();
    c.hbase.misplaceOnRecommission = 1;
    c.run(null, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(c.hbase.servers.get("rs-1").regions).contains("b0", "b1");
    assertThat(c.hbase.servers.get("rs-0").regions)
        .containsExactlyInAnyOrder("a0", "a1", "a2", "a3");
    assertThat(c.executed)
        .filteredOn(a -> a instanceof RollModel.Recommission)
        .hasSizeGreaterThan(3);
  }

  @Test
  void inPlaceNeitherDrainsNorTouchesTheBalancer() {
    FakeCluster c = threeServers();
    var s = with(FakeCluster.settings(NEW), RolloutSpec.Strategy.InPlace, 1, false);
    c.run(null, s, 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(c.restarts).hasSize(3).containsValue(1).doesNotContainValue(2);
    assertThat(c.executed)
        .noneMatch(
            a ->
                a instanceof RollModel.Drain
                    || a instanceof RollModel.Recommission
                    || a instanceof RollModel.SwitchBalancer);
    assertThat(c.maxDown).isEqualTo(1);
  }

  @Test
  void maxUnavailableTwoRestartsTwoAtOnceButNeverThree() {
    FakeCluster c = new FakeCluster(4, "rev-old");
    var s = with(FakeCluster.settings(NEW), RolloutSpec.Strategy.InPlace, 2, false);
    c.run(null, s, 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(c.maxDown).isEqualTo(2);
    assertThat(c.restarts).hasSize(4).doesNotContainValue(2);
  }

  @Test
  void stuckPodGoesFirstWithoutWaitingForTheClusterGate() {
    FakeCluster c = threeServers();
    FakeCluster.Pod p = c.pods.get("rs-0");
    p.ready = false;
    p.stuck = "CrashLoopBackOff";
    c.hbase
        .servers
        .get("rs-1")
        .regions
        .addAll(c.hbase.servers.remove("rs-0").regions); // it serves nothing
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.state().getInFlight()).extracting(PodRoll::getPod).containsExactly("rs-0");
    assertThat(d.state().getInFlight().get(0).getReason()).isEqualTo("Stuck: CrashLoopBackOff");
    assertThat(d.state().getInFlight().get(0).getStep()).isEqualTo(PodRoll.Step.Deleting);
    // the next step deletes it, although only 2 of 3 RegionServers are live
    Roller.Decision d2 = Roller.step(d.state(), c.input(FakeCluster.settings(NEW)));
    assertThat(d2.actions()).containsExactly(new RollModel.DeletePod("rs-0", "rs-0-uid-0"));
  }

  @Test
  void podsWithoutTheirClaimVolumesGoFirstLowestOrdinalFirst() {
    // Seen on kind: after the cache volume template is added (StatefulSet re-created, orphan), the
    // StatefulSet controller tries to add the volume to every old pod, the API server refuses, and
    // it stops at the lowest such ordinal. Deleting rs-1 (fewest regions) first would leave it
    // never re-created; rs-0 must go first, then rs-1, then rs-2 (although it hosts hbase:meta).
    FakeCluster c = threeServers();
    c.pods.values().forEach(p -> p.missingClaimVolumes = true);
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings(NEW),
            500,
            st -> idle(st) && c.allAt(NEW),
            new ArrayList<>());
    assertThat(idle(s)).isTrue();
    assertThat(c.restartOrder).containsExactly("rs-0", "rs-1", "rs-2");
    assertThat(c.maxDown).isEqualTo(1);
  }

  @Test
  void persistentModeWaitsForACacheSampleBeforeRestartingAReadyPod() {
    FakeCluster c = threeServers();
    RollModel.Input full = c.input(FakeCluster.settings(NEW));
    java.util.Map<String, RollModel.CacheView> caches = new java.util.HashMap<>(full.caches());
    caches.remove("rs-1"); // its /jmx did not answer
    Roller.Decision d =
        Roller.step(
            null,
            new RollModel.Input(
                full.settings(),
                full.pods(),
                full.hbase(),
                caches,
                full.now(),
                full.replicas(),
                full.leaving(),
                full.zone()));
    assertThat(d.state().getInFlight()).isEmpty();
    assertThat(d.actions()).isEmpty();
    assertThat(reason(d)).isEqualTo(Reason.WaitingForCacheSample);
    // with the sample it goes, and records the L2 to compare after the restart
    Roller.Decision d2 = Roller.step(d.state(), c.input(FakeCluster.settings(NEW)));
    assertThat(d2.state().getInFlight()).extracting(PodRoll::getPod).containsExactly("rs-1");
    assertThat(d2.state().getInFlight().get(0).getL2UsedBytesBefore()).isNotNull();
  }

  @Test
  void podsOnAnOlderPodTemplateAreRolledLikeOutdatedOnesThenTheRollIsDone() {
    // helm upgrade changed the pod template (an annotation): the revision is the same, the pods
    // run the old template, and only the roll may restart them
    FakeCluster c = new FakeCluster(3, NEW);
    c.pods.get("rs-0").templateChanged = true;
    c.pods.get("rs-2").templateChanged = true;
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus end =
        c.run(null, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(end)).isTrue();
    assertThat(c.restarts).containsExactlyInAnyOrderEntriesOf(Map.of("rs-0", 1, "rs-2", 1));
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .filteredOn(e -> e.reason().equals("RollStarted"))
        .singleElement()
        .satisfies(e -> assertThat(e.message()).contains("2 run an older pod template"));
    assertThat(log)
        .flatExtracting(d -> d.state().getInFlight())
        .extracting(PodRoll::getReason)
        .containsOnly(Roller.TEMPLATE_CHANGED);
    assertThat(log)
        .flatExtracting(Roller.Decision::actions)
        .filteredOn(a -> a instanceof RollModel.Drain)
        .as("drained like any other restart")
        .hasSize(2);
    assertThat(Roller.needsHBase(end, c.podViews(), NEW, c.now)).isFalse();
  }

  @Test
  void aPolicyDeletedMidRollGivesTheBalancerBackFirstThenTheDrainedServersMark() {
    FakeCluster c = threeServers();
    RollModel.Settings s = FakeCluster.settings(NEW);
    RolloutStatus mid = c.run(null, s, 100, st -> drainedNotDeleted(c, st), null);
    PodRoll drained = mid.getInFlight().get(0);
    assertThat(c.hbase.balancerOn).isFalse();

    List<RollModel.Action> release = Roller.release(mid);
    release.forEach(c::apply);
    assertThat(release)
        .containsExactly(
            new RollModel.SwitchBalancer(true),
            new RollModel.Recommission(ServerId.parse(drained.getOldServer()), List.of()));
    assertThat(c.hbase.balancerOn).as("the balancer as before the roll").isTrue();
    assertThat(c.hbase.decommissioned).as("no mark left").isEmpty();

    // a roll that found the balancer off leaves it off; one that left nothing changed gives nothing
    mid.setBalancerWasOn(false);
    assertThat(Roller.release(mid)).doesNotHaveAnyElementsOfTypes(RollModel.SwitchBalancer.class);
    assertThat(Roller.release(new RolloutStatus())).isEmpty();
    assertThat(Roller.release(null)).isEmpty();

    // an oldServer that does not parse (a hand-edited status) costs only its own mark
    mid.setBalancerWasOn(true);
    mid.getInFlight().add(0, new PodRoll().setPod("hbase-regionserver-9").setOldServer("garbage"));
    assertThat(Roller.release(mid))
        .containsExactly(
            new RollModel.SwitchBalancer(true),
            new RollModel.Recommission(ServerId.parse(drained.getOldServer()), List.of()));
  }

  @Test
  void aPolicyThatCannotBeAppliedMidRollGivesTheClusterBackThenTheRollGoesOn() {
    FakeCluster c = threeServers();
    RollModel.Settings s = FakeCluster.settings(NEW);
    // run until the first pod is drained (decommissioned, its regions elsewhere), not yet deleted
    RolloutStatus mid = c.run(null, s, 100, st -> drainedNotDeleted(c, st), null);
    PodRoll drained = mid.getInFlight().get(0);
    assertThat(c.hbase.balancerOn).isFalse();
    assertThat(c.hbase.decommissioned).hasSize(1);
    assertThat(Roller.needsHold(mid)).isTrue();

    Roller.Decision held =
        Roller.hold(mid, c.podViews(), c.hbase.snapshot(), "PlanRefused", FakeCluster.ZONE);
    held.actions().forEach(c::apply);
    assertThat(held.actions())
        .containsExactly(
            new RollModel.SwitchBalancer(true),
            new RollModel.Recommission(
                ServerId.parse(drained.getOldServer()), drained.getRegions()));
    assertThat(held.state().getInFlight()).isEmpty();
    assertThat(held.state().getPhase()).isEqualTo(Phase.Blocked);
    assertThat(held.outcome()).isInstanceOf(Blocked.class);
    assertThat(held.events()).extracting(RollModel.Event::reason).containsExactly("RollHeld");
    assertThat(c.hbase.balancerOn).as("the balancer as before the roll").isTrue();
    assertThat(c.hbase.decommissioned).as("no mark left").isEmpty();
    assertThat(c.hbase.servers.get(drained.getPod()).regions)
        .as("the drained server has its regions back")
        .containsAll(drained.getRegions());
    assertThat(c.restarts).as("nothing restarted while held").isEmpty();

    // held again later: nothing more to do
    Roller.Decision again =
        Roller.hold(
            held.state(), c.podViews(), c.hbase.snapshot(), "PlanRefused", FakeCluster.ZONE);
    assertThat(again.actions()).isEmpty();
    assertThat(again.events()).isEmpty();

    // valid again: the roll goes on and restarts each pod once, the balancer back on at the end
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus end = c.run(held.state(), s, 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(end)).isTrue();
    assertThat(c.restarts)
        .containsExactlyInAnyOrderEntriesOf(Map.of("rs-0", 1, "rs-1", 1, "rs-2", 1));
    assertThat(c.maxDown).isLessThanOrEqualTo(1);
    assertThat(c.hbase.balancerOn).isTrue();
    assertThat(c.hbase.decommissioned).isEmpty();
  }

  @Test
  void unreadyPodsGoBeforeReadyOnes() {
    FakeCluster c = threeServers();
    c.pods.get("rs-2").ready = false; // up but not Ready (e.g. still opening regions)
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.state().getInFlight()).extracting(PodRoll::getPod).containsExactly("rs-2");
    assertThat(d.state().getInFlight().get(0).getReason()).isEqualTo("Unready");
  }

  @Test
  void anUnreadyPodThatStillServesRegionsIsDrainedNotJustDeleted() {
    FakeCluster c = threeServers();
    c.pods.get("rs-2").ready =
        false; // overloaded, a slow readiness probe: its regions are still on it
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.state().getInFlight())
        .extracting(PodRoll::getPod, PodRoll::getStep)
        .containsExactly(tuple("rs-2", PodRoll.Step.Draining));
    assertThat(d.state().getInFlight().get(0).getRegions()).containsExactly("c0", "c1", "c2");
    Roller.Decision d2 = Roller.step(d.state(), c.input(FakeCluster.settings(NEW)));
    assertThat(d2.actions())
        .filteredOn(a -> a instanceof RollModel.Drain)
        .extracting(a -> ((RollModel.Drain) a).server())
        .containsExactly(c.hbase.servers.get("rs-2").id);
    assertThat(d2.actions()).noneMatch(a -> a instanceof RollModel.DeletePod);
  }

  @Test
  void anUnreadyPodWithoutRegionsIsRestartedWithoutADrain() {
    FakeCluster c = threeServers();
    c.pods.get("rs-1").ready = false;
    c.hbase.unregister("rs-1"); // not registered with the master: it serves nothing
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.state().getInFlight())
        .extracting(PodRoll::getPod, PodRoll::getStep)
        .containsExactly(tuple("rs-1", PodRoll.Step.Deleting));
  }

  @Test
  void pausedStartsNoPodAtAllNotEvenAnUnreadyOne() {
    FakeCluster c = threeServers();
    c.pods.get("rs-1").ready = false;
    c.hbase.unregister("rs-1");
    var paused = with(FakeCluster.settings(NEW), RolloutSpec.Strategy.DrainAndReload, 1, true);
    Roller.Decision d = Roller.step(null, c.input(paused));
    assertThat(d.state().getInFlight()).isEmpty();
    assertThat(d.actions()).isEmpty();
    assertThat(d.state().getPhase()).isEqualTo(Phase.Paused);
  }

  @ParameterizedTest
  @ValueSource(ints = {3, 5})
  void maxUnavailableAtOrAboveReplicasNeverTakesEveryServerDown(int maxUnavailable) {
    FakeCluster c = threeServers();
    var wide =
        with(FakeCluster.settings(NEW), RolloutSpec.Strategy.DrainAndReload, maxUnavailable, false);
    RolloutStatus s = c.run(null, wide, 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(idle(s)).isTrue();
    assertThat(c.maxDown).as("at most replicas - 1 down").isEqualTo(2);
    assertThat(c.restarts)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
  }

  @Test
  void aServerLostMidRollStopsTheNextDestructiveStep() {
    FakeCluster c = threeServers();
    // rs-1 (fewest regions) is admitted and recorded as Draining
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.state().getInFlight()).extracting(PodRoll::getPod).containsExactly("rs-1");
    // then rs-0 is evicted, before the decommission is sent
    c.vanish("rs-0");
    Roller.Decision d2 = Roller.step(d.state(), c.input(FakeCluster.settings(NEW)));
    assertThat(d2.actions()).noneMatch(a -> a instanceof RollModel.Drain);
    assertThat(reason(d2)).isEqualTo(Reason.ClusterNotHealthy);
    assertThat(message(d2)).contains("do not exist");
  }

  @Test
  void aServerDyingAfterTheDrainHoldsTheDelete() {
    FakeCluster c = threeServers();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 50, st -> drainedNotDeleted(c, st), null);
    assertThat(s.getInFlight())
        .extracting(PodRoll::getPod)
        .containsExactly("rs-1"); // drained, about to be deleted
    c.hbase.dead.add(
        new ServerId("crashed.example", 16020, 7)); // another RegionServer dies meanwhile
    Roller.Decision d = Roller.step(s, c.input(FakeCluster.settings(NEW)));
    assertThat(d.actions()).noneMatch(a -> a instanceof RollModel.DeletePod);
    assertThat(message(d)).contains("dead RegionServers");
    assertThat(d.state().getInFlight())
        .extracting(PodRoll::getStep)
        .as("recorded as about to be deleted")
        .containsExactly(PodRoll.Step.Deleting);
    c.hbase.dead.clear();
    Roller.Decision d2 = Roller.step(d.state(), c.input(FakeCluster.settings(NEW)));
    assertThat(d2.actions()).contains(new RollModel.DeletePod("rs-1", "rs-1-uid-0"));
  }

  @Test
  void aPlannedCacheResetDoesNotWaitForRetainedBytes() {
    FakeCluster c = threeServers();
    c.hbase.retainOnRestart = 0; // the new layout drops the persisted cache
    var reset = withCacheReset(FakeCluster.settings(NEW));
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s = c.run(null, reset, 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).isTrue();
    assertThat(Duration.between(Instant.parse("2026-11-21T10:00:00Z"), c.now))
        .as("no pod waited out the 5 min warm timeout")
        .isLessThan(Duration.ofMinutes(5));
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .extracting(RollModel.Event::reason)
        .doesNotContain("PodRestartedCold");
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .filteredOn(e -> e.reason().equals("PodRestarted"))
        .allSatisfy(e -> assertThat(e.message()).contains("cache reset as planned"));
  }

  /**
   * A policy new to a StatefulSet whose pods run another L2 size (seen on kind: a policy created
   * after another one was deleted): HBase drops the persisted L2 at start, nothing announced it,
   * and the gate waited its whole timeout on every pod for retained bytes that could not come.
   */
  @Test
  void aPodRunningAnotherL2CapacityThanPlannedDoesNotWaitForRetainedBytes() {
    FakeCluster c = threeServers();
    c.hbase.retainOnRestart = 0; // HBase refuses the persisted map of another capacity
    c.l2Capacity = 512L << 20;
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(
            null,
            withPlannedL2(FakeCluster.settings(NEW), 640L << 20),
            500,
            st -> idle(st) && c.allAt(NEW),
            log);
    assertThat(idle(s)).isTrue();
    assertThat(Duration.between(Instant.parse("2026-11-21T10:00:00Z"), c.now))
        .as("no pod waited out the 5 min warm timeout")
        .isLessThan(Duration.ofMinutes(5));
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .extracting(RollModel.Event::reason)
        .doesNotContain("PodRestartedCold");
  }

  /** The same capacity as planned: the cache is expected back, and the gate waits for it. */
  @Test
  void aPodRunningThePlannedL2CapacityStillWaitsForItsCache() {
    FakeCluster c = threeServers();
    c.hbase.retainOnRestart = 0; // lost although it should not have been
    c.l2Capacity = (640L << 20) - (1L << 20); // HBase reports a little under the configured size
    List<Roller.Decision> log = new ArrayList<>();
    c.run(
        null,
        withPlannedL2(FakeCluster.settings(NEW), 640L << 20),
        500,
        st -> idle(st) && c.allAt(NEW),
        log);
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .extracting(RollModel.Event::reason)
        .contains("PodRestartedCold");
  }

  @Test
  void gateWaitsWhileRegionsAreInTransition() {
    FakeCluster c = threeServers();
    c.hbase.regionsInTransition = 2;
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.actions()).isEmpty();
    assertThat(d.state().getInFlight()).isEmpty();
    assertThat(reason(d)).isEqualTo(Reason.ClusterNotHealthy);
    assertThat(message(d)).contains("2 regions in transition");
    c.hbase.regionsInTransition = 0;
    Roller.Decision d2 = Roller.step(d.state(), c.input(FakeCluster.settings(NEW)));
    // admission only records (regions, balancer state); the next step acts on the record
    assertThat(d2.actions()).isEmpty();
    PodRoll r = d2.state().getInFlight().get(0);
    assertThat(r.getPod()).isEqualTo("rs-1");
    assertThat(r.getRegions()).containsExactly("b0", "b1");
    assertThat(r.getOldServer()).isEqualTo(c.hbase.servers.get("rs-1").id.toString());
    assertThat(d2.state().getBalancerWasOn()).isTrue();
    Roller.Decision d3 = Roller.step(d2.state(), c.input(FakeCluster.settings(NEW)));
    assertThat(d3.actions()).hasSize(2).startsWith(new RollModel.SwitchBalancer(false));
    assertThat(d3.actions().get(1))
        .isInstanceOfSatisfying(
            RollModel.Drain.class,
            drain -> {
              assertThat(drain.server()).isEqualTo(c.hbase.servers.get("rs-1").id);
              assertThat(drain.targets()).containsOnlyKeys("b0", "b1");
            });
  }

  @Test
  void gateWaitsForDeadServersUnregisteredPodsAndAnUnreachableMaster() {
    FakeCluster c = threeServers();
    c.hbase.dead.add(new ServerId("gone.example", 16020, 1));
    assertThat(message(Roller.step(null, c.input(FakeCluster.settings(NEW)))))
        .contains("dead RegionServers: gone.example,16020,1");
    c.hbase.dead.clear();

    SimulatedHBase.Server s = c.hbase.servers.remove("rs-0");
    assertThat(message(Roller.step(null, c.input(FakeCluster.settings(NEW)))))
        .contains("2 RegionServers registered with the master, 3 pods should serve");
    c.hbase.servers.put("rs-0", s);

    c.hbase.masterReachable = false;
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.actions()).isEmpty();
    assertThat(message(d)).contains("HBase's state could not be read");
  }

  /**
   * Issue 27: an identity without HBase's ADMIN permission gets AccessDenied for the snapshot. The
   * roll then starts nothing (no drain, no delete) and waits with reason AccessDenied, at admission
   * and for a pod already in flight, and says what HBase refused.
   */
  @Test
  void anIdentityWithoutAdminWaitsWithReasonAccessDeniedAndTouchesNothing() {
    String denied =
        "org.apache.hadoop.hbase.security.AccessDeniedException: Insufficient permissions for"
            + " user 'team-reader' (global, action=ADMIN)";
    FakeCluster c = threeServers();
    c.hbase.masterReachable = false;
    c.hbase.unreachableError = denied;
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.actions()).isEmpty();
    assertThat(d.outcome())
        .isInstanceOfSatisfying(
            RollModel.Wait.class,
            w -> {
              assertThat(w.reason()).isEqualTo(Reason.AccessDenied);
              assertThat(w.message()).contains("ADMIN permission").contains("team-reader");
            });

    // a pod in flight when the permission goes: its lifecycle waits with the same reason
    c.hbase.masterReachable = true;
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings(NEW),
            200,
            st -> st.getInFlight().stream().anyMatch(r -> r.getStep() == Step.WaitingReady),
            null);
    c.hbase.masterReachable = false;
    Roller.Decision later = Roller.step(s, c.input(FakeCluster.settings(NEW)));
    assertThat(later.actions()).noneMatch(a -> a instanceof RollModel.DeletePod);
    assertThat(later.outcome())
        .isInstanceOfSatisfying(
            RollModel.Wait.class, w -> assertThat(w.reason()).isEqualTo(Reason.AccessDenied));
  }

  @Test
  void podThatNeverGetsReadyBlocksTheRollAndNothingElseIsTouched() {
    FakeCluster c = threeServers();
    c.pods.get("rs-1").neverReady = true;
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 1000, st -> st.getPhase() == Phase.Blocked, log);
    Roller.Decision last = log.get(log.size() - 1);
    assertThat(s.getPhase()).isEqualTo(Phase.Blocked);
    assertThat(last.degraded()).isTrue();
    assertThat(last.outcome()).isInstanceOf(Blocked.class);
    assertThat(reason(last)).isEqualTo(Reason.PodNotReady);
    assertThat(s.getMessage()).contains("rs-1").contains("not Ready");
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .filteredOn(RollModel.Event::warning)
        .extracting(RollModel.Event::reason)
        .containsExactly("RollBlocked");

    // an hour later still nothing else restarted, and the warning was not repeated; the
    // balancer is back on while the roll waits (the cluster runs as before the roll)
    log.clear();
    s = c.run(s, FakeCluster.settings(NEW), 100, st -> false, log);
    assertThat(c.restarts).containsOnlyKeys("rs-1");
    assertThat(log).flatExtracting(Roller.Decision::events).isEmpty();
    assertThat(c.hbase.balancerOn).isTrue();
    assertThat(s.getBalancerWasOn()).as("still recorded: the roll is not over").isTrue();
    assertThat(c.hbase.decommissioned).as("the gone instance's decommission mark").isEmpty();

    // the cause goes away: the roll goes on, with the balancer off again, and ends with it on
    c.pods.get("rs-1").neverReady = false;
    int before = c.executed.size();
    s = c.run(s, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(idle(s)).isTrue();
    assertThat(c.executed.subList(before, c.executed.size()))
        .filteredOn(a -> a instanceof RollModel.SwitchBalancer)
        .extracting(a -> ((RollModel.SwitchBalancer) a).on())
        .containsExactly(false, true);
    assertThat(c.restarts)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
  }

  @Test
  void aSpecChangeBeforeTheTimeoutAlsoRestartsTheBrokenPodFirst() {
    // Seen on kind: a bad JVM flag crash-loops the first restarted pod; the user reverts before
    // podReadyTimeout ran out (or reverts a short timeout too). The roll must not keep waiting for
    // the instance made from the bad template: it is restarted first, on the new revision.
    FakeCluster c = threeServers();
    c.pods.get("rs-1").neverReady = true;
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings(NEW),
            400,
            st ->
                c.restarts.containsKey("rs-1")
                    && !c.pods.get("rs-1").terminating
                    && NEW.equals(c.pods.get("rs-1").revision)
                    && st.getInFlight().stream()
                        .anyMatch(r -> r.getStep() == PodRoll.Step.WaitingReady),
            null);
    assertThat(s.getPhase()).isEqualTo(Phase.Rolling); // not blocked yet: podReadyTimeout is 10 min
    c.templateRevision = "rev-fixed";
    c.pods.get("rs-1").neverReady = false;
    c.pods.get("rs-1").stuck = "CrashLoopBackOff";
    String brokenUid = c.pods.get("rs-1").uid;
    Roller.Decision d = Roller.step(s, c.input(FakeCluster.settings("rev-fixed")));
    assertThat(d.state().getInFlight()).extracting(PodRoll::getPod).containsExactly("rs-1");
    assertThat(d.state().getInFlight().get(0).getUid()).isEqualTo(brokenUid);
    c.pods.get("rs-1").stuck = null;
    d.actions().forEach(c::apply);
    s =
        c.run(
            d.state(),
            FakeCluster.settings("rev-fixed"),
            600,
            st -> idle(st) && c.allAt("rev-fixed"),
            null);
    assertThat(idle(s)).isTrue();
    assertThat(c.restarts.get("rs-1")).isEqualTo(2);
  }

  @Test
  void aSpecChangeUnblocksAndRestartsTheBrokenPodFirst() {
    FakeCluster c = threeServers();
    c.pods.get("rs-1").neverReady = true;
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 1000, st -> st.getPhase() == Phase.Blocked, null);
    assertThat(s.getPhase()).isEqualTo(Phase.Blocked);
    // the user fixes the spec: a new revision, and the new template starts fine
    c.templateRevision = "rev-fixed";
    c.pods.get("rs-1").neverReady = false;
    c.pods.get("rs-1").stuck = "CrashLoopBackOff";
    c.restartOrder.clear();
    Roller.Decision d = Roller.step(s, c.input(FakeCluster.settings("rev-fixed")));
    assertThat(d.state().getPhase()).isEqualTo(Phase.Rolling);
    assertThat(d.state().getInFlight()).extracting(PodRoll::getPod).containsExactly("rs-1");
    c.pods.get("rs-1").stuck = null;
    d.actions().forEach(c::apply);
    s =
        c.run(
            d.state(),
            FakeCluster.settings("rev-fixed"),
            600,
            st -> idle(st) && c.allAt("rev-fixed"),
            null);
    assertThat(idle(s)).isTrue();
    assertThat(c.restartOrder.get(0)).isEqualTo("rs-1");
  }

  @Test
  void pausedStopsBetweenPodsAndResumes() {
    FakeCluster c = threeServers();
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings(NEW),
            500,
            st -> st.getUpdated() != null && st.getUpdated() == 1,
            null);
    // paused while the second pod is already in flight: it finishes, the third waits
    var paused = with(FakeCluster.settings(NEW), RolloutSpec.Strategy.DrainAndReload, 1, true);
    s = c.run(s, paused, 200, st -> false, null);
    assertThat(s.getPhase()).isEqualTo(Phase.Paused);
    assertThat(s.getMessage()).contains("1 RegionServers still to restart");
    assertThat(c.restarts).hasSize(2);
    s = c.run(s, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), null);
    assertThat(c.restarts).hasSize(3);
  }

  @Test
  void everyStatusOfARollShowsWhenEachPodsRegionsCameHomeBeforeThePodLeavesIt() {
    FakeCluster c = threeServers(); // every restart keeps all of its L2: the gate passes at once
    List<Roller.Decision> log = new ArrayList<>();
    c.run(null, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(log).flatExtracting(Roller.Decision::restarted).hasSize(3);
    // a state with the pod at the warm gate and its homeAt is written before the pod is done
    // (users and make e2e read delete -> regions home from the status)
    for (String pod : List.of("rs-0", "rs-1", "rs-2")) {
      assertThat(log)
          .flatExtracting(d -> d.state().getInFlight())
          .filteredOn(f -> f.getPod().equals(pod) && f.getStep() == PodRoll.Step.WarmGate)
          .as("%s at the warm gate", pod)
          .isNotEmpty()
          .allSatisfy(f -> assertThat(f.getHomeAt()).isNotNull());
    }
  }

  @Test
  void warmGateWaitsForTheCacheAndReportsAColdPod() {
    FakeCluster c = threeServers();
    c.hbase.retainOnRestart = 0.5;
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 800, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).isTrue();
    var restarted = log.stream().flatMap(d -> d.restarted().stream()).toList();
    assertThat(restarted)
        .hasSize(3)
        .allSatisfy(
            r -> {
              assertThat(r.warm()).isFalse();
              assertThat(r.retainedFraction()).isEqualTo(0.5);
            });
    assertThat(log)
        .flatExtracting(Roller.Decision::events)
        .extracting(RollModel.Event::reason)
        .contains("PodRestartedCold");
    assertThat(log)
        .flatExtracting(d -> d.state().getInFlight())
        .extracting(PodRoll::getStep)
        .contains(PodRoll.Step.WarmGate);
    // each pod waited the warm gate's 5 minutes: the roll took at least 15 minutes
    assertThat(c.now).isAfter(java.time.Instant.parse("2026-11-21T10:15:00Z"));
  }

  /**
   * A pod at the warm gate is looked at again after 1 s for its first 15 s there (what it waits for
   * is its next metrics refresh), every 5 s after that (a gate that waits minutes).
   */
  @Test
  void theWarmGateLooksEverySecondAtFirstThenEveryFiveSeconds() {
    FakeCluster c = threeServers();
    c.hbase.retainOnRestart = 0.5; // the gate never passes: it waits its 5 minutes
    Map<Duration, Duration> lookAfterBySecondsAtGate = new java.util.TreeMap<>();
    RolloutStatus s = null;
    for (int i = 0; i < 400 && lookAfterBySecondsAtGate.size() < 40; i++) {
      Roller.Decision d = Roller.step(s, c.input(FakeCluster.settings(NEW)));
      d.actions().forEach(c::apply);
      s = d.state();
      final java.time.Instant now = c.now;
      s.getInFlight().stream()
          .filter(f -> f.getStep() == PodRoll.Step.WarmGate && d.actions().isEmpty())
          .filter(f -> d.events().isEmpty())
          .findFirst()
          .ifPresent(
              f ->
                  lookAfterBySecondsAtGate.put(
                      Duration.between(java.time.Instant.parse(f.getStepStartedAt()), now),
                      d.requeueAfter()));
      c.tick(d.requeueAfter());
    }
    assertThat(lookAfterBySecondsAtGate).isNotEmpty();
    lookAfterBySecondsAtGate.forEach(
        (at, after) ->
            assertThat(after)
                .as("look again after, %s s at the gate", at.toSeconds())
                .isEqualTo(
                    at.compareTo(PodLifecycle.WARM_GATE_FAST_FOR) > 0
                        ? Duration.ofSeconds(5)
                        : Duration.ofSeconds(1)));
    assertThat(lookAfterBySecondsAtGate.values())
        .contains(Duration.ofSeconds(1), Duration.ofSeconds(5));
  }

  @Test
  void withoutPersistenceRetentionIsNotRequired() {
    FakeCluster c = threeServers();
    c.hbase.retainOnRestart = 0;
    var s =
        new RollModel.Settings(
            NEW,
            RolloutSpec.Strategy.DrainAndReload,
            1,
            false,
            Duration.ofMinutes(10),
            0.95,
            null,
            Duration.ofMinutes(5),
            false,
            false,
            0);
    List<Roller.Decision> log = new ArrayList<>();
    c.run(null, s, 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(log)
        .flatExtracting(Roller.Decision::restarted)
        .allSatisfy(r -> assertThat(r.warm()).isTrue());
  }

  /**
   * The operator may die at any point: after deciding but before acting, or after acting but before
   * the status is written. Whatever the crash points, no pod is restarted twice and the roll
   * completes.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  void resumeAfterCrashesNeverRestartsAPodTwice(long seed) {
    FakeCluster c = threeServers();
    Random rnd = new Random(seed);
    RolloutStatus saved = null;
    int crashes = 0;
    for (int i = 0; i < 3000 && !(saved != null && idle(saved) && c.allAt(NEW)); i++) {
      Roller.Decision d = Roller.step(saved, c.input(FakeCluster.settings(NEW)));
      int fate = rnd.nextInt(10);
      if (fate == 0) {
        crashes++; // died before acting: nothing happened
      } else if (fate <= 2) {
        crashes++; // acted, died before the status patch
        d.actions().forEach(c::apply);
      } else {
        d.actions().forEach(c::apply);
        saved = d.state();
      }
      c.tick(d.requeueAfter());
    }
    assertThat(crashes).isGreaterThan(5);
    assertThat(c.allAt(NEW)).isTrue();
    assertThat(c.restarts)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
    assertThat(c.maxDown).isEqualTo(1);
    assertThat(c.hbase.balancerOn).isTrue();
    assertThat(c.hbase.decommissioned).isEmpty();
  }

  @Test
  void nothingToDoIsIdleWithoutActions() {
    FakeCluster c = new FakeCluster(3, NEW);
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.actions()).isEmpty();
    assertThat(d.state().getPhase()).isEqualTo(Phase.Idle);
    assertThat(d.state().getProgress()).isEqualTo("3/3");
    assertThat(d.events()).isEmpty();
  }

  @Test
  void theDeleteIsRecordedBeforeItIsSent() {
    FakeCluster c = new FakeCluster(1, "rev-old");
    var s = with(FakeCluster.settings(NEW), RolloutSpec.Strategy.InPlace, 1, false);
    Roller.Decision first = Roller.step(null, c.input(s));
    assertThat(first.actions()).isEmpty();
    assertThat(first.state().getInFlight().get(0).getStep()).isEqualTo(PodRoll.Step.Deleting);
    assertThat(first.state().getInFlight().get(0).getUid()).isEqualTo("rs-0-uid-0");
    Roller.Decision second = Roller.step(first.state(), c.input(s));
    List<Action> a = second.actions();
    assertThat(a).containsExactly(new RollModel.DeletePod("rs-0", "rs-0-uid-0"));
  }

  /** A pod whose drain is complete (decommissioned, no region left), not yet deleted. */
  static boolean drainedNotDeleted(FakeCluster c, RolloutStatus st) {
    return st.getInFlight().stream()
        .anyMatch(
            r ->
                r.getStep() == PodRoll.Step.Draining
                    && c.hbase.decommissioned.contains(ServerId.parse(r.getOldServer()))
                    && c.hbase.servers.get(r.getPod()).regions.isEmpty());
  }

  /** The step that finds a drain complete deletes the pod: no status with it in Deleting first. */
  @Test
  void aDrainedPodIsDeletedInTheStepThatFindsItsDrainComplete() {
    FakeCluster c = threeServers();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 50, st -> drainedNotDeleted(c, st), null);
    Roller.Decision d = Roller.step(s, c.input(FakeCluster.settings(NEW)));
    assertThat(d.actions()).containsExactly(new RollModel.DeletePod("rs-1", "rs-1-uid-0"));
    assertThat(d.state().getInFlight())
        .extracting(PodRoll::getStep, PodRoll::getDeletedAt)
        .containsExactly(tuple(PodRoll.Step.WaitingReady, c.now.toString()));
  }

  /**
   * The delete of a drained pod went out but the status write after it did not (the operator
   * crashed, or another action of the step failed): the status still says Draining. A hold then
   * must not send the regions back to the instance shutting down, nor forget the pod.
   */
  @Test
  void aHoldAfterADeleteWhoseStatusWasNotWrittenLeavesTheDeletedPodInFlight() {
    FakeCluster c = threeServers();
    RolloutStatus s =
        c.run(null, FakeCluster.settings(NEW), 50, st -> drainedNotDeleted(c, st), null);
    Roller.Decision d = Roller.step(s, c.input(FakeCluster.settings(NEW)));
    d.actions().forEach(c::apply); // the delete; d.state() is lost
    assertThat(c.restarts).containsOnlyKeys("rs-1");

    Roller.Decision held =
        Roller.hold(s, c.podViews(), c.hbase.snapshot(), "PlanRefused", FakeCluster.ZONE);
    assertThat(held.actions()).noneMatch(a -> a instanceof RollModel.Recommission);
    assertThat(held.state().getInFlight()).extracting(PodRoll::getPod).containsExactly("rs-1");
    // the pods not observable: the old instance no longer serves, so it counts as deleted too
    Roller.Decision blind =
        Roller.hold(s, null, c.hbase.snapshot(), "TargetNotFound", FakeCluster.ZONE);
    assertThat(blind.actions()).noneMatch(a -> a instanceof RollModel.Recommission);
  }

  /** A drain timed out, then the other pod in flight finished: no message is left to repeat. */
  @Test
  void aDrainRetryPendingWithNoMessageLeftStaysBlocked() {
    FakeCluster c = threeServers();
    RolloutStatus s =
        new RolloutStatus()
            .setPhase(Phase.Rolling)
            .setRevision(NEW)
            .setRetryAt(c.now.plus(Duration.ofMinutes(5)).toString())
            .setInFlight(new ArrayList<>());
    Roller.Decision d = Roller.step(s, c.input(FakeCluster.settings(NEW)));
    assertThat(d.state().getPhase()).isEqualTo(Phase.Blocked);
    assertThat(reason(d)).isEqualTo(Reason.DrainTimeout);
    assertThat(message(d)).contains("the roll goes on at " + s.getRetryAt());
    assertThat(d.actions()).noneMatch(a -> a instanceof RollModel.DeletePod);
  }

  static Reason reason(Roller.Decision d) {
    return d.outcome() instanceof Wait w
        ? w.reason()
        : d.outcome() instanceof Blocked b ? b.reason() : null;
  }

  static String message(Roller.Decision d) {
    return d.outcome() instanceof Wait w
        ? w.message()
        : d.outcome() instanceof Blocked b ? b.message() : null;
  }
}
