package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * When a deleted policy's give-back counts as done ({@link ReleaseStep#left}): the finalizer goes
 * only once the master shows it, and a mark on an instance that is gone does not hold it.
 */
class ReleaseStepTest {
  static final ServerId RS1 = ServerId.parse("rs-1.rs.ns.svc.cluster.local,16020,1");
  static final ServerId RS1_OLD = ServerId.parse("rs-1.rs.ns.svc.cluster.local,16020,0");
  static final List<RollModel.Action> GIVE_BACK =
      List.of(new RollModel.SwitchBalancer(true), new RollModel.Recommission(RS1, List.of()));

  static ClusterSnapshot after(Boolean balancerOn, List<ServerId> decommissioned) {
    return new ClusterSnapshot(
        Instant.EPOCH,
        true,
        null,
        List.of(new ServerState(RS1, 16030, List.of("r1"), true, decommissioned.contains(RS1))),
        List.of(),
        0,
        null,
        decommissioned,
        balancerOn);
  }

  @Test
  void doneOnceTheBalancerIsOnAndNoLiveServerOfTheRollIsMarked() {
    assertThat(ReleaseStep.left(GIVE_BACK, after(true, List.of()))).isNull();
  }

  @Test
  void theBalancerStillOffOrAServerStillMarkedIsLeft() {
    assertThat(ReleaseStep.left(GIVE_BACK, after(false, List.of())))
        .isEqualTo("the balancer is still off");
    assertThat(ReleaseStep.left(GIVE_BACK, after(null, List.of())))
        .as("a master that does not say")
        .isEqualTo("the balancer is still off");
    assertThat(ReleaseStep.left(GIVE_BACK, after(true, List.of(RS1))))
        .isEqualTo(RS1 + " is still decommissioned");
  }

  @Test
  void aMarkOnAnInstanceThatIsGoneDoesNotHoldIt() {
    List<RollModel.Action> oldInstance =
        List.of(new RollModel.SwitchBalancer(true), new RollModel.Recommission(RS1_OLD, List.of()));
    assertThat(ReleaseStep.left(oldInstance, after(true, List.of(RS1_OLD)))).isNull();
  }

  @Test
  void aMasterThatDoesNotAnswerAfterwardsLeavesItAll() {
    assertThat(ReleaseStep.left(GIVE_BACK, ClusterSnapshot.unreachable(Instant.EPOCH, "refused")))
        .as("the error text stays in the log: a new one at every try would be a new event")
        .isEqualTo("the HBase master did not answer after the give-back");
  }

  @Test
  void aRollThatFoundTheBalancerOffDoesNotAskForItOn() {
    List<RollModel.Action> off = List.of(new RollModel.SwitchBalancer(false));
    assertThat(ReleaseStep.left(off, after(false, List.of()))).isNull();
  }

  @Test
  void theBalancerCountsAsBackOnlyWhenTheGiveBackSwitchedItAndTheMasterShowsItOn() {
    assertThat(ReleaseStep.balancerBack(GIVE_BACK, after(true, List.of(RS1))))
        .as("on, a server still marked: the record may drop the balancer")
        .isTrue();
    assertThat(ReleaseStep.balancerBack(GIVE_BACK, after(false, List.of()))).isFalse();
    assertThat(ReleaseStep.balancerBack(GIVE_BACK, after(null, List.of()))).isFalse();
    assertThat(ReleaseStep.balancerBack(GIVE_BACK, ClusterSnapshot.unreachable(Instant.EPOCH, "x")))
        .isFalse();
    assertThat(
            ReleaseStep.balancerBack(
                List.of(new RollModel.Recommission(RS1, List.of())), after(true, List.of(RS1))))
        .as("a give-back that owed no balancer")
        .isFalse();
  }
}
