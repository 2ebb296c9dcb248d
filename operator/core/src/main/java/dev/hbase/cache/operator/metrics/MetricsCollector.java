package dev.hbase.cache.operator.metrics;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.CacheStatus;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.operator.hbase.CacheDelta;
import dev.hbase.cache.operator.hbase.CacheRatios;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.plan.Durations;
import dev.hbase.cache.operator.plan.Recommender.ServerInterval;
import dev.hbase.cache.operator.roll.RollModel.CacheView;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Hit ratios in the status. Every metrics interval each Ready pod is scraped; ratios are over the
 * interval (count deltas against the previous scrape), with the cumulative ones beside them. The
 * previous samples live in memory: after an operator restart the first interval reports cumulative
 * figures only.
 *
 * <p>A policy's RegionServers are asked at once, on the pool shared by all policies ({@link
 * InfoAsker}, {@link ScrapePool}: a namespace's share of its threads, one ask per pod at a time): a
 * reconcile waits for its slowest server, at most its {@link ScrapeBudget}, not for the sum of its
 * servers, and a slow server holds one of its namespace's threads, never another namespace's.
 */
public final class MetricsCollector {
  /** How often the RegionServers are sampled while a roll runs, at most (its own figures). */
  static final Duration ROLL_INTERVAL = Duration.ofSeconds(5);

  /** policy uid -> pod -> last interval sample. */
  private final Map<String, Map<String, CacheSample>> previous = new ConcurrentHashMap<>();

  /** policy uid -> pod -> {start time, GC ms} at the last sample (sizing advice only). */
  private final Map<String, Map<String, long[]>> gcPrevious = new ConcurrentHashMap<>();

  private final InfoAsker asker;

  /** With a scrape pool of its own (tests). */
  public MetricsCollector() {
    this(new InfoAsker(new ScrapePool()));
  }

  public MetricsCollector(InfoAsker asker) {
    this.asker = asker;
  }

  /** Stops the scrape pool (operator shutdown). */
  public void close() {
    asker.close();
  }

  /**
   * The policy's Degraded message for its stalled info servers among {@code pods} ({@link
   * InfoAsker#stalls}); null when none is.
   */
  public String stalled(InfoServers info, List<PodView> pods) {
    return InfoAsker.message(asker.stalls(info, pods));
  }

  /** Fresh samples for the roller (L2 used, hit ratio since start) of the given pods. */
  public Map<String, CacheView> probeNow(InfoServers info, List<PodView> podViews) {
    Map<String, CacheView> out = new HashMap<>();
    // a terminating pod is asked too: its hook holds a server that serves regions, and a stop's
    // warm gate needs its L2 before the stop
    List<PodView> asked = podViews.stream().filter(p -> p.ip() != null).toList();
    Map<String, InfoAsker.Answer> answers = asker.ask(info, asked, false);
    for (PodView p : asked) {
      CacheSample s = answers.get(p.name()).sample();
      if (s != null) {
        out.put(
            p.name(),
            new CacheView(
                s.l2UsedBytes(),
                CacheRatios.dataReadHitRatio(s.data(), s.hasL2()),
                s.hasL2() ? s.l2CapacityBytes() : null));
      }
    }
    return out;
  }

  /**
   * Refreshes status.regionServers and status.cache when the interval is due.
   *
   * @param withGc whether to read each server's GC time too (the sizing advice is on)
   * @return each Ready RegionServer's activity since its previous sample (for sizing advice); empty
   *     when the interval was not due
   */
  public List<ServerInterval> update(
      BlockCachePolicy policy,
      InfoServers info,
      BlockCachePolicyStatus status,
      List<PodView> podViews,
      boolean withGc,
      Instant now) {
    Map<String, RegionServerStatus> byPod = new HashMap<>();
    status.getRegionServers().forEach(r -> byPod.put(r.getPod(), r));
    List<RegionServerStatus> rows = new ArrayList<>();
    for (PodView p : podViews) {
      RegionServerStatus r =
          byPod.getOrDefault(p.name(), new RegionServerStatus().setPod(p.name()));
      r.setReady(p.ready());
      r.setConfigHash(p.revision());
      rows.add(r);
    }
    status.setRegionServers(rows);

    Duration interval = interval(policy.getSpec());
    RollSummary roll = status.getRollout() == null ? null : status.getRollout().getCurrent();
    // A roll's own figure starts from a sample taken before its first drain (the roller admits
    // the first pod one reconcile before it drains it) and is sampled every few seconds.
    boolean rollBaseline = roll != null && roll.getDataReads() == null;
    Duration every =
        roll != null && interval.compareTo(ROLL_INTERVAL) > 0 ? ROLL_INTERVAL : interval;
    CacheStatus cache = status.getCache();
    Map<String, CacheSample> prev =
        previous.computeIfAbsent(policy.getMetadata().getUid(), k -> new ConcurrentHashMap<>());
    Instant last = prev.values().stream().map(CacheSample::at).max(Instant::compareTo).orElse(null);
    // no earlier sample in memory (the operator restarted mid-roll): this one is a new baseline;
    // counting the restarted servers' reads since their start would count them a second time
    boolean noBaseline = prev.isEmpty();
    if (!rollBaseline
        && last != null
        && Duration.between(last, now).compareTo(every.minusSeconds(1)) < 0) {
      return List.of();
    }
    Map<String, long[]> gcBefore =
        gcPrevious.computeIfAbsent(policy.getMetadata().getUid(), k -> new ConcurrentHashMap<>());
    List<ServerInterval> intervals = new ArrayList<>();
    List<CacheDelta> deltas = new ArrayList<>();
    List<CacheDelta> cumulative = new ArrayList<>();
    Reads reads = new Reads();
    Reads readsSinceStart = new Reads();
    Reads readsInRoll = new Reads();
    long size = 0;
    long used = 0;
    Map<String, InfoAsker.Answer> answers =
        asker.ask(
            info, podViews.stream().filter(p -> p.ready() && p.ip() != null).toList(), withGc);
    for (RegionServerStatus r : rows) {
      PodView p =
          podViews.stream().filter(v -> v.name().equals(r.getPod())).findFirst().orElseThrow();
      if (!p.ready() || p.ip() == null) {
        prev.remove(p.name());
        gcBefore.remove(p.name());
        r.setRegions(null); // no stale count for the Balanced condition
        continue;
      }
      InfoAsker.Answer answer = answers.get(p.name());
      CacheSample s = answer.sample();
      if (s == null) {
        r.setRegions(null);
        continue;
      }
      CacheSample before = prev.put(p.name(), s);
      CacheDelta c = CacheRatios.cumulative(s);
      cumulative.add(c);
      CacheDelta d = before == null ? null : CacheRatios.between(before, s);
      if (d != null) {
        deltas.add(d);
        reads.add(d, s.hasL2());
      }
      Long gc = withGc ? gcSince(p, s, answer.gcTotal(), gcBefore) : null;
      if (d != null && d.restarts() == 0) {
        intervals.add(
            new ServerInterval(
                p.name(),
                s.at(),
                d,
                s.hasL2(),
                s.l1CapacityBytes(),
                s.l1UsedBytes(),
                s.l2CapacityBytes(),
                s.l2UsedBytes(),
                gc));
      }
      if (roll != null) {
        // a server restarted by the roll and Ready again: everything it counted is in the roll
        boolean startedInRoll = s.startTime() >= Instant.parse(roll.getStartedAt()).toEpochMilli();
        CacheDelta inRoll = d != null ? d : startedInRoll ? c : null;
        if (inRoll != null) {
          readsInRoll.add(inRoll, s.hasL2());
        }
      }
      readsSinceStart.add(c, s.hasL2());
      r.setHitRatio(round(d == null ? null : CacheRatios.dataReadHitRatio(d.data(), s.hasL2())));
      r.setL1HitRatio(round(d == null ? null : d.l1().ratioOrNull()));
      r.setL2HitRatio(round(d == null ? null : d.l2().ratioOrNull()));
      r.setCumulativeHitRatio(round(CacheRatios.dataReadHitRatio(c.data(), s.hasL2())));
      r.setL2UsedBytes(s.hasL2() ? s.l2UsedBytes() : null);
      r.setEvictions(s.evictions());
      r.setFailedInsertions(s.failedInsertions());
      r.setRegions(s.regionCount() < 0 ? null : (int) s.regionCount());
      size += s.l1CapacityBytes() + s.l2CapacityBytes();
      used += s.l1UsedBytes() + s.l2UsedBytes();
    }
    if (roll != null) {
      if (rollBaseline) {
        roll.setDataReads(0L).setCachedReads(0L);
      } else if (!noBaseline) {
        readsInRoll.addTo(roll);
      }
    }
    if (cumulative.isEmpty()) {
      return intervals;
    }
    CacheDelta sum = CacheRatios.aggregate(deltas);
    CacheDelta all = CacheRatios.aggregate(cumulative);
    CacheStatus next =
        new CacheStatus()
            .setHitRatio(round(deltas.isEmpty() ? null : reads.ratio()))
            .setL1HitRatio(round(deltas.isEmpty() ? null : sum.l1().ratioOrNull()))
            .setL2HitRatio(round(deltas.isEmpty() ? null : sum.l2().ratioOrNull()))
            .setCumulativeHitRatio(round(readsSinceStart.ratio()))
            .setSizeBytes(size)
            .setUsedBytes(used)
            .setEvictions(all.evictions())
            .setFailedInsertions(all.failedInsertions());
    // Unchanged figures are not news: keep the old sampledAt so the status is not rewritten.
    next.setSampledAt(
        cache != null && sameFigures(cache, next) ? cache.getSampledAt() : now.toString());
    status.setCache(next);
    return intervals;
  }

  /** GC milliseconds of this instance since its previous sample; null if unknown or restarted. */
  private static Long gcSince(PodView p, CacheSample s, Long total, Map<String, long[]> gcBefore) {
    if (total == null) {
      gcBefore.remove(p.name());
      return null;
    }
    long[] before = gcBefore.put(p.name(), new long[] {s.startTime(), total});
    return before == null || before[0] != s.startTime() || total < before[1]
        ? null
        : total - before[1];
  }

  /**
   * Data-block reads summed over pods: served from cache vs all. Pods are summed by reads, not by
   * averaging ratios, and each pod's counts are read the way its HBase counts them (a cold read
   * with an L2 counts as two misses: {@link CacheRatios#dataReadHitRatio}).
   */
  private static final class Reads {
    double served;
    double total;

    void add(CacheDelta d, boolean hasL2) {
      served += d.data().hits();
      total += CacheRatios.dataReads(d.data(), hasL2);
    }

    Double ratio() {
      return total == 0 ? null : served / total;
    }

    /** Adds these reads to a roll's figures. */
    void addTo(RollSummary roll) {
      roll.setDataReads(roll.getDataReads() + Math.round(total));
      roll.setCachedReads(roll.getCachedReads() + Math.round(served));
      roll.setCachedReadRatio(
          roll.getDataReads() == 0
              ? null
              : round((double) roll.getCachedReads() / roll.getDataReads()));
    }
  }

  public void forget(BlockCachePolicy policy) {
    previous.remove(policy.getMetadata().getUid());
    gcPrevious.remove(policy.getMetadata().getUid());
  }

  /** The policy's metrics interval ({@code spec.metrics.interval}, 30 s by default). */
  public static Duration interval(BlockCachePolicySpec spec) {
    return Durations.parse(
        spec.getMetrics() == null ? null : spec.getMetrics().getInterval(), "30s");
  }

  /** The RegionServers' info port: {@code spec.hbase.infoPort}, 16030 by default. */
  public static int infoPort(BlockCachePolicy policy) {
    return policy.getSpec().getHbase() == null || policy.getSpec().getHbase().getInfoPort() == null
        ? JmxScraper.DEFAULT_INFO_PORT
        : policy.getSpec().getHbase().getInfoPort();
  }

  private static boolean sameFigures(CacheStatus a, CacheStatus b) {
    return Objects.equals(a.getHitRatio(), b.getHitRatio())
        && Objects.equals(a.getL1HitRatio(), b.getL1HitRatio())
        && Objects.equals(a.getL2HitRatio(), b.getL2HitRatio())
        && Objects.equals(a.getCumulativeHitRatio(), b.getCumulativeHitRatio())
        && Objects.equals(a.getSizeBytes(), b.getSizeBytes())
        && Objects.equals(a.getUsedBytes(), b.getUsedBytes())
        && Objects.equals(a.getEvictions(), b.getEvictions())
        && Objects.equals(a.getFailedInsertions(), b.getFailedInsertions());
  }

  static Double round(Double v) {
    return v == null ? null : Math.round(v * 10000) / 10000.0;
  }
}
