package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.CacheStatus;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.roll.RollModel;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Which status changes may wait ({@link StatusAggregator#onlyProgressChanged}) and how long. */
class StatusWritesTest {
  static final Instant T = Instant.parse("2026-11-25T10:00:00Z");

  /** A policy mid-roll: rs-1 draining, rs-0 and rs-2 serving, figures sampled. */
  static BlockCachePolicy rolling() {
    BlockCachePolicyStatus s = new BlockCachePolicyStatus().setObservedGeneration(2L);
    Conditions.set(s.getConditions(), Conditions.READY, false, Reason.RollPending, "1/3", 2L, T);
    Conditions.set(
        s.getConditions(),
        Conditions.PROGRESSING,
        true,
        RollModel.Reason.Draining,
        "moving 5",
        2L,
        T);
    s.setRollout(
        new RolloutStatus()
            .setPhase(Phase.Rolling)
            .setMessage("moving 5 regions off rs-1")
            .setCurrent(new RollSummary().setRestarts(1).setDataReads(100L).setCachedReads(99L))
            .setInFlight(
                new ArrayList<>(
                    List.of(
                        new PodRoll()
                            .setPod("rs-1")
                            .setStep(PodRoll.Step.Draining)
                            .setStepStartedAt(T.toString())))));
    s.setCache(new CacheStatus().setHitRatio(0.97).setSampledAt(T.toString()));
    s.setRegionServers(
        new ArrayList<>(
            List.of(
                new RegionServerStatus().setPod("rs-0").setReady(true).setHitRatio(0.98),
                new RegionServerStatus().setPod("rs-1").setReady(true),
                new RegionServerStatus().setPod("rs-2").setReady(true))));
    BlockCachePolicy p = new BlockCachePolicy();
    p.setMetadata(
        new ObjectMetaBuilder().withName("cache").withUid("u1").withGeneration(2L).build());
    p.setStatus(s);
    return p;
  }

  static StatusAggregator after(BlockCachePolicy p, Consumer<BlockCachePolicyStatus> change) {
    StatusAggregator a = new StatusAggregator(p, T.plusSeconds(3));
    change.accept(a.status());
    assertThat(a.changed()).as("a change to write").isNotNull();
    return a;
  }

  @Test
  void messagesRowsAndFiguresAreProgress() {
    BlockCachePolicy p = rolling();
    StatusAggregator a =
        after(
            p,
            s -> {
              s.getRollout().setMessage("moving 2 regions off rs-1");
              Conditions.set(
                  s.getConditions(),
                  Conditions.PROGRESSING,
                  true,
                  RollModel.Reason.WaitingForPod,
                  "x",
                  2L,
                  T);
              s.getRegionServers().remove(1); // rs-1's pod deleted
              s.getRegionServers().get(0).setReady(false).setHitRatio(0.5);
              s.getCache().setHitRatio(0.9).setSampledAt(T.plusSeconds(3).toString());
            });
    assertThat(a.onlyProgressChanged()).isTrue();
  }

  @Test
  void theRollsStateAConditionTurningAndTheRollsCountersAreNot() {
    assertThat(
            after(
                    rolling(),
                    s -> s.getRollout().getInFlight().get(0).setStep(PodRoll.Step.Deleting))
                .onlyProgressChanged())
        .isFalse();
    assertThat(
            after(
                    rolling(),
                    s ->
                        Conditions.set(
                            s.getConditions(), Conditions.READY, true, Reason.Applied, "", 2L, T))
                .onlyProgressChanged())
        .isFalse();
    // reads counted since the last sample: lost if not written (the next sample counts from here)
    assertThat(
            after(rolling(), s -> s.getRollout().getCurrent().setDataReads(180L))
                .onlyProgressChanged())
        .isFalse();
    assertThat(after(rolling(), s -> s.setObservedGeneration(3L)).onlyProgressChanged()).isFalse();
  }

  @Test
  void aFirstStatusIsNotProgress() {
    BlockCachePolicy p = rolling();
    p.setStatus(null);
    assertThat(
            after(p, s -> s.setRollout(new RolloutStatus().setPhase(Phase.Idle)))
                .onlyProgressChanged())
        .isFalse();
  }

  @Test
  void progressWaitsUntilFiveSecondsAfterTheLastWriteWhileRolling() {
    StatusWrites w = new StatusWrites();
    BlockCachePolicyStatus next = rolling().getStatus();
    assertThat(w.deferral("u1", next, true, T)).as("nothing written yet").isZero();
    w.written("u1", T);
    assertThat(w.deferral("u1", next, true, T.plusSeconds(2))).isEqualTo(Duration.ofSeconds(3));
    assertThat(w.deferral("u1", next, false, T.plusSeconds(2))).as("state").isZero();
    assertThat(w.deferral("u1", next, true, T.plusSeconds(5))).isZero();
    assertThat(w.deferral("u2", next, true, T.plusSeconds(2))).as("another policy").isZero();
    next.getRollout().setPhase(Phase.Blocked);
    assertThat(w.deferral("u1", next, true, T.plusSeconds(2))).as("not rolling").isZero();
    w.forget("u1");
    next.getRollout().setPhase(Phase.Rolling);
    assertThat(w.deferral("u1", next, true, T.plusSeconds(2))).as("forgotten").isZero();
  }
}
