package dev.hbase.cache.operator.roll;

import static dev.hbase.cache.operator.roll.RollerTest.NEW;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.status.CrashStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.ExpireServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A RegionServer whose container the kubelet reports terminated is expired in HBase at once, by its
 * exact name ({@link Crashes}), and never a live one. In {@link FakeCluster}'s virtual time: a
 * killed instance stays listed live (its regions unavailable) until it is expired, its ZooKeeper
 * session ends (30 s) or its restarted container's instance registers (20 s).
 */
class CrashesTest {

  static FakeCluster idleCluster() {
    FakeCluster c = HomecomingsTest.ownCaches();
    c.run(null, FakeCluster.settings(NEW), 5, RollerTest::idle, null);
    return c;
  }

  static Roller.Decision step(FakeCluster c) {
    Roller.Decision d =
        Roller.step(
            new RolloutStatus().setPhase(RolloutStatus.Phase.Idle).setRevision(NEW),
            c.input(FakeCluster.settings(NEW)));
    c.lastCrash = d.lastCrash();
    return d;
  }

  static List<ExpireServer> expiries(Roller.Decision d) {
    return d.actions().stream()
        .filter(a -> a instanceof ExpireServer)
        .map(ExpireServer.class::cast)
        .toList();
  }

  @Test
  void aContainerTheKubeletReportsTerminatedHasItsExactInstanceExpiredFirstThing() {
    FakeCluster c = idleCluster();
    ServerId dead = c.hbase.servers.get("rs-1").id;
    c.tick(Duration.ofMillis(700));
    c.kill("rs-1", "OOMKilled");
    c.tick(Duration.ofMillis(400)); // the kubelet's report, the informer, the reconcile
    Roller.Decision d = step(c);
    assertThat(d.actions())
        .as("the only action, so the first sent")
        .containsExactly(new ExpireServer(dead, "rs-1"));
    assertThat(d.requeueAfter()).isEqualTo(StepState.FAST);
    assertThat(c.unavailable()).containsExactly("b0", "b1", "b2");
    d.actions().forEach(c::apply);
    assertThat(c.hbase.snapshot().live(dead)).as("expired").isEmpty();
    assertThat(c.unavailable()).as("its regions reassigned at once").isEmpty();
    assertThat(c.hbase.dead).containsExactly(dead);
    CrashStatus crash = d.lastCrash();
    assertThat(crash.getServer()).isEqualTo(dead.toString());
    assertThat(crash.getPod()).isEqualTo("rs-1");
    assertThat(crash.getReason()).isEqualTo("OOMKilled");
    assertThat(crash.getExitCode()).isEqualTo(137);
    assertThat(crash.getToldHBase()).isEqualTo("Expire");
    assertThat(crash.getToldHBaseAt()).isEqualTo(c.now.toString());
    assertThat(crash.getRegions()).isEqualTo(3);
    assertThat(crash.getPendingRegions()).containsExactly("b0", "b1", "b2");
    assertThat(d.events()).as("sent once its regions serve").isEmpty();

    // the next step finds them serving: the figure, the status and the event
    c.tick(d.requeueAfter());
    Roller.Decision next = step(c);
    assertThat(expiries(next)).as("not live any more: nothing sent again").isEmpty();
    CrashStatus done = next.lastCrash();
    assertThat(done.getPendingRegions()).isNull();
    assertThat(done.getRegionsServingAt()).isEqualTo(c.now.toString());
    // from the kubelet's termination time (rounded down to the second) to this step
    double expected =
        Duration.between(Instant.parse(done.getTerminatedAt()), c.now).toMillis() / 1000.0;
    assertThat(done.getRegionsUnavailableSeconds()).isCloseTo(expected, within(0.05));
    assertThat(done.getRegionsUnavailableSeconds()).isLessThan(3.0);
    assertThat(next.events())
        .extracting(Event::reason)
        .containsExactly(RollModel.EventReason.RegionServerCrashed.name());
    assertThat(next.events().get(0).warning()).isTrue();
    assertThat(next.events().get(0).message())
        .contains(
            "rs-1's RegionServer container terminated (OOMKilled, exit code 137)",
            dead.toString(),
            "live with 3 regions",
            "the operator had HBase expire it at",
            "its regions served again");
  }

  @Test
  void aContainerTerminatedWhileTheRollIsPausedIsExpiredAsWell() {
    // a roll to a newer plan, paused before its first pod (seen on kind, step 10c: an OOM-killed
    // pod's instance waited for its restarted container's registration)
    FakeCluster c = idleCluster();
    ServerId dead = c.hbase.servers.get("rs-2").id;
    c.tick(Duration.ofMillis(700));
    c.kill("rs-2", "OOMKilled");
    c.tick(Duration.ofMillis(400));
    RollModel.Settings paused =
        RollerTest.with(
            FakeCluster.settings("newer"),
            dev.hbase.cache.api.v1alpha1.spec.RolloutSpec.Strategy.DrainAndReload,
            1,
            true);
    Roller.Decision d =
        Roller.step(
            new RolloutStatus().setPhase(RolloutStatus.Phase.Paused).setRevision("newer"),
            c.input(paused));
    assertThat(expiries(d)).containsExactly(new ExpireServer(dead, "rs-2"));
    assertThat(d.state().getPhase()).isEqualTo(RolloutStatus.Phase.Paused);
  }

  private static org.assertj.core.data.Offset<Double> within(double d) {
    return org.assertj.core.data.Offset.offset(d);
  }

  @Test
  void regionsUnavailableForASecondInsteadOfUntilTheRestartedInstanceRegisters() {
    // without the expiry (today's roller): the old instance is listed live until the restarted
    // container's instance registers 20 s later (or its 30 s session ends)
    for (boolean expire : List.of(false, true)) {
      FakeCluster c = idleCluster();
      c.kill("rs-1", "Error");
      Instant killed = c.now;
      Duration unavailable = null;
      for (int i = 0; i < 400 && unavailable == null; i++) {
        Roller.Decision d = step(c);
        d.actions().stream().filter(a -> expire || !(a instanceof ExpireServer)).forEach(c::apply);
        if (c.unavailable().isEmpty()) {
          unavailable = Duration.between(killed, c.now);
        }
        c.tick(d.requeueAfter());
      }
      if (expire) {
        assertThat(unavailable).as("with the expiry").isLessThanOrEqualTo(Duration.ofSeconds(1));
      } else {
        // the first step that sees the restarted instance, at most a POLL after it registered
        assertThat(unavailable)
            .as("without")
            .isBetween(c.restartTime, c.restartTime.plus(StepState.POLL));
      }
    }
  }

  @Test
  void theRegionsComeHomeToTheRestartedServerWithItsCache() {
    FakeCluster c = idleCluster();
    c.kill("rs-1", "OOMKilled");
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus s = new RolloutStatus().setPhase(RolloutStatus.Phase.Idle).setRevision(NEW);
    s =
        c.run(
            s,
            FakeCluster.settings(NEW),
            300,
            st ->
                RollerTest.idle(st)
                    && c.allAt(NEW)
                    && c.hbase.regionsOf("rs-1").size() == 3
                    && c.lastCrash.getPendingRegions() == null,
            log);
    assertThat(c.hbase.regionsOf("rs-1")).containsExactlyInAnyOrder("b0", "b1", "b2");
    assertThat(RollStopsTest.actions(log).stream().filter(a -> a instanceof ExpireServer))
        .hasSize(1);
    assertThat(RollStopsTest.events(log))
        .extracting(Event::reason)
        .contains("RegionServerCrashed", "RestartedInPlace", "RegionsHome");
    assertThat(c.hbase.dead).as("the restarted instance cleared the expired name").isEmpty();
  }

  @Test
  void noExpiryWithoutTheKubeletsWordThatTheContainerTerminated() {
    FakeCluster c = idleCluster();
    // frozen, or unready: the process may run; no termination reported
    c.pods.get("rs-1").ready = false;
    c.hbase.kill("rs-1");
    assertThat(expiries(step(c))).isEmpty();
  }

  @Test
  void noExpiryOfAnInstanceThatStartedAfterTheTermination() {
    FakeCluster c = idleCluster();
    c.kill("rs-1", "OOMKilled");
    // the operator was away: the restarted container's instance registered meanwhile
    c.tick(c.restartTime);
    c.tick(Duration.ofSeconds(1));
    assertThat(c.hbase.killed).isEmpty();
    ServerId now = c.hbase.servers.get("rs-1").id;
    assertThat(now.startCode())
        .isGreaterThan(c.pods.get("rs-1").terminated.finishedAt().toEpochMilli());
    Roller.Decision d = step(c);
    assertThat(expiries(d)).as("the live instance is the new one").isEmpty();
    assertThat(d.lastCrash()).as("nothing to record: HBase expired it itself").isNull();
  }

  @Test
  void noExpiryForAPodBeingDeletedNorForATerminationOlderThanTheWindow() {
    FakeCluster c = idleCluster();
    c.kill("rs-1", "Error");
    c.pods.get("rs-1").terminating = true;
    assertThat(expiries(step(c))).as("a stop: Stops drains it warm").isEmpty();

    FakeCluster old = idleCluster();
    old.kill("rs-1", "Error");
    old.pods.get("rs-1").sessionEndsAt = null; // still listed live, long after
    old.pods.get("rs-1").readyAt = null;
    old.pods.get("rs-1").restartedInPlaceAt = null; // not a homecoming's either
    old.now = old.now.plus(Crashes.WINDOW).plusSeconds(1);
    assertThat(expiries(step(old))).isEmpty();
    assertThat(
            Roller.needsHBase(
                new RolloutStatus().setRevision(NEW), null, old.podViews(), NEW, old.now))
        .as("nor is HBase asked for it")
        .isFalse();
    assertThat(
            Roller.needsHBase(
                new RolloutStatus().setRevision(NEW),
                null,
                old.podViews(),
                NEW,
                old.now.minus(Crashes.WINDOW)))
        .as("within the window it is")
        .isTrue();
  }

  @Test
  void onlyTheDeadPodsInstanceAndItIsSentAgainWhileTheMasterListsItLive() {
    FakeCluster c = idleCluster();
    c.kill("rs-1", "OOMKilled");
    Roller.Decision first = step(c);
    List<Action> sent = first.actions();
    assertThat(sent).hasSize(1);
    // not carried out (refused by the check, say): not sent again at once, its regions followed
    c.tick(first.requeueAfter());
    Roller.Decision soon = step(c);
    assertThat(soon.actions()).isEmpty();
    assertThat(soon.requeueAfter()).isEqualTo(StepState.FAST);
    assertThat(soon.lastCrash().getToldHBaseAt()).isEqualTo(first.lastCrash().getToldHBaseAt());
    // but a few seconds later, the same again, the record kept
    c.tick(StepState.POLL);
    Roller.Decision again = step(c);
    assertThat(again.actions()).isEqualTo(sent);
    assertThat(again.lastCrash().getServer()).isEqualTo(first.lastCrash().getServer());
    assertThat(again.lastCrash().getTerminatedAt()).isEqualTo(first.lastCrash().getTerminatedAt());
    assertThat(again.lastCrash().getToldHBaseAt()).isEqualTo(c.now.toString());
    // the master unreachable: nothing decided, the record kept
    c.hbase.masterReachable = false;
    Roller.Decision away = step(c);
    assertThat(expiries(away)).isEmpty();
    assertThat(away.lastCrash()).isEqualTo(again.lastCrash());
  }

  @Test
  void regionsNotServingWithinPodReadyTimeoutEndTheRecordWithAnEvent() {
    FakeCluster c = idleCluster();
    c.kill("rs-1", "OOMKilled");
    c.pods.get("rs-1").sessionEndsAt = null;
    c.pods.get("rs-1").readyAt = null; // it does not come back, and nothing expires it
    step(c);
    c.now = c.now.plus(Duration.ofMinutes(10)).plusSeconds(5);
    Roller.Decision d = step(c);
    assertThat(d.lastCrash().getPendingRegions()).isNull();
    assertThat(d.lastCrash().getRegionsServingAt()).isNull();
    assertThat(d.events())
        .extracting(Event::message)
        .singleElement()
        .asString()
        .contains("3 of its 3 regions did not serve yet", "podReadyTimeout");
  }
}
