package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import org.junit.jupiter.api.Test;

/** The target's record of the balancer ({@link BalancerRecord}): when it completes a status. */
class BalancerRecordTest {
  static StatefulSet target(String record) {
    var b = new StatefulSetBuilder().withNewMetadata().withName("rs").withNamespace("ns");
    if (record != null) {
      b.addToAnnotations(BalancerRecord.ANNOTATION, record);
    }
    return b.endMetadata().build();
  }

  @Test
  void aStatusThatLostBalancerWasOnIsCompletedFromTheRecord() {
    assertThat(BalancerRecord.recovered(null, target("true")).getBalancerWasOn()).isTrue();
    RolloutStatus wiped = new RolloutStatus().setPhase(Phase.Rolling);
    RolloutStatus r = BalancerRecord.recovered(wiped, target("true"));
    assertThat(r.getBalancerWasOn()).isTrue();
    assertThat(r.getPhase()).isEqualTo(Phase.Rolling);
    assertThat(wiped.getBalancerWasOn()).as("the status read is not changed").isNull();
  }

  @Test
  void aStatusThatHasItOrNoRecordIsLeftAsItIs() {
    RolloutStatus found = new RolloutStatus().setBalancerWasOn(false);
    assertThat(BalancerRecord.recovered(found, target("true"))).isSameAs(found);
    RolloutStatus none = new RolloutStatus();
    assertThat(BalancerRecord.recovered(none, target(null))).isSameAs(none);
    assertThat(BalancerRecord.recovered(none, target("false"))).isSameAs(none);
    assertThat(BalancerRecord.recovered(none, null)).isSameAs(none);
  }

  @Test
  void writtenWhileTheRollOwesTheBalancerAndRemovedOnceItDoesNot() {
    RolloutStatus owes = new RolloutStatus().setBalancerWasOn(true);
    assertThat(BalancerRecord.needed(owes, target(null))).isTrue();
    assertThat(BalancerRecord.needed(owes, target("true"))).isFalse();
    assertThat(BalancerRecord.stale(owes, target("true"))).isFalse();
    RolloutStatus done = new RolloutStatus();
    assertThat(BalancerRecord.needed(done, target(null))).isFalse();
    assertThat(BalancerRecord.stale(done, target("true"))).isTrue();
    assertThat(BalancerRecord.stale(new RolloutStatus().setBalancerWasOn(false), target("true")))
        .isTrue();
    assertThat(BalancerRecord.stale(done, target(null))).isFalse();
  }
}
