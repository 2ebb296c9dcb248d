package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When each policy's status was last written, so that progress alone (a wait's message, a pod's
 * readiness, fresh cache figures: {@link StatusAggregator#onlyProgressChanged}) is written at most
 * once per {@link #PROGRESS_EVERY} while a roll runs. A roll wrote about nine statuses per pod
 * restart, a third of them progress alone (make bench-operator); each is a status patch that the
 * reconcile waits for and the API server computes. Progress left unwritten is worked out again by
 * the next reconcile, which is asked for within the deferral; every change of the roll's state is
 * written at once. Kept in memory only: an operator that starts writes its first status at once.
 */
final class StatusWrites {
  static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);

  private final Map<String, Instant> last = new ConcurrentHashMap<>();

  /**
   * How long this status may wait before it is written, or {@link Duration#ZERO} to write it now.
   *
   * @param progressOnly only progress differs from the status written before
   */
  Duration deferral(
      String policyUid, BlockCachePolicyStatus next, boolean progressOnly, Instant now) {
    Instant before = last.get(policyUid);
    if (!progressOnly
        || before == null
        || next.getRollout() == null
        || next.getRollout().getPhase() != Phase.Rolling) {
      return Duration.ZERO;
    }
    Duration left = Duration.between(now, before.plus(PROGRESS_EVERY));
    return left.isNegative() ? Duration.ZERO : left;
  }

  void written(String policyUid, Instant at) {
    last.put(policyUid, at);
  }

  void forget(String policyUid) {
    last.remove(policyUid);
  }
}
