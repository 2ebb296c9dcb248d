package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The "caches to keep" wait before a judged roll: {@link KindScenario#l2Settled}. No cluster. */
@org.junit.jupiter.api.Order(0)
class L2SettledTest {
  static final Instant CHANGED = Instant.parse("2026-11-26T12:00:00Z");

  @Test
  void everyPodHoldingBlocksAndUnchangedForTheWholeWindowCounts() {
    Map<String, Long> l2 = Map.of("rs-0", 33L << 20, "rs-1", 132L << 20, "rs-2", 1L);
    assertThat(KindScenario.l2Settled(l2, CHANGED, CHANGED.plus(KindScenario.L2_SETTLED))).isTrue();
  }

  @Test
  void aChangeInsideTheWindowDoesNot() {
    Map<String, Long> l2 = Map.of("rs-0", 1L, "rs-1", 1L, "rs-2", 1L);
    assertThat(
            KindScenario.l2Settled(
                l2, CHANGED, CHANGED.plus(KindScenario.L2_SETTLED).minusMillis(1)))
        .isFalse();
  }

  @Test
  void anEmptyOrMissingPodDoesNot() {
    Instant late = CHANGED.plus(KindScenario.L2_SETTLED).plusSeconds(60);
    assertThat(KindScenario.l2Settled(Map.of("rs-0", 1L, "rs-1", 1L, "rs-2", 0L), CHANGED, late))
        .isFalse();
    assertThat(KindScenario.l2Settled(Map.of("rs-0", 1L, "rs-1", 1L), CHANGED, late)).isFalse();
  }

  @Test
  void aGrowthWithinTheToleranceIsNoChangeAndOneBeyondItIs() {
    Map<String, Long> ref = Map.of("rs-0", 100_000L, "rs-1", 100_000L, "rs-2", 66_000L);
    assertThat(
            KindScenario.l2Moved(ref, Map.of("rs-0", 100_200L, "rs-1", 100_000L, "rs-2", 66_000L)))
        .as("0.2% more on one pod")
        .isFalse();
    assertThat(
            KindScenario.l2Moved(ref, Map.of("rs-0", 102_000L, "rs-1", 100_000L, "rs-2", 66_000L)))
        .as("2% more on one pod")
        .isTrue();
    assertThat(KindScenario.l2Moved(ref, Map.of("rs-0", 100_000L, "rs-1", 100_000L)))
        .as("a pod gone")
        .isTrue();
    assertThat(KindScenario.l2Moved(Map.of(), ref)).as("the first figures").isTrue();
  }
}
