package dev.hbase.cache.operator.roll;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.roll.RollModel.Blocked;
import dev.hbase.cache.operator.roll.RollModel.EventReason;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.RollModel.Reason;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * HBase actions reach only the policy's own cluster (issue 49, point 4): which RegionServer is
 * which pod (its DNS name in the policy's namespace or its IP, never a name prefix), and the
 * roller's refusal to send anything to a cluster whose servers are not all pods of the namespace.
 */
class OwnClusterTest {
  static final String NEW = "rev-new";
  static final Zone ZONE = FakeCluster.ZONE; // namespace "ns", cluster.local

  static PodView pod(String name, String ip) {
    return new PodView(
        name,
        name + "-uid",
        1,
        "rev",
        true,
        false,
        null,
        ip,
        false,
        false,
        null,
        null,
        ZONE.podName(name, "rs"));
  }

  // ------------------------------------------------------------------ which server is which pod

  @Test
  void aPodIsItsDnsNameInThePolicysNamespaceInEveryFormHBaseMayRegister() {
    PodView rs1 = pod("rs-1", "10.0.0.7");
    assertThat(rs1.fqdn()).isEqualTo("rs-1.rs.ns.svc.cluster.local");
    assertThat(rs1.servesAs("rs-1.rs.ns.svc.cluster.local")).isTrue();
    assertThat(rs1.servesAs("rs-1.rs.ns.svc.cluster.local.")).as("absolute name").isTrue();
    assertThat(rs1.servesAs("rs-1.rs.ns.svc")).as("without the cluster domain").isTrue();
    assertThat(rs1.servesAs("rs-1.rs.ns.svc.")).isTrue();
    assertThat(rs1.servesAs("RS-1.RS.NS.SVC.CLUSTER.LOCAL")).as("DNS ignores case").isTrue();
    assertThat(rs1.servesAs("10.0.0.7")).as("its IP").isTrue();
  }

  @Test
  void aPodIsNeverANamePrefixNorAnotherNamespacesPodNorABareName() {
    PodView rs1 = pod("rs-1", "10.0.0.7");
    assertThat(rs1.servesAs("rs-10.rs.ns.svc.cluster.local")).as("rs-10 is not rs-1").isFalse();
    assertThat(rs1.servesAs("rs-1.rs.other.svc.cluster.local"))
        .as("the pod of the same name in another namespace (the attack)")
        .isFalse();
    assertThat(rs1.servesAs("rs-1.hbase.ns.svc.cluster.local")).as("another service").isFalse();
    assertThat(rs1.servesAs("rs-1.rs.ns.svc.cluster.local.evil.example")).isFalse();
    assertThat(rs1.servesAs("rs-1.rs.ns.svc.other.domain")).as("another cluster domain").isFalse();
    assertThat(rs1.servesAs("rs-1")).as("a bare name names no namespace").isFalse();
    assertThat(rs1.servesAs("10.0.0.70")).isFalse();
    assertThat(rs1.servesAs(null)).isFalse();
    PodView unnamed =
        new PodView("rs-1", "u", 1, "rev", true, false, null, "10.0.0.7", false, false);
    assertThat(unnamed.servesAs("rs-1.rs.ns.svc.cluster.local"))
        .as("no service known: its IP only")
        .isFalse();
    assertThat(unnamed.servesAs("10.0.0.7")).isTrue();
  }

  @Test
  void theNamespaceHoldsThePodsOfEveryStatefulSetOfItAndNothingElse() {
    assertThat(ZONE.holds("other-0.other.ns.svc.cluster.local")).isTrue();
    assertThat(ZONE.holds("other-0.other.ns.svc")).isTrue();
    assertThat(ZONE.holds("other-0.other.ns.svc.cluster.local.")).isTrue();
    assertThat(ZONE.holds("other-0.other.b.svc.cluster.local")).isFalse();
    assertThat(ZONE.holds("other.ns.svc.cluster.local")).as("a Service, not a pod").isFalse();
    assertThat(ZONE.holds("a.b.c.ns.svc.cluster.local")).isFalse();
    assertThat(ZONE.holds("a.b.xns.svc.cluster.local")).isFalse();
    assertThat(ZONE.holds("rs-0")).isFalse();
    assertThat(ZONE.holds("10.0.0.1")).isFalse();
    assertThat(ZONE.podName("rs-0", null)).isNull();
    assertThat(ZONE.podName("rs-0", "not_a_label")).isNull();
  }

  // ------------------------------------------------------------------ the roller's refusal

  /** Three pods whose RegionServers register under the given names. */
  static FakeCluster registeredAs(java.util.function.Function<FakeCluster.Pod, String> host) {
    return new FakeCluster(3, "rev-old", host)
        .regions("rs-0", "a0", "a1", "a2", "a3")
        .regions("rs-1", "b0", "b1")
        .regions("rs-2", "c0", "c1", "c2")
        .meta("rs-2");
  }

  @Test
  void aClusterOfAnotherNamespacesPodsNamedLikeTheTargetsIsSentNothing() {
    // the attack: the policy in "ns" reaches another namespace's cluster, whose pods are named
    // like the target's (rs-0..rs-2 of a StatefulSet "rs" in namespace "victim")
    FakeCluster c = registeredAs(p -> p.name + ".rs.victim.svc.cluster.local");
    RollModel.Input in = c.input(FakeCluster.settings(NEW));
    Roller.Decision d = Roller.step(null, in);
    assertThat(d.actions()).as("no balancer switch, drain, move or delete").isEmpty();
    assertThat(d.outcome()).isInstanceOf(Blocked.class);
    assertThat(((Blocked) d.outcome()).reason()).isEqualTo(Reason.ForeignCluster);
    assertThat(d.degraded()).isTrue();
    assertThat(d.state().getInFlight()).isEmpty();
    assertThat(d.state().getPhase()).isEqualTo(Phase.Blocked);
    assertThat(d.events())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.warning()).isTrue();
              assertThat(e.why()).isEqualTo(EventReason.ForeignCluster);
              assertThat(e.message())
                  .contains("3 of its 3 live RegionServers are no pod of it")
                  .contains("namespace ns")
                  .doesNotContain("victim"); // another tenant's names stay out of this one's status
            });

    // steps after: the same refusal, no new event, still nothing sent
    List<Roller.Decision> log = new ArrayList<>();
    c.run(d.state(), FakeCluster.settings(NEW), 20, s -> false, log);
    assertThat(log).allSatisfy(x -> assertThat(x.actions()).isEmpty());
    assertThat(log).allSatisfy(x -> assertThat(x.events()).isEmpty());
    assertThat(c.executed).isEmpty();
    assertThat(c.restarts).isEmpty();
  }

  @Test
  void oneServerElsewhereRefusesTheWholeCluster() {
    FakeCluster c = RollerTest.threeServers();
    c.hbase.register("intruder", "rs-9.rs.victim.svc.cluster.local", "10.9.9.9", List.of("z0"));
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.actions()).isEmpty();
    assertThat(((Blocked) d.outcome()).reason()).isEqualTo(Reason.ForeignCluster);
    assertThat(((Blocked) d.outcome()).message()).contains("1 of its 4 live RegionServers is");
  }

  @Test
  void serversUnderABareNameAreRefusedAndTheRefusalSaysSo() {
    FakeCluster c = registeredAs(p -> p.name);
    Roller.Decision d = Roller.step(null, c.input(FakeCluster.settings(NEW)));
    assertThat(d.actions()).isEmpty();
    assertThat(((Blocked) d.outcome()).reason()).isEqualTo(Reason.ForeignCluster);
    assertThat(((Blocked) d.outcome()).message())
        .contains("registered under a bare name")
        .contains("rs-0, rs-1, rs-2")
        .contains("<pod>.<service>.ns.svc[.cluster.local]");
  }

  @Test
  void serversRegisteredUnderTheirPodsIpRollAsUnderTheirNames() {
    FakeCluster c = registeredAs(FakeCluster.Pod::ip);
    RolloutStatus end =
        c.run(null, FakeCluster.settings(NEW), 400, s -> s.getPhase() == Phase.Idle, null);
    assertThat(c.allAt(NEW)).isTrue();
    assertThat(end.getPhase()).isEqualTo(Phase.Idle);
    assertThat(c.restarts).containsOnlyKeys("rs-0", "rs-1", "rs-2");
    assertThat(c.executed).anyMatch(a -> a instanceof RollModel.Drain);
  }

  @Test
  void aClusterSpanningTwoStatefulSetsOfTheNamespaceRolls() {
    // RegionServer groups on StatefulSets of their own: the other one's pod is the namespace's
    FakeCluster c = RollerTest.threeServers();
    c.hbase.register("other-0", "other-0.other.ns.svc.cluster.local", "10.0.1.1", List.of("o0"));
    RolloutStatus end =
        c.run(null, FakeCluster.settings(NEW), 400, s -> s.getPhase() == Phase.Idle, null);
    assertThat(c.allAt(NEW)).isTrue();
    assertThat(end.getPhase()).isEqualTo(Phase.Idle);
    assertThat(c.executed).anyMatch(a -> a instanceof RollModel.SwitchBalancer);
  }

  @Test
  void noServerRegisteredSendsNoWriteToHBase() {
    // a roll that finished while every server was away: the balancer would go back on
    FakeCluster c = new FakeCluster(2, NEW);
    c.hbase.unregister("rs-0");
    c.hbase.unregister("rs-1");
    RolloutStatus finishing =
        new RolloutStatus().setPhase(Phase.Rolling).setRevision(NEW).setBalancerWasOn(true);
    c.hbase.balancerOn = false;
    Roller.Decision d = Roller.step(finishing, c.input(FakeCluster.settings(NEW)));
    assertThat(d.actions()).isEmpty();
    assertThat(((Blocked) d.outcome()).reason()).isEqualTo(Reason.ForeignCluster);
    assertThat(((Blocked) d.outcome()).message()).contains("no RegionServer is registered");
  }

  /**
   * Issue 52: the master's version decides which master keys are written (plan.MasterSite), so it
   * is taken only from a cluster shown to be the policy's.
   */
  @Test
  void theMastersVersionIsTakenOnlyFromThePolicysOwnCluster() {
    FakeCluster own = RollerTest.threeServers();
    own.hbase.version = " 2.6.4-hadoop3 ";
    RollModel.Input in = own.input(FakeCluster.settings(NEW));
    assertThat(OwnCluster.masterVersion(in.hbase(), in.pods(), ZONE)).isEqualTo("2.6.4-hadoop3");
    own.hbase.version = null;
    in = own.input(FakeCluster.settings(NEW));
    assertThat(OwnCluster.masterVersion(in.hbase(), in.pods(), ZONE)).isNull();

    FakeCluster other = registeredAs(p -> p.name + ".rs.victim.svc.cluster.local");
    other.hbase.version = "2.6.4";
    in = other.input(FakeCluster.settings(NEW));
    assertThat(OwnCluster.masterVersion(in.hbase(), in.pods(), ZONE))
        .as("another namespace's cluster")
        .isNull();

    FakeCluster empty = new FakeCluster(2, NEW);
    empty.hbase.unregister("rs-0");
    empty.hbase.unregister("rs-1");
    empty.hbase.version = "2.6.4";
    in = empty.input(FakeCluster.settings(NEW));
    assertThat(OwnCluster.masterVersion(in.hbase(), in.pods(), ZONE))
        .as("no RegionServer registered: the cluster cannot be shown to be the policy's")
        .isNull();
  }

  @Test
  void aHoldGivesNothingBackToAnotherNamespacesCluster() {
    // a drained pod held on a cluster that is another's (status written by hand, or the quorum
    // changed mid-roll): neither the balancer nor the drained server is touched
    FakeCluster c = registeredAs(p -> p.name + ".rs.victim.svc.cluster.local");
    RolloutStatus mid =
        new RolloutStatus()
            .setPhase(Phase.Rolling)
            .setRevision(NEW)
            .setBalancerWasOn(true)
            .setInFlight(
                new ArrayList<>(
                    List.of(
                        new PodRoll()
                            .setPod("rs-1")
                            .setUid("rs-1-uid-0")
                            .setStep(PodRoll.Step.Draining)
                            .setOldServer(c.hbase.servers.get("rs-1").id.toString())
                            .setRegions(List.of("b0", "b1")))));
    c.hbase.balancerOn = false;
    Roller.Decision held = Roller.hold(mid, c.podViews(), c.hbase.snapshot(), "PlanRefused", ZONE);
    assertThat(held.actions()).isEmpty();
    assertThat(((Blocked) held.outcome()).reason()).isEqualTo(Reason.ForeignCluster);
    assertThat(held.events()).extracting(RollModel.Event::why).contains(EventReason.ForeignCluster);
    Roller.Decision blind = Roller.hold(mid, null, c.hbase.snapshot(), "TargetNotFound", ZONE);
    assertThat(blind.actions()).isEmpty();

    // on its own cluster the same hold gives back
    FakeCluster own = RollerTest.threeServers();
    mid.getInFlight().get(0).setOldServer(own.hbase.servers.get("rs-1").id.toString());
    own.hbase.balancerOn = false;
    assertThat(
            Roller.hold(mid, own.podViews(), own.hbase.snapshot(), "PlanRefused", ZONE).actions())
        .isNotEmpty();
  }

  /**
   * The second record of the marks lives on the tenant's own StatefulSet, so its author can write
   * any ServerName there: a record naming another namespace's decommissioned server, on a policy
   * whose quorum reaches that cluster, clears nothing there (the orphans go under the step's and
   * the hold's guard); on its own cluster the same record is given back.
   */
  @Test
  void aRecordOfMarksNamingAnotherNamespacesServerClearsNothingThere() {
    FakeCluster c = registeredAs(p -> p.name + ".rs.victim.svc.cluster.local");
    String victims = c.hbase.servers.get("rs-1").id.toString();
    c.hbase.decommissioned.add(c.hbase.servers.get("rs-1").id); // that cluster's own mark
    RolloutStatus idle = new RolloutStatus().setPhase(Phase.Idle).setRevision("rev-old");
    Roller.Decision d =
        Roller.step(idle, c.input(FakeCluster.settings("rev-old"), List.of(victims)));
    assertThat(d.actions()).as("nothing sent to another namespace's cluster").isEmpty();
    RolloutStatus mid = new RolloutStatus().setPhase(Phase.Rolling).setRevision("rev-old");
    assertThat(
            Roller.hold(
                    mid, c.podViews(), c.hbase.snapshot(), "PlanRefused", ZONE, List.of(victims))
                .actions())
        .isEmpty();

    FakeCluster own = RollerTest.threeServers();
    String mine = own.hbase.servers.get("rs-1").id.toString();
    own.hbase.decommissioned.add(own.hbase.servers.get("rs-1").id);
    assertThat(
            Roller.step(idle, own.input(FakeCluster.settings("rev-old"), List.of(mine))).actions())
        .as("on its own cluster, a mark the status lost is given back")
        .contains(new RollModel.Recommission(own.hbase.servers.get("rs-1").id, List.of()));
  }
}
