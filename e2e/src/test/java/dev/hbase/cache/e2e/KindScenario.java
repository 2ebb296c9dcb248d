package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The base of the kind suite's scenario classes: the end-to-end scenarios on a kind cluster with
 * charts/hbase installed (e2e/e2e.sh prepares it), the classes of {@link KindSuite#SCENARIOS} in
 * that order, on one cluster set up once by {@link KindSuite} (the state they share: {@link
 * Suite}). Each class stands alone: what it needs at its start ({@link #needs()}) is checked, and
 * established where it does not hold, before its first step; a failed step skips the rest of its
 * own class only. Every number seen goes to e2e/target/e2e-report.md. Rolls are measured by {@link
 * RollObserver}. What several scenario classes use is here: {@link #step}, the roll measurement and
 * its assertions; the fault scenarios' own: {@link FaultScenario}.
 *
 * <p>Over ~400 lines because it is the one place for the assertions every roll step shares (one at
 * a time with the cache kept, regions home, the cluster's reads cached): split, the scenario
 * classes would reach into each other.
 */
@ExtendWith(KindSuite.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class KindScenario {
  static final String TABLE = "usertable";
  static final long ROWS = 50_000;
  static final int VALUE_BYTES = 4096;
  static final int REGIONS = 6;
  static final String READER = "e2e-reader";

  /**
   * Observation windows in which nothing may change, after a change the operator has answered (the
   * refused policy's Valid=False, the deleted policy gone): what it would do wrong comes in the
   * reconcile that answered, or at its next policy metrics sample (10 s here). Its next look at a
   * refused policy is 60 s later and there is none at a deleted one, so a longer window proves
   * nothing more. It was 30 s.
   */
  static final Duration NOTHING_CHANGES = Duration.ofSeconds(15);

  /**
   * The window in which a Blocked roll may touch no other pod: the roller looks at a blocked roll
   * again 30 s after it blocked ({@code StepState.BLOCKED}), and the suite sees Blocked up to a 2 s
   * poll later, so the window holds that look and a few seconds for what it would do.
   */
  static final Duration BLOCKED_HOLDS = Duration.ofSeconds(35);

  static final Duration NO_ROLL_AFTER_REVERT = Duration.ofSeconds(15);

  /**
   * The goal for the data reads served from cache during a roll, all RegionServers (issue 28): a
   * performance figure, reported in the e2e report (a roll below it says so) and judged in
   * docs/measurements.md, never a failure here.
   */
  static final double CLUSTER_CACHED = 0.98;

  /**
   * What the suite asserts of that figure, from the second roll with data on: the caches were kept
   * (at most 10% of the cluster's data reads missed, about six times the most measured, 1.6% in a
   * roll beside make test-hbase); a roll that lost a server's cache misses far more while that
   * server's regions warm again. The per-pod checks (retained L2, hit ratio right after the
   * restart) say which pod.
   */
  static final double CLUSTER_CACHED_FLOOR = 0.90;

  /**
   * Data-block reads a restarted pod's window must hold for its hit ratio right after the restart
   * to be asserted (fewer: reported only). The reader gives a pod of two regions ~60 a second, so
   * the last pod's full window (RollObserver.AFTER_WINDOW) holds several hundred.
   */
  static final long MIN_READS_AFTER = 100;

  /**
   * From a pod's delete to all its regions back on its new instance: a behaviour bound, not a
   * performance goal. Every pod's regions must come home (the status shows a homeAt for each),
   * within a bound several times what any machine measured: 9.3-13.9 s on kind here and on CI's
   * clean clones, 16.5 s on a new 2-core machine (which failed the old 15 s gate with a perfect
   * roll); 18-24 s for a pod that waited for a new operator or HMaster; 30-42 s when .ci/run ran
   * the suite beside make test's two API-server forks on the same 2 cores. The seconds themselves
   * are figures: the e2e report lists them per roll (RollMeasurement) and docs/ judges them, never
   * CI.
   */
  static final double HOME_BOUND_SECONDS = 180;

  /** The run's one shared state (the cluster, the reader, the report, the summary). */
  Suite suite;

  /** This class's result in the run: a failed step here skips the rest of this class only. */
  ScenarioOutcome outcome;

  Path repo;
  Path target;
  List<String> summary;
  Settings settings;
  KubernetesClient client;
  Cluster cluster;
  Report report;
  PodWatch watch;
  JmxSampler sampler;
  Prometheus prometheus;
  Workload workload;

  /**
   * What this class needs at its start, in the order to check and establish them: the suite's own
   * are in {@link Needs}. None by default.
   */
  List<Need> needs() {
    return List.of();
  }

  /** The suite {@link KindSuite} set up before this class (once for all classes). */
  void attach(Suite suite) {
    this.suite = suite;
    repo = suite.repo;
    target = suite.target;
    summary = suite.summary;
    settings = suite.settings;
    client = suite.client;
    cluster = suite.cluster;
    report = suite.report;
    watch = suite.watch;
    sampler = suite.sampler;
    prometheus = suite.prometheus;
    workload = suite.workload;
  }

  // ======================================================================== steps

  interface Body {
    void run() throws Exception;
  }

  /** The step's row in the report's table of where the suite's time went. */
  private String stepRow(String name, Instant t0, String result) {
    return String.format(
        "| %s | %d s | %s | %s | %s |",
        name.replaceFirst(":.*", "").replace("|", "/"),
        Duration.between(t0, Instant.now()).toSeconds(),
        readerOver(t0),
        result,
        suite.beside.since(t0));
  }

  /** "step 6" for "6. helm upgrade ...": how the class table names a failed step. */
  static String stepLabel(String name) {
    return "step " + name.replaceFirst("[.:].*", "");
  }

  /**
   * One step of the scenario: its section in the report, its row in the step table, its result in
   * the class's outcome. Skipped (aborted) when an earlier step of this class failed.
   */
  void step(String name, Body body) {
    if (outcome.stopped()) {
      outcome.skipped++;
      suite.stepTimes.add(
          String.format(
              "| %s | 0 s | - | skipped (%s failed) | |",
              name.replaceFirst(":.*", "").replace("|", "/"), outcome.failedStep));
      Assumptions.abort("skipped: " + outcome.failedStep + " of " + outcome.name + " failed");
    }
    report.section(name);
    Instant t0 = Instant.now();
    try {
      body.run();
      outcome.passed++;
      report.line("- PASSED, wall time %d s", Duration.between(t0, Instant.now()).toSeconds());
      suite.stepTimes.add(stepRow(name, t0, "passed"));
    } catch (Throwable t) {
      outcome.stepFailed(stepLabel(name), t);
      suite.stepTimes.add(stepRow(name, t0, "FAILED"));
      report.line(
          "- FAILED after %d s: %s",
          Duration.between(t0, Instant.now()).toSeconds(),
          String.valueOf(t.getMessage())
              .lines()
              .limit(40)
              .reduce((a, b) -> a + "\n    " + b)
              .orElse(""));
      diagnostics();
      if (t instanceof RuntimeException re) {
        throw re;
      }
      if (t instanceof Error er) {
        throw er;
      }
      throw new IllegalStateException(t);
    }
  }

  /**
   * What the suite's reader saw from {@code from} (or its start) to now, for the step table: reads,
   * failed reads, seconds with no successful read, the worst second's p99. A figure, not a check:
   * the steps assert what must hold. "-" while no reader runs (before step 3; step 15 stops it).
   */
  String readerOver(Instant from) {
    if (suite.readerStart == null) {
      return "-";
    }
    String log = safe(() -> workload.log(READER));
    if (log == null) {
      return "-";
    }
    Instant start = from.isAfter(suite.readerStart) ? from : suite.readerStart;
    Workload.Stats s = Workload.stats(log, start, Instant.now());
    if (s.seconds() == 0) {
      return "-";
    }
    return String.format(
        java.util.Locale.ROOT,
        "%d / %d / %d / %.0f ms",
        s.ok() + s.fail(),
        s.fail(),
        s.stalledSeconds(),
        s.worstSecondP99ms());
  }

  /** After a failure: the pods, the policy's status and the operator's last log lines. */
  void diagnostics() {
    if (cluster == null) {
      return; // a run without a cluster (ScenarioIsolationTest)
    }
    report.line("```\n%s```", cluster.kubectl("get", "pods", "-A", "-o", "wide").output());
    BlockCachePolicy p = safe(cluster::policyOrNull);
    if (p != null) {
      report.line("```yaml\n%s```", Serialization.asYaml(p.getStatus()));
    }
    String log = safe(cluster::operatorLogs);
    if (log != null) {
      report.line(
          "operator log (last 40 lines):\n```\n%s\n```",
          String.join("\n", log.lines().skip(Math.max(0, log.lines().count() - 40)).toList()));
    }
  }

  // ======================================================================== rolls

  /** Starts measuring a roll after a steady window of the reader with nothing else moving. */
  RollObserver observeRoll(String label) throws InterruptedException {
    String now = regionsPerPod();
    report.line("- regions per pod before the roll: %s", now);
    if (suite.rollBeforeNext != null) {
      suite.balanceRows.add(
          suite.rollBeforeNext.row(
              String.format(
                  "%s, %d s after its end",
                  now, Duration.between(suite.rollBeforeNext.end(), Instant.now()).toSeconds())));
      suite.rollBeforeNext = null;
    }
    // not the reader's own start, not the previous roll
    Instant quiet = suite.readerStart.plusSeconds(20);
    if (suite.lastRollEnd != null && suite.lastRollEnd.isAfter(quiet)) {
      quiet = suite.lastRollEnd;
    }
    return RollObserver.start(label, cluster, sampler, watch, workload, READER, quiet);
  }

  RollMeasurement record(RollMeasurement m) {
    suite.lastRollEnd = m.end();
    m.report(report);
    String atEnd = regionsPerPod();
    report.line("- regions per pod once the roll's windows of reads were over: %s", atEnd);
    suite.rollBeforeNext = new Suite.RollEnd(m.label(), atEnd, m.end());
    var last = cluster.policy().getStatus().getRollout().getLastRoll();
    report.line(
        "- status.rollout.lastRoll (the operator's own figures): %s",
        last == null
            ? "none"
            : String.format(
                "%d restarts in %d s, slowest %s %s s from delete to regions home, %d cold, %s of %s data reads from cache",
                last.getRestarts(),
                last.getSeconds(),
                last.getSlowestPod(),
                last.getSlowestPodSeconds(),
                last.getColdRestarts(),
                Report.ratio(last.getCachedReadRatio()),
                last.getDataReads()));
    summary.add(
        m.summary()
            + (last == null
                ? ""
                : String.format(
                    "; operator: %d s, slowest pod %s s delete->home",
                    last.getSeconds(), last.getSlowestPodSeconds())));
    return m;
  }

  /**
   * A roll that restarted every pod once, one at a time, each keeping its cache, without a failed
   * read.
   */
  void assertOneAtATimeWithTheCacheKept(RollMeasurement m) {
    assertOneAtATimeWithTheCacheKept(m, true);
  }

  void assertOneAtATimeWithTheCacheKept(RollMeasurement m, boolean noFailedReads) {
    assertOneAtATimeWithTheCacheKept(m, noFailedReads, true);
  }

  /**
   * @param readsRightAfter at least one restarted pod had reads in its window right after its
   *     restart (false where the scenario moves regions so that the windows may hold none: the
   *     window ends at the next pod's drain)
   */
  void assertOneAtATimeWithTheCacheKept(
      RollMeasurement m, boolean noFailedReads, boolean readsRightAfter) {
    var last = cluster.policy().getStatus().getRollout().getLastRoll();
    assertThat(last).as("status.rollout.lastRoll").isNotNull();
    assertThat(last.getRestarts()).as("lastRoll.restarts").isEqualTo(REPLICAS);
    assertThat(last.getColdRestarts()).as("lastRoll.coldRestarts").isZero();
    for (RollMeasurement.PodRestart p : m.pods().values()) {
      assertThat(p.restartedAt()).as("restartedAt of %s", p.pod()).isNotNull();
      assertThat(Instant.parse(p.restartedAt()))
          .as("restartedAt of %s is in this roll", p.pod())
          .isAfter(m.start());
    }
    assertThat(m.maxDown())
        .as("RegionServers down at once (%s)", m.maxDownAt())
        .isLessThanOrEqualTo(1);
    for (int i = 0; i < REPLICAS; i++) {
      assertThat(m.uids().get(i))
          .as("pod UIDs of ordinal %d: restarted exactly once", i)
          .hasSize(2);
    }
    assertThat(m.pvcsUnchanged()).as("PVC UIDs unchanged").isTrue();
    // one event per restart, also when a later roll repeats an earlier roll's texts
    assertThat(m.restartEventPods())
        .as("pods named by this roll's PodRestarted events (%s)", m.eventsNote())
        .containsExactlyInAnyOrderElementsOf(m.pods().keySet());
    assertThat(m.coldRestarts()).as("PodRestartedCold events").isZero();
    // an event the operator could not record (seen: 403 on reading back an event it counts up) is
    // lost to users
    String opLog = safe(cluster::operatorLogs);
    assertThat(
            opLog == null
                ? List.<String>of()
                : opLog
                    .lines()
                    .filter(l -> l.contains("could not record event"))
                    .filter(
                        l ->
                            l.length() > 24
                                && l.substring(0, 24)
                                        .compareTo(m.start().toString().substring(0, 19))
                                    >= 0)
                    .toList())
        .as("events the operator could not record during the roll")
        .isEmpty();
    m.pods()
        .values()
        .forEach(
            p ->
                assertThat(p.retainedFraction())
                    .as("retainedFraction of %s", p.pod())
                    .isNotNull()
                    .isGreaterThanOrEqualTo(0.95));
    // every pod whose window saw enough reads for a ratio (a window the next drain cut short may
    // hold a second of reads: a few cold ones would decide it); and at least the last pod
    // restarted (its window is never cut short)
    m.pods().values().stream()
        .filter(p -> p.hitAfter() != null && p.afterReads() >= MIN_READS_AFTER)
        .forEach(
            p ->
                assertThat(p.hitAfter())
                    .as(
                        "data hit ratio of %s right after its restart (served from the cache)",
                        p.pod())
                    .isGreaterThanOrEqualTo(0.9));
    assertThat(
            m.pods().values().stream()
                .filter(p -> p.hitAfter() != null && p.afterReads() >= MIN_READS_AFTER)
                .count())
        .as("restarted pods with at least %d data reads measured right after", MIN_READS_AFTER)
        .isGreaterThanOrEqualTo(readsRightAfter ? 1 : 0);
    if (noFailedReads) {
      assertThat(m.during().fail())
          .as("failed reads during the roll: %s", m.during().errors())
          .isZero();
    }
  }

  /**
   * The whole cluster's reads stayed cached through the roll: every drained region went to a server
   * that cached it in the last roll. Both this suite's own figure (every RegionServer's /jmx) and
   * the operator's (lastRoll).
   */
  void assertTheClustersReadsStayedCached(RollMeasurement m) {
    assertThat(m.clusterCached())
        .as(
            "data reads served from cache, all RegionServers, during the roll (this suite's /jmx samples)")
        .isNotNull()
        .isGreaterThanOrEqualTo(CLUSTER_CACHED_FLOOR);
    assertThat(m.operatorCached())
        .as("status.rollout.lastRoll.cachedReadRatio")
        .isNotNull()
        .isGreaterThanOrEqualTo(CLUSTER_CACHED_FLOOR);
    belowTheGoal("the roll", Math.min(m.clusterCached(), m.operatorCached()));
  }

  /**
   * A report line when a figure the suite asserts only loosely is under its goal ({@link
   * #CLUSTER_CACHED}).
   */
  void belowTheGoal(String what, double cached) {
    if (cached < CLUSTER_CACHED) {
      report.line(
          "  - below the goal: %s kept %.4f of the cluster's data reads from cache, under %.2f (a figure, judged in docs/measurements.md; asserted here: >= %.2f)",
          what, cached, CLUSTER_CACHED, CLUSTER_CACHED_FLOOR);
    }
  }

  void assertEveryPodHomeWithin(RollMeasurement m) {
    assertThat(m.homeSeconds())
        .as("pods with delete -> regions home, seen in the status or in their PodRestarted event")
        .hasSize(REPLICAS);
    report.line(
        "  - delete -> regions home per pod (a figure, judged in docs/, not here): %s s",
        m.homeSeconds().values());
    m.homeSeconds()
        .forEach(
            (pod, secs) ->
                assertThat(secs)
                    .as("seconds from %s's delete to all its regions back (behaviour bound)", pod)
                    .isLessThanOrEqualTo(HOME_BOUND_SECONDS));
  }

  // ======================================================================== helpers

  /**
   * How long every pod's L2 must stay as it is to count as filled: more than two of the policy's 10
   * s metrics intervals. The reader reads the whole table without pause, so a pod's L2 grows until
   * its regions' blocks are all cached, then holds.
   */
  static final Duration L2_SETTLED = Duration.ofSeconds(25);

  /**
   * Deletes the policy of this name in the HBase namespace, if there is one, and waits until its
   * finalizer has run (the operator that made it gives HBase back) and it is gone.
   */
  void deletePolicy(String name) {
    var policy = client.resources(BlockCachePolicy.class).inNamespace(cluster.ns).withName(name);
    BlockCachePolicy was = policy.get();
    if (was != null && Cluster.POLICY.equals(name)) {
      suite.deletedSuitePolicy = was;
      suite.deletedSuitePolicyIdle = was.getStatus() != null && cluster.rollDone(was, null);
    }
    policy.delete();
    await(name + " gone")
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> policy.get() == null);
  }

  /**
   * Gives every RegionServer that holds none of the table's regions its share of them (the
   * workload's {@code spread}, as an administrator would with the shell's {@code move}), and
   * reports the regions per server before and after. A server with no regions has no blocks to
   * cache, so a later "caches kept" would have nothing to keep. HBase leaves a server with none
   * after a stop that was not the operator's (seen on CI in the namespace step, then run after the
   * advice step: rs-0 at 0.0 MiB for 5 min after the delete of the suite's policies and the new
   * operator's first roll), until its balancer runs. The moved regions are then scanned once with
   * their blocks cached (a few seconds), so that the server that took them serves them from its
   * cache, as prefetch on open would have made it: without the scan, random reads at 200/s took
   * ~110 s to fill a third of the table there.
   */
  void everyServerHoldsRegions() {
    Workload.Run r = workload.run("e2e-spread", Duration.ofMinutes(3), "spread", TABLE);
    assertThat(r.phase()).as("workload spread: %s", r.log()).isEqualTo("Succeeded");
    r.log()
        .lines()
        .filter(
            l ->
                l.startsWith("regions per server before")
                    || l.startsWith("moved")
                    || l.startsWith("warm-up scan")
                    || l.startsWith("move of"))
        .forEach(l -> report.line("- the table's %s", l));
  }

  /** Each RegionServer's region count as its /jmx says now (-1: no answer). */
  Map<String, Long> regionCounts() {
    Map<String, Long> out = new java.util.TreeMap<>();
    for (int i = 0; i < REPLICAS; i++) {
      try {
        out.put(Cluster.pod(i), Jmx.read(client, cluster.ns, Cluster.pod(i)).regionCount());
      } catch (java.io.IOException e) {
        out.put(Cluster.pod(i), -1L);
      }
    }
    return out;
  }

  /**
   * {@link #regionCounts()} as "4 / 4 / 3 (spread 1)", pods in ordinal order: every region a server
   * holds, hbase:meta and hbase:namespace among them; -1 for a server that did not answer. Reported
   * before and after every roll (issue 28's "balanced after every roll", a figure the suite does
   * not assert: where HBase's balancer leaves the regions between rolls is its own).
   */
  String regionsPerPod() {
    Map<String, Long> counts;
    try {
      counts = regionCounts();
    } catch (RuntimeException e) { // a figure never fails a step
      return "n/a (" + e + ")";
    }
    long max = counts.values().stream().mapToLong(Long::longValue).max().orElse(0);
    long min = counts.values().stream().mapToLong(Long::longValue).min().orElse(0);
    return counts.values().stream().map(String::valueOf).collect(Collectors.joining(" / "))
        + (min < 0 ? "" : " (spread " + (max - min) + ")");
  }

  /**
   * {@link #everyServerHoldsRegions()} only when a RegionServer's /jmx shows no region (or does not
   * answer): a step whose scenario needs regions on a given server starts from there, whatever the
   * steps before it and HBase's balancer left (seen on CI before step 9c: 0 / 4 / 4 after step 9b's
   * roll). Saves the workload pod when every server holds some.
   */
  void everyServerHoldsRegionsIfOneHoldsNone() {
    Map<String, Long> counts = regionCounts();
    if (counts.values().stream().anyMatch(n -> n <= 0)) {
      report.line("- regions per pod before the step: %s", counts);
      everyServerHoldsRegions();
    }
  }

  /**
   * Until the policy's status shows every pod's L2 holding blocks and none of them growing (by more
   * than {@link #L2_SETTLED_TOLERANCE}) for {@link #L2_SETTLED}: the state a roll that must keep
   * caches starts from. Not a fixed size: a pod's share of the table is its regions' (seen on kind:
   * rs-0 with 33 MiB beside 132 MiB on the others, 201 s to get past half a third of the table).
   * How long it took goes to the report.
   */
  void awaitEveryPodCached(Duration bound) {
    Instant from = Instant.now();
    AtomicReference<BlockCachePolicy> seen = new AtomicReference<>();
    Map<String, Long> last = new java.util.TreeMap<>();
    AtomicReference<Instant> changedAt = new AtomicReference<>(from);
    try {
      await("every pod's L2 holding blocks, unchanged for " + L2_SETTLED.toSeconds() + " s")
          .atMost(bound)
          .pollInterval(Duration.ofSeconds(2))
          .until(
              () -> {
                BlockCachePolicy p = cluster.policy();
                seen.set(p);
                Map<String, Long> now = l2ByPod(p);
                if (l2Moved(last, now)) {
                  last.clear();
                  last.putAll(now);
                  changedAt.set(Instant.now());
                }
                return l2Settled(now, changedAt.get(), Instant.now());
              });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          e.getMessage()
              + "; last status: "
              + describeL2(seen.get())
              + "\n"
              + safe(cluster::describeRegionServers),
          e);
    }
    report.line(
        "- every pod's L2 holds blocks, unchanged for %d s, after %d s: %s",
        L2_SETTLED.toSeconds(),
        Duration.between(from, Instant.now()).toSeconds(),
        describeL2(seen.get()));
  }

  /**
   * How much a pod's L2 may grow and still count as unchanged: the last blocks of its regions that
   * random reads reach (with prefetch off) trickle in for minutes, a few hundred KiB at a time
   * (seen on kind: 97.2 -> 97.4 MiB), and each would start the window again.
   */
  static final double L2_SETTLED_TOLERANCE = 0.01;

  /**
   * The L2 figures moved from the reference {@code last}: another set of pods, or a pod's L2 off by
   * more than {@link #L2_SETTLED_TOLERANCE} of its reference.
   */
  static boolean l2Moved(Map<String, Long> last, Map<String, Long> now) {
    if (!last.keySet().equals(now.keySet())) {
      return true;
    }
    return now.entrySet().stream()
        .anyMatch(
            e -> {
              long was = last.get(e.getKey());
              return Math.abs(e.getValue() - was) > L2_SETTLED_TOLERANCE * Math.max(was, 1);
            });
  }

  /**
   * Every pod has a row with L2 used bytes above 0, and none moved ({@link #l2Moved}) since {@code
   * changedAt}, {@link #L2_SETTLED} ago.
   */
  static boolean l2Settled(Map<String, Long> l2ByPod, Instant changedAt, Instant now) {
    return l2ByPod.size() == REPLICAS
        && l2ByPod.values().stream().allMatch(v -> v > 0)
        && !now.isBefore(changedAt.plus(L2_SETTLED));
  }

  /** Each pod's L2 used bytes in the policy's status (pods without a figure left out). */
  static Map<String, Long> l2ByPod(BlockCachePolicy p) {
    Map<String, Long> m = new java.util.TreeMap<>();
    if (p != null && p.getStatus() != null && p.getStatus().getRegionServers() != null) {
      p.getStatus().getRegionServers().stream()
          .filter(r -> r.getL2UsedBytes() != null)
          .forEach(r -> m.put(r.getPod(), r.getL2UsedBytes()));
    }
    return m;
  }

  static String describeL2(BlockCachePolicy p) {
    if (p == null || p.getStatus() == null || p.getStatus().getRegionServers() == null) {
      return "no pod rows";
    }
    return p.getStatus().getRegionServers().stream()
        .map(
            r ->
                String.format(
                    "%s %.1f MiB",
                    r.getPod(), r.getL2UsedBytes() == null ? -1.0 : r.getL2UsedBytes() / 1048576.0))
        .toList()
        .toString();
  }

  interface Call<T> {
    T call() throws Exception;
  }

  static <T> T safe(Call<T> c) {
    try {
      return c.call();
    } catch (Exception e) {
      return null;
    }
  }
}
