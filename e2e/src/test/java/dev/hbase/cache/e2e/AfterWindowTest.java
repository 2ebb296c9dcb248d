package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.RollObserver.AFTER_WINDOW;
import static dev.hbase.cache.e2e.RollObserver.DRAIN_MARGIN;
import static dev.hbase.cache.e2e.RollObserver.LONGEST_AFTER_WINDOW;
import static dev.hbase.cache.e2e.RollObserver.afterWindowEnd;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The window of reads right after a pod's restart ({@link RollObserver#afterWindowEnd}): what the
 * suite waits for after a roll and what it measures each restarted pod's ratio over. No cluster.
 */
@org.junit.jupiter.api.Order(0)
class AfterWindowTest {
  static final Instant FIRST = Instant.parse("2026-11-28T10:00:00Z");

  @Test
  void aPodInTheMiddleOfTheRollKeepsItsWindowWhenTheNextDrainComesLater() {
    assertThat(afterWindowEnd(FIRST, FIRST.plusSeconds(20), false, null))
        .isEqualTo(FIRST.plus(AFTER_WINDOW));
  }

  @Test
  void theNextDrainCutsTheWindowShort() {
    Instant next = FIRST.plusSeconds(3);
    assertThat(afterWindowEnd(FIRST, next, false, null)).isEqualTo(next.plus(DRAIN_MARGIN));
  }

  @Test
  void aDrainBeforeTheFirstReadLeavesAWindowThatEndsBeforeIt() {
    Instant next = FIRST.minusSeconds(5);
    assertThat(afterWindowEnd(FIRST, next, false, null))
        .isEqualTo(next.plus(DRAIN_MARGIN))
        .isBefore(FIRST);
  }

  @Test
  void enoughReadsExactlyAtTheWindowsEndKeepIt() {
    assertThat(afterWindowEnd(FIRST, null, true, FIRST.plus(AFTER_WINDOW)))
        .isEqualTo(FIRST.plus(AFTER_WINDOW));
  }

  @Test
  void theLastPodWithEnoughReadsInItsWindowKeepsIt() {
    assertThat(afterWindowEnd(FIRST, null, true, FIRST.plusSeconds(2)))
        .isEqualTo(FIRST.plus(AFTER_WINDOW));
  }

  @Test
  void theLastPodWithTooFewReadsRunsOnUntilItHasEnough() {
    Instant enough = FIRST.plusSeconds(14);
    assertThat(afterWindowEnd(FIRST, null, true, enough)).isEqualTo(enough);
  }

  @Test
  void theLastPodWithTooFewReadsStopsAtTheLongestWindow() {
    assertThat(afterWindowEnd(FIRST, null, true, null)).isEqualTo(FIRST.plus(LONGEST_AFTER_WINDOW));
    assertThat(afterWindowEnd(FIRST, null, true, FIRST.plusSeconds(90)))
        .isEqualTo(FIRST.plus(LONGEST_AFTER_WINDOW));
  }

  @Test
  void aPodNotTheLastIsNotExtendedEvenWithTooFewReads() {
    assertThat(afterWindowEnd(FIRST, null, false, null)).isEqualTo(FIRST.plus(AFTER_WINDOW));
  }
}
