package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.Roller;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 27: a roll that waits because HBase refused the operator's identity does not end by itself,
 * so Degraded says so (reason AccessDenied); other waits leave Degraded False.
 */
class AccessDeniedConditionTest {

  static Condition degraded(RollModel.Reason waitReason) {
    BlockCachePolicy p = new BlockCachePolicy();
    p.getMetadata().setGeneration(1L);
    p.setStatus(new BlockCachePolicyStatus());
    RolloutStatus st = new RolloutStatus().setPhase(RolloutStatus.Phase.Rolling);
    Roller.Decision d =
        new Roller.Decision(
            st,
            List.of(),
            List.of(),
            List.of(),
            new RollModel.Wait(waitReason, "HBase refused: AccessDeniedException"),
            java.time.Duration.ofSeconds(5));
    BlockCachePolicyStatus s = new StatusAggregator(p, Instant.now()).rolled(d).status();
    return Conditions.find(s.getConditions(), "Degraded").orElseThrow();
  }

  @Test
  void aWaitForAPermissionIsDegraded() {
    Condition c = degraded(RollModel.Reason.AccessDenied);
    assertThat(c.getStatus()).isEqualTo("True");
    assertThat(c.getReason()).isEqualTo("AccessDenied");
    assertThat(c.getMessage()).contains("AccessDeniedException");
  }

  @Test
  void anOrdinaryWaitIsNot() {
    Condition c = degraded(RollModel.Reason.Reloading);
    assertThat(c.getStatus()).isEqualTo("False");
    assertThat(c.getReason()).isEqualTo("AsPlanned");
  }
}
