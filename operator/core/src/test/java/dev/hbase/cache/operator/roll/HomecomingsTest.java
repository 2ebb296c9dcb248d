package dev.hbase.cache.operator.roll;

import static dev.hbase.cache.operator.roll.RollerTest.NEW;
import static dev.hbase.cache.operator.roll.RollerTest.idle;
import static dev.hbase.cache.operator.roll.RollerTest.with;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.DeletePod;
import dev.hbase.cache.operator.roll.RollModel.Drain;
import dev.hbase.cache.operator.roll.RollModel.Event;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A RegionServer restarted in its pod (SIGKILL, an OOM kill: the kubelet restarts the container, no
 * preStop hook runs, nothing drains it) gets back the regions it holds cached once it reports
 * ({@link Homecomings}); seen on kind before: 6 / 0 / 2 regions after such a restart, until the
 * next roll.
 */
class HomecomingsTest {

  /** Three servers at the revision, idle; each caches only its own regions. */
  static FakeCluster ownCaches() {
    return new FakeCluster(3, NEW)
        .regions("rs-0", "a0", "a1", "a2")
        .regions("rs-1", "b0", "b1", "b2")
        .regions("rs-2", "c0", "c1")
        .meta("rs-2");
  }

  static boolean balanced(FakeCluster c) {
    List<Integer> counts = c.pods.keySet().stream().map(p -> c.hbase.regionsOf(p).size()).toList();
    double mean = counts.stream().mapToInt(Integer::intValue).average().orElse(0);
    return counts.stream().allMatch(n -> Math.abs(n - mean) <= 1.0);
  }

  @Test
  void aServerRestartedInItsPodGetsItsCachedRegionsBackAndNothingIsDeleted() {
    FakeCluster c = ownCaches();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.crash("rs-1");
    assertThat(c.hbase.regionsOf("rs-0").size() + c.hbase.regionsOf("rs-2").size())
        .as("the master reassigned rs-1's regions")
        .isEqualTo(9);
    List<Roller.Decision> log = new ArrayList<>();
    s =
        c.run(
            s,
            FakeCluster.settings(NEW),
            200,
            st -> idle(st) && c.allAt(NEW) && !c.hbase.regionsOf("rs-1").isEmpty(),
            log);
    assertThat(c.hbase.regionsOf("rs-1"))
        .as("rs-1's regions back on it: %s", s.getMessage())
        .containsExactlyInAnyOrder("b0", "b1", "b2");
    assertThat(balanced(c)).as("every server within one of the mean").isTrue();
    assertThat(s.getInFlight()).isEmpty();
    assertThat(s.getLastRoll()).as("no roll was started").isNull();
    assertThat(RollStopsTest.actions(log))
        .noneMatch(a -> a instanceof DeletePod || a instanceof Drain);
    assertThat(RollStopsTest.events(log))
        .extracting(Event::reason)
        .contains("RestartedInPlace", "RegionsHome")
        .doesNotContain("RollStarted", "PodRestarted");
    assertThat(RollStopsTest.events(log))
        .filteredOn(e -> e.reason().equals("RestartedInPlace"))
        .first()
        .extracting(Event::message)
        .asString()
        .contains("rs-1's RegionServer restarted in its pod", "3 of them go back to it");
    assertThat(c.hbase.marks()).isEmpty();
    assertThat(c.hbase.balancerOn).as("the balancer on again").isTrue();
    // once home, it stays done: no second homecoming in the rest of the window
    c.run(s, FakeCluster.settings(NEW), 100, st -> false, log);
    assertThat(RollStopsTest.events(log))
        .filteredOn(e -> e.reason().equals("RestartedInPlace"))
        .hasSize(1);
  }

  /** rs-1's regions moved to rs-0 by someone else (an administrator's unload): cached on rs-1. */
  static void unloaded(FakeCluster c) {
    var rs1 = c.hbase.servers.get("rs-1");
    c.hbase.servers.get("rs-0").regions.addAll(rs1.regions);
    rs1.regions.clear();
  }

  @Test
  void aServerEmptiedWithoutARestartOfItsRegionServerIsLeftAlone() {
    // no restart at all, then a sidecar's restart (the RegionServer started before it): the empty
    // server is not the master's reassignment after a kill, and nothing is sent to it
    FakeCluster c = ownCaches();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    unloaded(c);
    List<Roller.Decision> log = new ArrayList<>();
    s = c.run(s, FakeCluster.settings(NEW), 50, st -> false, log);
    c.pods.get("rs-1").restartedInPlaceAt = c.now;
    c.tick(java.time.Duration.ofSeconds(30));
    c.run(s, FakeCluster.settings(NEW), 50, st -> false, log);
    assertThat(c.hbase.regionsOf("rs-1")).isEmpty();
    assertThat(RollStopsTest.events(log))
        .extracting(Event::reason)
        .doesNotContain("RestartedInPlace");
  }

  @Test
  void pausedNothingMovesAndUnpausedTheRegionsGoHome() {
    FakeCluster c = ownCaches();
    var paused = with(FakeCluster.settings(NEW), RolloutSpec.Strategy.DrainAndReload, 1, true);
    RolloutStatus s = c.run(null, paused, 5, st -> false, null);
    c.crash("rs-1");
    Instant crashed = c.now;
    // two minutes: its server back and reported long since
    s = c.run(s, paused, 500, st -> c.now.isAfter(crashed.plus(Homecomings.SETTLING)), null);
    assertThat(c.hbase.registered("rs-1")).isTrue();
    assertThat(c.hbase.regionsOf("rs-1")).as("paused").isEmpty();
    // unpaused within the ten minutes after the restart
    assertThat(c.now).isBefore(crashed.plus(Homecomings.WINDOW));
    s =
        c.run(
            s,
            FakeCluster.settings(NEW),
            200,
            st -> idle(st) && !c.hbase.regionsOf("rs-1").isEmpty(),
            null);
    assertThat(c.hbase.regionsOf("rs-1")).containsExactlyInAnyOrder("b0", "b1", "b2");
  }

  @Test
  void anAdministratorsMarkOnTheServerIsKeptAndItGetsNothing() {
    // rs-1 decommissioned by hand, then killed: its new instance at the same host and port is the
    // administrator's to give regions to
    FakeCluster c = ownCaches();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    ServerId marked = c.hbase.servers.get("rs-1").id;
    c.hbase.decommissioned.add(marked);
    c.crash("rs-1");
    List<Roller.Decision> log = new ArrayList<>();
    c.run(s, FakeCluster.settings(NEW), 100, st -> false, log);
    assertThat(c.hbase.regionsOf("rs-1")).isEmpty();
    assertThat(c.hbase.marks()).containsExactly(marked);
    assertThat(RollStopsTest.events(log))
        .extracting(Event::reason)
        .doesNotContain("RestartedInPlace");
  }

  @Test
  void aServerKilledAgainOnItsWayHomeEndsThatHomecomingAndTheNextRestartBringsItsRegions() {
    FakeCluster c = ownCaches();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.crash("rs-1");
    List<Roller.Decision> log = new ArrayList<>();
    s =
        c.run(
            s,
            FakeCluster.settings(NEW),
            200,
            st -> st.getInFlight().stream().anyMatch(Homecomings::is),
            log);
    c.crash("rs-1");
    s =
        c.run(
            s,
            FakeCluster.settings(NEW),
            400,
            st -> idle(st) && !c.hbase.regionsOf("rs-1").isEmpty(),
            log);
    assertThat(s.getPhase()).isNotEqualTo(RolloutStatus.Phase.Blocked);
    assertThat(c.hbase.regionsOf("rs-1")).containsExactlyInAnyOrder("b0", "b1", "b2");
    assertThat(RollStopsTest.events(log))
        .extracting(Event::reason)
        .containsSubsequence(
            "RestartedInPlace", "HomecomingEnded", "RestartedInPlace", "RegionsHome");
  }

  @Test
  void aDeleteDuringAHomecomingDrainsTheServerAndItsRegionsGoHomeWhenThePodReturns() {
    // the same pod instance (a container restart keeps the UID) is deleted while its regions come
    // home: the stop takes the homecoming over (Stops.stopsAgain), drains it warm, and sends the
    // regions home once the pod is back
    FakeCluster c = ownCaches();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.crash("rs-1");
    List<Roller.Decision> log = new ArrayList<>();
    s =
        c.run(
            s,
            FakeCluster.settings(NEW),
            200,
            st -> st.getInFlight().stream().anyMatch(Homecomings::is),
            log);
    assertThat(s.getInFlight()).as("a homecoming in flight").anyMatch(Homecomings::is);
    c.stopByOther("rs-1", "Deleted");
    s = c.run(s, FakeCluster.settings(NEW), 500, st -> idle(st) && c.allAt(NEW), log);
    assertThat(idle(s)).as("the stop is over: %s", s.getMessage()).isTrue();
    assertThat(c.closedCold).as("regions rs-1 still held when its RegionServer stopped").isZero();
    assertThat(c.hbase.regionsOf("rs-1"))
        .as("rs-1's regions home once more")
        .containsExactlyInAnyOrder("b0", "b1", "b2");
    assertThat(RollStopsTest.events(log))
        .extracting(Event::reason)
        .contains("RestartedInPlace", "WarmStop")
        .doesNotContain("HomecomingEnded");
    assertThat(c.hbase.marks()).isEmpty();
    assertThat(c.hbase.balancerOn).isTrue();
  }

  @Test
  void withInPlaceTheRestartedServerStaysAsHBaseLeftIt() {
    // what the test above guards: the same crash where the roller leaves placement to HBase
    FakeCluster c = ownCaches();
    var inPlace = with(FakeCluster.settings(NEW), RolloutSpec.Strategy.InPlace, 1, false);
    RolloutStatus s = c.run(null, inPlace, 5, RollerTest::idle, null);
    c.crash("rs-1");
    c.run(s, inPlace, 20, st -> false, null);
    assertThat(c.hbase.regionsOf("rs-1")).isEmpty();
  }

  @Test
  void aServerKilledAfterItsTurnInARollEndsTheRollWithItsRegions() {
    // kind's step 10: the roll goes on elsewhere while the master reassigns the killed server's
    // regions; before, the killed server ended the roll with none
    FakeCluster c = ownCaches();
    c.templateRevision = "rev-2";
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s =
        c.run(
            null,
            FakeCluster.settings("rev-2"),
            500,
            st -> c.restarts.size() == 2, // the second pod's delete: the first is done
            log);
    String done =
        c.pods.values().stream()
            .filter(p -> "rev-2".equals(p.revision))
            .map(p -> p.name)
            .findFirst()
            .orElseThrow();
    c.crash(done);
    s =
        c.run(
            s,
            FakeCluster.settings("rev-2"),
            2000,
            st -> idle(st) && c.allAt("rev-2") && !c.hbase.regionsOf(done).isEmpty(),
            log);
    assertThat(idle(s)).as("roll over: %s", s.getMessage()).isTrue();
    assertThat(c.hbase.regionsOf(done)).as("%s's regions after the roll", done).isNotEmpty();
    assertThat(balanced(c))
        .as("regions per server: %s", c.pods.keySet().stream().map(c.hbase::regionsOf).toList())
        .isTrue();
    assertThat(s.getLastRoll().getRestarts()).as("restarts counted by the roll").isEqualTo(3);
    assertThat(RollStopsTest.events(log)).extracting(Event::reason).contains("RegionsHome");
  }

  @Test
  void theRollerAsksHBaseForTenMinutesAfterAContainerRestart() {
    FakeCluster c = ownCaches();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    assertThat(Roller.needsHBase(s, c.podViews(), NEW, c.now)).isFalse();
    c.crash("rs-1");
    c.tick(c.restartTime);
    assertThat(Roller.needsHBase(s, c.podViews(), NEW, c.now)).isTrue();
    assertThat(Roller.needsHBase(s, c.podViews(), NEW, c.now.plus(Homecomings.WINDOW))).isFalse();
  }

  @Test
  void whileTheMasterStillHasRegionsInTransitionTheRestartIsLookedAtAgainWithinSeconds() {
    // the master's recovery of the killed instance outlasts the new one's start: once it is over,
    // the homecoming starts at the 5 s pace, not at the idle roller's 60 s (nor the pod's next
    // event)
    FakeCluster c = ownCaches();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.crash("rs-1");
    c.hbase.regionsInTransition = 2;
    Instant clearedAt = c.now.plus(c.restartTime).plus(java.time.Duration.ofSeconds(25));
    Instant started = homecomingStart(c, s, clearedAt, () -> c.hbase.regionsInTransition = 0);
    assertThat(started).as("a homecoming started").isNotNull();
    assertThat(java.time.Duration.between(clearedAt, started))
        .as("from the end of the transitions to the homecoming")
        .isLessThanOrEqualTo(StepState.POLL);
  }

  @Test
  void whileTheMasterIsUnreachableAfterARestartTheRestartIsLookedAtAgainWithinSeconds() {
    // the master itself away for a while (restarting, its host lost) when the container restarts:
    // once it answers, the homecoming starts at the 5 s pace, not at the idle roller's 60 s
    FakeCluster c = ownCaches();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.crash("rs-1");
    c.hbase.masterReachable = false;
    // back 45 s after the restart: not on the idle pace's 60 s (a look then would pass unaided)
    Instant backAt = c.now.plus(c.restartTime).plus(java.time.Duration.ofSeconds(45));
    Instant started = homecomingStart(c, s, backAt, () -> c.hbase.masterReachable = true);
    assertThat(started).as("a homecoming started").isNotNull();
    assertThat(started).as("not before the master answers").isAfterOrEqualTo(backAt);
    assertThat(java.time.Duration.between(backAt, started))
        .as("from the master's return to the homecoming")
        .isLessThanOrEqualTo(StepState.POLL);
  }

  /**
   * Steps the roller at its own requeue pace, {@code recover} run once the clock reaches {@code
   * recoverAt}; when the step that sent RestartedInPlace ran (null: none in 100 steps).
   */
  static Instant homecomingStart(
      FakeCluster c, RolloutStatus s, Instant recoverAt, Runnable recover) {
    List<Roller.Decision> log = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      if (!c.now.isBefore(recoverAt)) {
        recover.run();
      }
      Instant at = c.now;
      s = c.run(s, FakeCluster.settings(NEW), 1, st -> false, log);
      if (log.get(log.size() - 1).events().stream()
          .anyMatch(e -> e.reason().equals("RestartedInPlace"))) {
        return at;
      }
    }
    return null;
  }

  @Test
  void pastTheSettlingMinutesARestartIsLookedAtAtTheIdlePace() {
    // the master's transitions never end: the 5 s looks last SETTLING, then the roller asks HBase
    // at its idle pace until WINDOW is over (a master stuck for minutes is not polled every 5 s)
    FakeCluster c = ownCaches();
    RolloutStatus s = c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    c.crash("rs-1");
    Instant restarted = c.now.plus(c.restartTime);
    c.hbase.regionsInTransition = 2;
    List<java.time.Duration> early = new ArrayList<>();
    List<java.time.Duration> late = new ArrayList<>();
    while (c.now.isBefore(restarted.plus(Homecomings.WINDOW))) {
      Instant at = c.now;
      List<Roller.Decision> log = new ArrayList<>();
      s = c.run(s, FakeCluster.settings(NEW), 1, st -> false, log);
      java.time.Duration next = log.get(0).requeueAfter();
      if (at.isAfter(restarted) && at.isBefore(restarted.plus(Homecomings.SETTLING))) {
        early.add(next);
      } else if (at.isAfter(restarted.plus(Homecomings.SETTLING))) {
        late.add(next);
      }
    }
    assertThat(early).as("requeues while settling").isNotEmpty();
    assertThat(early).allSatisfy(d -> assertThat(d).isEqualTo(StepState.POLL));
    assertThat(late).as("requeues after settling").isNotEmpty();
    assertThat(late).allSatisfy(d -> assertThat(d).isEqualTo(StepState.IDLE));
    assertThat(s.getInFlight()).as("no homecoming while the transitions last").isEmpty();
  }

  // ------------------------------------------------------------------ which regions (pure)

  static final Instant T = Instant.parse("2026-11-28T10:00:00Z");

  static ServerState server(String host, List<String> regions, Map<String, Integer> cachedMb) {
    return new ServerState(
        new ServerId(host, 16020, 1), 16030, regions, true, false, cachedMb, Map.of());
  }

  static ClusterSnapshot cluster(ServerState... live) {
    return new ClusterSnapshot(T, true, null, List.of(live), List.of(), 0, null, List.of(), true);
  }

  @Test
  void theBalancerSentOneOfItsCachedRegionsHomeFirstTheRestStillComeUpToItsShare() {
    // the cache-aware balancer moved b0 back onto the restarted server before the roller looked:
    // b1 and b2, cached here as much as on rs-0, still come home (was: nothing, as a server
    // serving any region it caches was taken to be where a roll had left it)
    ServerState back = server("rs-1", List.of("b0"), Map.of("b0", 30, "b1", 30, "b2", 30, "x", 30));
    ServerState other =
        server("rs-0", List.of("a0", "a1", "a2", "b1", "b2"), Map.of("b1", 30, "b2", 30));
    ServerState third = server("rs-2", List.of("c0", "c1", "c2"), Map.of());
    // 9 regions, a share of 3: rs-0 (5) gives b1 and b2, and the counts end 3 / 3 / 3
    assertThat(Homecomings.claims(cluster(back, other, third), back, Set.of()))
        .containsExactly("b1", "b2");
  }

  @Test
  void homeAlreadyAndOneRegionMovedAwayByTheBalancerItIsNotStartedAgain() {
    // after RegionsHome HBase's balancer moved b2 to rs-0, which has prefetched it since: rs-1
    // is one below its share and rs-0 two above it, but a second homecoming is not started
    ServerState back = server("rs-1", List.of("b0", "b1"), Map.of("b0", 30, "b1", 30, "b2", 30));
    ServerState other = server("rs-0", List.of("a0", "a1", "a2", "b2"), Map.of("b2", 30));
    ServerState third = server("rs-2", List.of("c0", "c1"), Map.of());
    assertThat(Homecomings.claims(cluster(back, other, third), back, Set.of())).isEmpty();
  }

  @Test
  void aServerAtItsShareClaimsNothingMoreThoughItCachesMore() {
    // home already (a homecoming done, or the roll's reload): the regions it caches that stayed
    // elsewhere stay there
    ServerState back = server("rs-1", List.of("b0", "b1"), Map.of("b0", 30, "b1", 30, "b2", 30));
    ServerState other = server("rs-0", List.of("a0", "b2"), Map.of("b2", 30));
    assertThat(Homecomings.claims(cluster(back, other), back, Set.of())).isEmpty();
  }

  @Test
  void aNewServerWithAnEmptyCacheClaimsNothing() {
    ServerState fresh = server("rs-3", List.of(), Map.of());
    ServerState other = server("rs-0", List.of("a0", "a1", "a2"), Map.of("a0", 30));
    assertThat(Homecomings.claims(cluster(fresh, other), fresh, Set.of())).isEmpty();
  }

  @Test
  void onlyRegionsCachedHereAtLeastAsMuchAsWhereTheyAreUpToTheShareFromTheFullest() {
    ServerState back =
        server(
            "rs-1",
            List.of(),
            Map.of("a0", 30, "a1", 30, "a2", 5, "c0", 30, "c1", 30, "x", 30, "1588230740", 1));
    ServerState full =
        server("rs-0", List.of("a0", "a1", "a2", "c1", "1588230740"), Map.of("a2", 30, "a0", 10));
    ServerState less = server("rs-2", List.of("c0", "c9"), Map.of("c0", 30));
    // 7 regions over 3 servers: a share of 3. a2 is cached less here than on rs-0; x is nowhere;
    // hbase:meta never moves this way; c1 is taken by another pod in flight; rs-0 (5) gives two,
    // and c0 stays, or rs-2 (2) would end with fewer than this server
    assertThat(Homecomings.claims(cluster(back, full, less), back, Set.of("c1")))
        .containsExactly("a0", "a1");
    // rs-2 fuller: it gives c0 too
    ServerState fuller = server("rs-2", List.of("c0", "c9", "c8", "c7"), Map.of("c0", 30));
    assertThat(Homecomings.claims(cluster(back, full, fuller), back, Set.of("c1")))
        .containsExactly("a0", "a1", "c0");
  }

  @Test
  void noRegionMovesWhenTheCountsAreEvenAlready() {
    ServerState back = server("rs-1", List.of("z"), Map.of("a0", 30, "c0", 30));
    ServerState a = server("rs-0", List.of("a0", "a1"), Map.of());
    ServerState b = server("rs-2", List.of("c0", "c1"), Map.of());
    // 5 regions, share 2: rs-1 may take one, but its servers would be left with fewer than it
    assertThat(Homecomings.claims(cluster(back, a, b), back, Set.of())).isEmpty();
  }
}
