package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.KindScenario.CLUSTER_CACHED_FLOOR;
import static dev.hbase.cache.e2e.KindScenario.READER;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a stop that was not the operator's (an eviction, a delete, a scale-down or -up: steps 11 and
 * 11b) cost the whole cluster, and where it left the regions (issue 28's figures per scenario).
 *
 * <p>Asserted, as for a roll: at least {@link KindScenario#CLUSTER_CACHED_FLOOR} of the cluster's
 * data reads from the stop until its regions were home came from cache (caches kept). Reported:
 * that share, flagged under the goal, and with {@code E2E_STOP_SETTLE_SECONDS} set (a measurement
 * run: {@code 600} for the "ten minutes later"; not set in {@code .ci/run}) the region
 * count per server, the Balanced condition, the share from cache and the reader over that many
 * seconds more, HBase's balancer free to run meanwhile (every 5 min on the kind chart).
 */
final class StopFigures {
  /** Seconds to wait after each stop, reader on (env E2E_STOP_SETTLE_SECONDS; 0: none). */
  static long settle() {
    return seconds(System.getenv("E2E_STOP_SETTLE_SECONDS"));
  }

  private StopFigures() {}

  /**
   * The figures of one stop, {@code from} its start to {@code end}, when its regions were home:
   * reported, the cache share asserted; returns them for the summary.
   */
  static String after(KindScenario s, String event, Instant from, Instant end) {
    return after(s, event, from, end, true);
  }

  /** As {@link #after(KindScenario, String, Instant, Instant)}; without the settle if not asked. */
  static String after(KindScenario s, String event, Instant from, Instant end, boolean settle) {
    // HBase publishes its counters every second here, sampled every 2 s
    sleepUntil(end.plus(RollObserver.COUNTER_LAG));
    Double cached = s.sampler.servedFromCache(from, end.plus(RollObserver.COUNTER_LAG));
    s.report.line(
        "- %s: the cluster's data reads from cache from the stop until its regions were home: %s",
        event, ratio(cached));
    assertThat(cached)
        .as("data reads served from cache, all RegionServers, during the %s", event)
        .isNotNull()
        .isGreaterThanOrEqualTo(CLUSTER_CACHED_FLOOR);
    s.belowTheGoal("the " + event, cached);
    String out = "from cache " + ratio(cached);
    long wait = settle ? settle() : 0;
    if (wait > 0) {
      Instant s0 = Instant.now();
      sleepUntil(s0.plusSeconds(wait));
      Instant s1 = Instant.now();
      Double later = s.sampler.servedFromCache(s0, s1);
      Workload.Stats r = Workload.stats(s.workload.log(READER), s0, s1);
      String counts = s.regionsPerPod();
      s.report.line(
          "- %s, %d s later: regions per pod (/jmx) %s; condition Balanced %s; over those %d s the"
              + " cluster's data reads from cache %s, reader %s",
          event, wait, counts, balanced(s), wait, ratio(later), r.summary());
      out +=
          String.format(
              Locale.ROOT, "; %d s later: regions %s, from cache %s", wait, counts, ratio(later));
    }
    return out;
  }

  /**
   * The Balanced condition as "True (its message)", once its counts are the ones every
   * RegionServer's /jmx gives now (the condition keeps its last value while a server is in flight
   * or not sampled yet, so right after a stop it may still show the counts from before: up to 30 s
   * are waited for), else with a note that they differ.
   */
  static String balanced(KindScenario s) {
    Instant deadline = Instant.now().plusSeconds(30);
    Condition c;
    Map<String, String> jmx;
    boolean same;
    do {
      jmx = new TreeMap<>();
      for (var e : s.regionCounts().entrySet()) {
        jmx.put(e.getKey(), Long.toString(e.getValue()));
      }
      c = Cluster.condition(s.cluster.policy(), "Balanced");
      same = c != null && BalancerRuns.counts(c.getMessage()).equals(jmx);
      if (same) {
        break;
      }
      sleepUntil(Instant.now().plusSeconds(2));
    } while (Instant.now().isBefore(deadline));
    if (c == null) {
      return "not set yet";
    }
    return c.getStatus()
        + " ("
        + c.getMessage()
        + ")"
        + (same ? "" : " (after 30 s its counts still differ from /jmx's " + jmx + ")");
  }

  static long seconds(String v) {
    if (v == null || v.isBlank()) {
      return 0;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "E2E_STOP_SETTLE_SECONDS must be a whole number of seconds, not '" + v + "'", e);
    }
  }

  static String ratio(Double r) {
    return r == null ? "n/a" : String.format(Locale.ROOT, "%.4f", r);
  }

  private static void sleepUntil(Instant t) {
    long ms = Duration.between(Instant.now(), t).toMillis();
    if (ms <= 0) {
      return;
    }
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
