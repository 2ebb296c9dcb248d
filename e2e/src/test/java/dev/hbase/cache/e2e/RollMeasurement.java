package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static dev.hbase.cache.e2e.Cluster.RS;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;

/**
 * What a {@link RollObserver} saw of one roll, from the spec change to every pod on the new
 * revision: immutable, written to the report by {@link #report}, judged by the scenario.
 *
 * @param uids pod UIDs per ordinal seen during the roll (restarted once = 2)
 * @param maxDown the most RegionServers down (no pod, deleting, or not Ready) at once
 * @param pods per restarted pod, in pod order
 * @param restartEvents this roll's PodRestarted/PodRestartedCold events, as "reason: message"
 * @param restartEventPods the pod each of those events names, in event order
 * @param steady the reader over the {@link RollObserver#STEADY} window before the change
 * @param during the reader from the change to the end of the roll
 * @param timeline the pod watch's changes during the roll
 * @param clusterCached the share of every RegionServer's data reads served from cache from the
 *     change to the roll's end (and the {@link RollObserver#COUNTER_LAG} HBase takes to publish its
 *     counters): this suite's own /jmx samples
 * @param operatorCached the same figure as the operator reports it ({@code
 *     status.rollout.lastRoll.cachedReadRatio})
 * @param homeSeconds per pod, seconds from its delete to all its regions back (the roll's state in
 *     the status)
 * @param eventsNote null, or how the restart events were late or missing (with the policy's events
 *     and the operator's log about them)
 */
record RollMeasurement(
    String label,
    Instant start,
    Instant end,
    Map<Integer, Set<String>> uids,
    int maxDown,
    String maxDownAt,
    boolean pvcsUnchanged,
    SortedMap<String, PodRestart> pods,
    List<String> restartEvents,
    List<String> restartEventPods,
    long coldRestarts,
    Workload.Stats steady,
    Workload.Stats during,
    List<String> timeline,
    Double clusterCached,
    Double operatorCached,
    SortedMap<String, Double> homeSeconds,
    String eventsNote) {

  /**
   * One pod in the roll.
   *
   * @param hitBefore data-block hit ratio over the {@link RollObserver#STEADY} window before the
   *     change (/jmx)
   * @param hitAfter data-block hit ratio of the new instance over its first reads, up to {@link
   *     RollObserver#AFTER_WINDOW} and before the next pod's drain; null: no reads in that window
   * @param afterReads data-block reads in that window
   * @param afterSeconds how long after the new instance's first sample the window ended
   * @param l2FirstSeenAfter L2 used bytes in the new instance's first sample, -1 if none
   * @param steps the rollout steps seen for it in {@code status.rollout.inFlight}
   */
  record PodRestart(
      String pod,
      String restartedAt,
      Double retainedFraction,
      Double hitBefore,
      Double hitAfter,
      long afterReads,
      long afterSeconds,
      long l2Before,
      long l2FirstSeenAfter,
      String steps,
      int uidCount) {}

  long seconds() {
    return Duration.between(start, end).toSeconds();
  }

  void report(Report report) {
    report.line(
        "- %s: roll of %d RegionServers in %d s (max RegionServers down at once: %d, %s)",
        label, REPLICAS, seconds(), maxDown, maxDownAt);
    for (PodRestart p : pods.values()) {
      report.line(
          "  - `%s`: restartedAt %s, retainedFraction %s, L2 used before %.1f MiB / first seen after %.1f MiB, steps %s, UIDs %d; "
              + "data hit ratio in the steady window before the roll %s -> right after its restart %s (%d data-block reads in its first %d s, before the next drain)",
          p.pod(),
          p.restartedAt(),
          Report.ratio(p.retainedFraction()),
          p.l2Before() / 1048576.0,
          p.l2FirstSeenAfter() < 0 ? -1.0 : p.l2FirstSeenAfter() / 1048576.0,
          p.steps(),
          p.uidCount(),
          Report.ratio(p.hitBefore()),
          Report.ratio(p.hitAfter()),
          p.afterReads(),
          p.afterSeconds());
    }
    report.line(
        "  - data reads served from cache, all RegionServers, during the roll: %s (this suite's /jmx samples), %s (the operator's lastRoll)",
        Report.ratio(clusterCached), Report.ratio(operatorCached));
    report.line("  - seconds from each pod's delete to all its regions back: %s", homeSeconds);
    report.line(
        "  - reader steady (%d s before): %s", RollObserver.STEADY.toSeconds(), steady.summary());
    report.line("  - reader during the roll: %s", during.summary());
    during.errors().stream().limit(10).forEach(e -> report.line("    - `%s`", e));
    restartEvents.forEach(e -> report.line("  - event %s", e));
    if (eventsNote != null) {
      report.line("  - %s", eventsNote);
    }
    report.line("  - PVC UIDs unchanged: %s; pod timeline:", pvcsUnchanged);
    timeline.forEach(t -> report.line("    - %s", t));
  }

  /** One line for the report's summary. */
  String summary() {
    List<Double> retained = pods.values().stream().map(PodRestart::retainedFraction).toList();
    List<String> hit = new ArrayList<>();
    pods.values()
        .forEach(
            p ->
                hit.add(
                    p.pod().replace(RS + "-", "rs")
                        + " "
                        + Report.ratio(p.hitBefore())
                        + "->"
                        + Report.ratio(p.hitAfter())));
    return String.format(
        "%s: %d s; cluster's reads from cache %s (operator %s); delete -> regions home %s s; retainedFraction %s; hit ratio before -> right after restart %s; "
            + "failed reads %d; p99 steady %.1f ms vs roll %.1f ms, worst second %.0f ms, %d s over %d ms; max down %d",
        label,
        seconds(),
        Report.ratio(clusterCached),
        Report.ratio(operatorCached),
        homeSeconds.values(),
        retained,
        hit,
        during.fail(),
        steady.p99ms(),
        during.p99ms(),
        during.worstSecondP99ms(),
        during.secondsOverP99Target(),
        Workload.P99_TARGET_MS,
        maxDown);
  }
}
