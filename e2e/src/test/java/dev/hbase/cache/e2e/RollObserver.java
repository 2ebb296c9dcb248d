package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static dev.hbase.cache.e2e.Cluster.ordinalOf;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Event;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Measures one roll. {@link #start} records the state before it (cache PVCs, revision, each
 * RegionServer's start time and L2 used bytes), lets the reader run a {@link #STEADY} window with
 * nothing else moving, and resets the pod watch; the scenario then changes the policy, may act
 * mid-roll ({@link #awaitRollout}), and {@link #awaitDone} yields the {@link RollMeasurement}.
 * Polling the status records each pod's rollout steps and when it went in flight.
 *
 * <p>Over ~400 lines because one roll's measurement is one timeline (before, during, after each
 * restart, from the status, the pod watch, the JMX samples and the reader): split, each part would
 * need the others' instants.
 */
final class RollObserver {
  static final Duration ROLL_TIMEOUT = Duration.ofMinutes(25);

  /**
   * The steady-state window of the reader before a roll: a measurement window for the report (its
   * p99 beside the roll's), not a wait for a condition, and nothing asserts on it. 10 s at the
   * reader's 200 reads/s is 2,000 reads, enough for a p99; it was 60 s, then 30 s, then 15 s, which
   * made every observed roll wait more than the previous roll's own after-window and counter lag
   * (which count towards it: it runs from the previous roll's end).
   */
  static final Duration STEADY = Duration.ofSeconds(10);

  /**
   * Reads right after a restart: the new instance's reads up to this long after its first sampled
   * reads, and only samples taken before the next pod's drain began: that drain moves regions whose
   * blocks the restarted server never had onto it within 1-2 s (seen on kind: 0.82 and 0.75 with
   * them), and their cold reads are not what is measured here. The kind chart's HBase refreshes
   * these counters every second (metricsPeriodSeconds) and the suite samples every 2 s, so 6 s
   * holds three samples and a few hundred data reads of a new instance with two regions (the 0.9
   * asserted on it needs {@code KindScenario.MIN_READS_AFTER}, 100); for pods other than the last
   * the clean window may still hold no sample (n/a). It was 20 s under HBase's default 5-10 s
   * refresh, then 10 s.
   */
  static final Duration AFTER_WINDOW = Duration.ofSeconds(6);

  /**
   * The roll's last pod's window, which no next drain cuts short, runs past {@link #AFTER_WINDOW}
   * when it holds fewer than {@code KindScenario.MIN_READS_AFTER} data reads, until it holds them,
   * this long at most (a region HBase's balancer moves onto it meanwhile could lower its ratio: not
   * seen, and only where 6 s were not enough): how many reads a server takes in 6 s is the
   * machine's speed, not the roll's behaviour (a CI run on a slower machine saw 72 in the last
   * pod's window of step 18, whose regions' blocks prefetch had not loaded, and failed the check
   * that at least one restarted pod had 100).
   */
  static final Duration LONGEST_AFTER_WINDOW = Duration.ofSeconds(30);

  /**
   * A restarted server with no read this long after the roll's end serves none (see {@link
   * #withoutWindow}).
   */
  static final Duration NO_READS = Duration.ofSeconds(60);

  /**
   * How long after a read HBase's /jmx counters show it, at most, with a margin: the kind chart's
   * metricsPeriodSeconds (1 s: the RegionServer's aggregation and the JMX cache each refresh every
   * second) and the suite's 2 s between samples. It was 10 s under HBase's defaults (5 s, 10 s).
   */
  static final Duration COUNTER_LAG = Duration.ofSeconds(5);

  /**
   * The status is polled every 2 s: the next drain may have begun up to that long before it was
   * seen.
   */
  static final Duration DRAIN_MARGIN = Duration.ofSeconds(-2);

  /** How long a restart event missing at the roll's end is looked for again. */
  static final Duration EVENTS_LATE = Duration.ofSeconds(30);

  private final String label;
  private final Cluster cluster;
  private final JmxSampler sampler;
  private final PodWatch watch;
  private final Workload workload;
  private final String reader;
  private final Map<String, String> pvcsBefore;
  private final String oldRevision;
  private Predicate<BlockCachePolicy> finished;
  private final Map<String, Long> oldStart = new LinkedHashMap<>();
  private final Map<String, Long> l2Before = new LinkedHashMap<>();
  private final Map<String, String> steps = new LinkedHashMap<>();
  private final Map<String, Instant> inFlightFrom = new LinkedHashMap<>();

  /**
   * Per pod, why the roll took it (null: out of date) and the server it was drained from (null: not
   * drained), as first seen.
   */
  private final Map<String, String> reasons = new LinkedHashMap<>();

  private final Map<String, String> drainedFrom = new LinkedHashMap<>();

  /**
   * Per pod, seconds from its delete to all its regions back, from the roll's state as the status
   * showed it.
   */
  private final Map<String, Double> homeSeconds = new TreeMap<>();

  private Instant start;

  /**
   * Set when this roll's restart events were not all there when the roll was seen done (see {@link
   * #restartEvents}).
   */
  private String late;

  private RollObserver(
      String label,
      Cluster cluster,
      JmxSampler sampler,
      PodWatch watch,
      Workload workload,
      String reader) {
    this.label = label;
    this.cluster = cluster;
    this.sampler = sampler;
    this.watch = watch;
    this.workload = workload;
    this.reader = reader;
    this.pvcsBefore = cluster.pvcUids();
    this.oldRevision = cluster.revision();
    this.finished = x -> cluster.rollDone(x, oldRevision);
  }

  /**
   * Records the state before a roll and returns once the reader has had a {@link #STEADY} window
   * since {@code quietSince} (the reader's start, the previous roll's end); the change comes next.
   */
  static RollObserver start(
      String label,
      Cluster cluster,
      JmxSampler sampler,
      PodWatch watch,
      Workload workload,
      String reader,
      Instant quietSince)
      throws InterruptedException {
    RollObserver o = new RollObserver(label, cluster, sampler, watch, workload, reader);
    for (int i = 0; i < REPLICAS; i++) {
      String pod = Cluster.pod(i);
      Jmx j =
          Jmx.awaitUntil(
              cluster.client,
              cluster.ns,
              pod,
              "/jmx of " + pod,
              Duration.ofMinutes(1),
              Duration.ofSeconds(2),
              x -> x.l2Capacity() > 0);
      o.oldStart.put(pod, j.startTime());
      o.l2Before.put(pod, j.l2Used());
    }
    Instant steadyEnds = quietSince.plus(STEADY);
    if (steadyEnds.isAfter(Instant.now())) {
      Thread.sleep(
          Duration.between(Instant.now(), steadyEnds).toMillis()); // the steady measurement window
    }
    watch.reset();
    o.start = Instant.now();
    return o;
  }

  /**
   * The roll is done when every pod runs the StatefulSet's new pod template (a change by another
   * manager, e.g. helm upgrade: the policy's revision stays), instead of a new policy revision.
   */
  RollObserver untilTemplateRolled(String oldUpdateRevision) {
    finished = x -> cluster.templateRollDone(x, oldUpdateRevision);
    return this;
  }

  String oldRevision() {
    return oldRevision;
  }

  private void track(BlockCachePolicy p) {
    RolloutStatus ro = p.getStatus().getRollout();
    if (ro.getInFlight() != null) {
      for (PodRoll f : ro.getInFlight()) {
        if (inFlightFrom.putIfAbsent(f.getPod(), Instant.now()) == null) {
          reasons.put(f.getPod(), f.getReason());
          drainedFrom.put(f.getPod(), f.getOldServer());
        }
        steps.merge(
            f.getPod(), String.valueOf(f.getStep()), (a, b) -> a.endsWith(b) ? a : a + ">" + b);
        if (f.getDeletedAt() != null && f.getHomeAt() != null) {
          homeSeconds.put(
              f.getPod(),
              Duration.between(Instant.parse(f.getDeletedAt()), Instant.parse(f.getHomeAt()))
                      .toMillis()
                  / 1000.0);
        }
      }
    }
  }

  /**
   * Why the roll took the pod when it was first seen in flight ({@code PodRoll.reason}), or null.
   */
  String reason(String pod) {
    return reasons.get(pod);
  }

  /**
   * The RegionServer the roll drained the pod from ({@code PodRoll.oldServer}, set at admission for
   * a drain and only then), or null: not drained, or never seen in flight.
   */
  String drainedFrom(String pod) {
    return drainedFrom.get(pod);
  }

  /** Whether the status showed the pod in flight during this roll. */
  boolean seenInFlight(String pod) {
    return inFlightFrom.containsKey(pod);
  }

  /** Waits for a moment in the roll; null when the roll finished without it. */
  RolloutStatus awaitRollout(String what, Predicate<RolloutStatus> when) {
    BlockCachePolicy p =
        cluster.awaitRollout(
            label + ": " + what,
            ROLL_TIMEOUT,
            x -> {
              track(x);
              return when.test(x.getStatus().getRollout()) || finished.test(x);
            });
    RolloutStatus ro = p.getStatus().getRollout();
    return when.test(ro) ? ro : null;
  }

  /** Waits for the roll to finish and for a window of reads on every restarted RegionServer. */
  RollMeasurement awaitDone() {
    BlockCachePolicy done =
        cluster.awaitRollout(
            label + ": phase Idle, Ready=True, every pod on the new revision",
            ROLL_TIMEOUT,
            x -> {
              track(x);
              return finished.test(x);
            });
    Instant end = Instant.now();
    Map<Integer, Set<String>> uids = watch.uids();
    int maxDown = watch.maxDown();
    String maxDownAt = watch.maxDownAt();
    boolean pvcsUnchanged = cluster.pvcUids().equals(pvcsBefore);
    // reads right after each restart: wait until every new instance has had its window of reads
    try {
      await(
              "a "
                  + AFTER_WINDOW.toSeconds()
                  + " s window of reads on every restarted RegionServer that serves reads")
          .atMost(Duration.ofMinutes(2))
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> withoutWindow(end).isEmpty());
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          "no "
              + AFTER_WINDOW.toSeconds()
              + " s window of reads within 2 min of the roll's end on: "
              + withoutWindow(end)
              + "\n"
              + cluster.describeRegionServers(),
          e);
    }
    // HBase publishes its counters every second here (the chart's metricsPeriodSeconds), sampled
    // every 2 s: the reads of the roll's last seconds show up to COUNTER_LAG later
    Instant countersIn = end.plus(COUNTER_LAG);
    if (countersIn.isAfter(Instant.now())) {
      try {
        Thread.sleep(Duration.between(Instant.now(), countersIn).toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    Double clusterCached = sampler.servedFromCache(start, countersIn);
    var lastRoll = cluster.policy().getStatus().getRollout().getLastRoll();
    String log = workload.log(reader);
    TreeMap<String, RollMeasurement.PodRestart> pods = new TreeMap<>();
    for (RegionServerStatus s : done.getStatus().getRegionServers()) {
      pods.put(s.getPod(), podRestart(s, uids));
    }
    List<Event> restarts = restartEvents(pods.keySet());
    homeFromEvents(restarts);
    return new RollMeasurement(
        label,
        start,
        end,
        uids,
        maxDown,
        maxDownAt,
        pvcsUnchanged,
        pods,
        restarts.stream().map(e -> e.getReason() + ": " + e.getMessage()).toList(),
        restarts.stream().map(e -> e.getMessage().split(" ", 2)[0]).toList(),
        restarts.stream().filter(e -> "PodRestartedCold".equals(e.getReason())).count(),
        Workload.stats(log, start.minus(STEADY), start),
        Workload.stats(log, start, end),
        watch.timeline(),
        clusterCached,
        lastRoll == null ? null : lastRoll.getCachedReadRatio(),
        new TreeMap<>(homeSeconds),
        late);
  }

  /**
   * The operator's PodRestarted text for a pod whose regions all came home: "N/N regions home S s
   * after its delete".
   */
  static final java.util.regex.Pattern HOME_IN_EVENT =
      java.util.regex.Pattern.compile(
          "(\\d+)/(\\d+) regions home (\\d+(?:\\.\\d+)?) s after its delete");

  /**
   * A pod whose homeAt the polled status never showed gets it from its restart event. The operator
   * holds a write that changes only a roll's progress for up to 5 s (StatusWrites), so the last pod
   * can go from Reloading to done within one write (seen on kind: rs-0's homeAt was in its
   * PodRestarted event, "2/2 regions home 51.7 s after its delete", and in no status the suite
   * read). Only an event that counts every region home counts.
   */
  private void homeFromEvents(List<Event> restarts) {
    for (Event e : restarts) {
      String pod = e.getMessage().split(" ", 2)[0];
      var m = HOME_IN_EVENT.matcher(e.getMessage());
      if (!homeSeconds.containsKey(pod) && m.find() && m.group(1).equals(m.group(2))) {
        homeSeconds.put(pod, Double.parseDouble(m.group(3)));
      }
    }
  }

  /**
   * This roll's PodRestarted/PodRestartedCold events. The operator records them in the reconcile
   * that writes the status ending the roll and sends them off its reconcile thread, so they are
   * there by now or within a moment; should one be missing (seen on CI: the operator's RBAC lacked
   * get on events, so a repeated event was lost), it is looked for again for {@link #EVENTS_LATE},
   * and the report says whether it came late (more than a second or two is news), never or what the
   * operator logged about it.
   */
  private List<Event> restartEvents(Set<String> rolled) {
    java.util.function.Supplier<List<Event>> list =
        () ->
            cluster.policyEvents(Set.of("PodRestarted", "PodRestartedCold")).stream()
                .filter(
                    e ->
                        e.getLastTimestamp() != null
                            && !Instant.parse(e.getLastTimestamp()).isBefore(start.minusSeconds(1)))
                .toList();
    Predicate<List<Event>> all =
        l ->
            l.stream()
                .map(e -> e.getMessage().split(" ", 2)[0])
                .collect(Collectors.toSet())
                .containsAll(rolled);
    List<Event> now = list.get();
    if (all.test(now)) {
      return now;
    }
    Instant from = Instant.now();
    try {
      now =
          await("a PodRestarted event for each of " + rolled)
              .atMost(EVENTS_LATE)
              .pollInterval(Duration.ofSeconds(2))
              .until(list::get, all);
      late =
          String.format(
              "events naming every restarted pod came %d s after the roll's end was seen",
              Duration.between(from, Instant.now()).toSeconds());
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      now = list.get();
      String log = KindScenario.safe(cluster::operatorLogs);
      late =
          "PodRestarted events missing after "
              + EVENTS_LATE.toSeconds()
              + " s; the policy's events:\n"
              + cluster.allPolicyEvents()
              + "the operator's log about events:\n"
              + (log == null
                  ? "none"
                  : log.lines()
                      .filter(l -> l.contains("Events") || l.contains("could not record"))
                      .collect(Collectors.joining("\n")));
    }
    return now;
  }

  /**
   * The restarted pods whose new instance has not had its window of reads yet ({@link
   * #afterWindowEnd} not passed), with what the sampler saw of them. A new instance with no read at
   * all {@link #NO_READS} after the roll's end serves none (HBase's balancer, switched back on by
   * the roll, can move every region off a server: seen on kind a minute after a roll, 0/3/4
   * regions): it has no window to wait for, its figures say n/a.
   */
  private List<String> withoutWindow(Instant rollEnd) {
    List<String> out = new java.util.ArrayList<>();
    for (String pod : oldStart.keySet()) {
      Long st = newStart(pod);
      Jmx first = st == null ? null : sampler.firstWithReads(pod, st);
      if (first == null && st != null && Instant.now().isAfter(rollEnd.plus(NO_READS))) {
        continue;
      }
      List<Jmx> mine =
          st == null
              ? List.of()
              : sampler.of(pod).stream().filter(j -> j.startTime() == st).toList();
      Jmx last = mine.isEmpty() ? null : mine.get(mine.size() - 1);
      if (first == null || Instant.now().isBefore(windowEnd(pod, st, first))) {
        out.add(
            pod
                + (st == null
                    ? " (no sample of a new instance)"
                    : String.format(
                        " (new instance: %d samples, last at %s with %d data reads, L2 used %.1f MiB; first with reads %s)",
                        mine.size(),
                        last.at(),
                        last.dataReads(),
                        last.l2Used() / 1048576.0,
                        first == null ? "none" : first.at())));
      }
    }
    return out;
  }

  /**
   * Where a restarted instance's window of reads ends, from what the sampler has seen of it so far:
   * {@link #afterWindowEnd} over its first sample with reads, the next pod's drain, whether the
   * roll took it last, and its first sample with {@code KindScenario.MIN_READS_AFTER} reads.
   */
  private Instant windowEnd(String pod, long st, Jmx first) {
    Jmx enough = sampler.firstWithReads(pod, st, first.at(), KindScenario.MIN_READS_AFTER);
    return afterWindowEnd(
        first.at(), nextDrain(pod), lastInFlight(pod), enough == null ? null : enough.at());
  }

  /**
   * The one rule for a restarted pod's window of reads right after its restart (what {@link
   * #withoutWindow} waits for and {@link #podRestart} measures): {@link #AFTER_WINDOW} from its
   * first read; cut short by the next pod's drain ({@code nextDrain}, plus {@link #DRAIN_MARGIN});
   * for the roll's last pod ({@code last}), which no drain cuts, on past it until the first sample
   * with enough reads for a ratio ({@code enough}, null: none yet), {@link #LONGEST_AFTER_WINDOW}
   * at most.
   */
  static Instant afterWindowEnd(Instant first, Instant nextDrain, boolean last, Instant enough) {
    Instant end = first.plus(AFTER_WINDOW);
    if (nextDrain != null && nextDrain.plus(DRAIN_MARGIN).isBefore(end)) {
      return nextDrain.plus(DRAIN_MARGIN);
    }
    if (!last || (enough != null && !enough.isAfter(end))) {
      return end;
    }
    Instant longest = first.plus(LONGEST_AFTER_WINDOW);
    return enough == null || enough.isAfter(longest) ? longest : enough;
  }

  /** Whether the pod is the one the roll took last (no other went in flight after it). */
  private boolean lastInFlight(String pod) {
    Instant mine = inFlightFrom.get(pod);
    return mine != null && inFlightFrom.values().stream().noneMatch(t -> t.isAfter(mine));
  }

  /** When the roll took its next pod after this one (its drain began), or null. */
  private Instant nextDrain(String pod) {
    Instant mine = inFlightFrom.get(pod);
    return mine == null
        ? null
        : inFlightFrom.values().stream()
            .filter(t -> t.isAfter(mine))
            .min(Instant::compareTo)
            .orElse(null);
  }

  /** The start time of the pod's newest instance other than the one before the roll, or null. */
  private Long newStart(String pod) {
    return sampler.of(pod).stream()
        .map(Jmx::startTime)
        .filter(s -> !s.equals(oldStart.get(pod)))
        .reduce((a, b) -> b)
        .orElse(null);
  }

  private RollMeasurement.PodRestart podRestart(
      RegionServerStatus s, Map<Integer, Set<String>> uids) {
    String pod = s.getPod();
    Double before = sampler.ratio(pod, start.minus(STEADY), start);
    Long st = newStart(pod);
    Jmx first = st == null ? null : sampler.firstWithReads(pod, st);
    Instant windowEnd = first == null ? null : windowEnd(pod, st, first);
    Jmx w = windowEnd == null ? null : sampler.lastWithReads(pod, st, windowEnd);
    Jmx firstNew =
        st == null
            ? null
            : sampler.of(pod).stream().filter(x -> x.startTime() == st).findFirst().orElse(null);
    long afterSeconds =
        w == null
            ? 0
            : Duration.between(firstNew == null ? w.at() : firstNew.at(), w.at()).toSeconds();
    return new RollMeasurement.PodRestart(
        pod,
        s.getRestartedAt(),
        s.getRetainedFraction(),
        before,
        w == null ? null : w.ratioSince(null),
        w == null ? 0 : w.dataReads(),
        afterSeconds,
        l2Before.getOrDefault(pod, 0L),
        firstNew == null ? -1 : firstNew.l2Used(),
        steps.get(pod),
        uids.getOrDefault(ordinalOf(pod), Set.of()).size());
  }
}
