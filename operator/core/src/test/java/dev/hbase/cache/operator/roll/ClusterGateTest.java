package dev.hbase.cache.operator.roll;

import static dev.hbase.cache.operator.roll.RollerTest.NEW;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.hbase.ServerId;
import org.junit.jupiter.api.Test;

/**
 * Which of HBase's dead servers the gate does not count ({@link ClusterGate#scaledAway}): those of
 * an ordinal the target's StatefulSet no longer has, told by their DNS name as DNS compares it.
 */
class ClusterGateTest {
  /** Three servers scaled to two: rs-2 gone. */
  static RollModel.Input scaledToTwo() {
    FakeCluster c = RollerTest.threeServers();
    c.pods.remove("rs-2");
    c.replicas = 2;
    return c.input(FakeCluster.settings(NEW));
  }

  static boolean ignored(String host) {
    return ClusterGate.scaledAway(new ServerId(host, 16020, 1), scaledToTwo());
  }

  @Test
  void aGoneOrdinalIsNotCountedHoweverItsNameIsWritten() {
    assertThat(ignored("rs-2.rs.ns.svc.cluster.local")).isTrue();
    assertThat(ignored("RS-2.rs.NS.svc.cluster.local.")).as("case, trailing dot").isTrue();
    assertThat(ignored("rs-2.rs.ns.svc")).as("without the cluster domain").isTrue();
    assertThat(ignored("rs-17.rs.ns.svc.cluster.local")).as("any ordinal above").isTrue();
  }

  @Test
  void everythingElseStillClosesTheGate() {
    assertThat(ignored("rs-1.rs.ns.svc.cluster.local")).as("an ordinal it still has").isFalse();
    assertThat(ignored("rs-2.other.ns.svc.cluster.local")).as("another service").isFalse();
    assertThat(ignored("rs-2.rs.other.svc.cluster.local")).as("another namespace").isFalse();
    assertThat(ignored("rs-canary-2.rs.ns.svc.cluster.local"))
        .as("a StatefulSet whose name begins with the target's")
        .isFalse();
    assertThat(ignored("rs-02.rs.ns.svc.cluster.local")).as("not an ordinal").isFalse();
    assertThat(ignored("rs-2")).as("a bare host name").isFalse();
    assertThat(ignored("10.0.0.2")).as("an IP: cannot be told apart").isFalse();
  }

  @Test
  void aLeavingPodOfThatOrdinalStillClosesIt() {
    FakeCluster c = RollerTest.threeServers();
    c.scaleTo(2); // rs-2 is leaving, its pod still there
    RollModel.Input in = c.input(FakeCluster.settings(NEW));
    assertThat(in.leaving()).extracting(RollModel.PodView::name).contains("rs-2");
    assertThat(ClusterGate.scaledAway(new ServerId("rs-2.rs.ns.svc.cluster.local", 16020, 1), in))
        .isFalse();
  }
}
