package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import org.junit.jupiter.api.Test;

/** The target's record of the balancer ({@link BalancerRecord}): when it completes a status. */
class BalancerRecordTest {
  static final BlockCachePolicy POLICY = policy("uid-a");
  static final BlockCachePolicy OTHER = policy("uid-b");

  static BlockCachePolicy policy(String uid) {
    BlockCachePolicy p = new BlockCachePolicy();
    p.setMetadata(new ObjectMetaBuilder().withName("p").withNamespace("ns").withUid(uid).build());
    return p;
  }

  static StatefulSet target(String record) {
    var b = new StatefulSetBuilder().withNewMetadata().withName("rs").withNamespace("ns");
    if (record != null) {
      b.addToAnnotations(BalancerRecord.ANNOTATION, record);
    }
    return b.endMetadata().build();
  }

  @Test
  void aStatusThatLostBalancerWasOnMidRollIsCompletedFromThePolicysRecord() {
    assertThat(BalancerRecord.recovered(null, target("uid-a"), POLICY).getBalancerWasOn()).isTrue();
    RolloutStatus wiped = new RolloutStatus().setPhase(Phase.Rolling);
    RolloutStatus r = BalancerRecord.recovered(wiped, target("uid-a"), POLICY);
    assertThat(r.getBalancerWasOn()).isTrue();
    assertThat(r.getPhase()).isEqualTo(Phase.Rolling);
    assertThat(wiped.getBalancerWasOn()).as("the status read is not changed").isNull();
    assertThat(BalancerRecord.recovered(new RolloutStatus(), target("uid-a"), POLICY))
        .extracting(RolloutStatus::getBalancerWasOn)
        .as("no phase at all: a status replaced by an empty one")
        .isEqualTo(true);
  }

  @Test
  void anotherPolicysRecordAnIdleRollOrAStatusThatHasItIsLeftAsItIs() {
    RolloutStatus none = new RolloutStatus().setPhase(Phase.Rolling);
    assertThat(BalancerRecord.recovered(none, target("uid-b"), POLICY))
        .as("a second policy on the StatefulSet (Conflict) never reads the first's")
        .isSameAs(none);
    assertThat(BalancerRecord.recovered(null, target("true"), POLICY)).isNull();
    RolloutStatus idle = new RolloutStatus().setPhase(Phase.Idle);
    assertThat(BalancerRecord.recovered(idle, target("uid-a"), POLICY))
        .as("a roll that ended gave it back: a record left by a failed removal is not read")
        .isSameAs(idle);
    RolloutStatus found = new RolloutStatus().setPhase(Phase.Rolling).setBalancerWasOn(false);
    assertThat(BalancerRecord.recovered(found, target("uid-a"), POLICY)).isSameAs(found);
    assertThat(BalancerRecord.recovered(none, target(null), POLICY)).isSameAs(none);
    assertThat(BalancerRecord.recovered(none, null, POLICY)).isSameAs(none);
  }

  @Test
  void writtenWhileTheRollOwesTheBalancerAndRemovedOnceItDoesNot() {
    RolloutStatus owes = new RolloutStatus().setBalancerWasOn(true);
    assertThat(BalancerRecord.needed(owes, target(null), POLICY)).isTrue();
    assertThat(BalancerRecord.needed(owes, target("uid-b"), POLICY))
        .as("another policy's record is replaced by this one's")
        .isTrue();
    assertThat(BalancerRecord.needed(owes, target("uid-a"), POLICY)).isFalse();
    assertThat(BalancerRecord.stale(owes, target("uid-a"), POLICY)).isFalse();
    RolloutStatus done = new RolloutStatus();
    assertThat(BalancerRecord.needed(done, target(null), POLICY)).isFalse();
    assertThat(BalancerRecord.stale(done, target("uid-a"), POLICY)).isTrue();
    assertThat(BalancerRecord.stale(done, target("uid-a"), OTHER))
        .as("another policy does not remove it")
        .isFalse();
    assertThat(BalancerRecord.stale(done, target(null), POLICY)).isFalse();
  }
}
