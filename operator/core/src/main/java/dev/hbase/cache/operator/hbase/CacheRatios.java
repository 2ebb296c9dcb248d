package dev.hbase.cache.operator.hbase;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Hit ratios from {@link CacheSample}s: pure functions.
 *
 * <p>HBase's own ratios ({@code l2CacheHitRatio}, {@code blockCacheCountHitPercent}) are cumulative
 * since the RegionServer started, so they hardly move on a long-running server and reset on
 * restart. The operator reports ratios over an interval from count deltas, with the cumulative
 * figures beside them, and aggregates several pods by summing counts (a pod with ten lookups does
 * not weigh as much as one with a million).
 */
public final class CacheRatios {

  private CacheRatios() {}

  /**
   * Activity between two samples of the same RegionServer. If it restarted in between (another
   * start time, or any counter went down) the counters began again from zero, so the later sample
   * alone is the activity since the restart.
   */
  public static CacheDelta between(CacheSample before, CacheSample after) {
    if (restarted(before, after)) {
      CacheDelta sinceStart = cumulative(after);
      return new CacheDelta(
          Duration.between(before.at(), after.at()),
          sinceStart.data(),
          sinceStart.all(),
          sinceStart.l1(),
          sinceStart.l2(),
          sinceStart.evictions(),
          sinceStart.failedInsertions(),
          1);
    }
    return new CacheDelta(
        Duration.between(before.at(), after.at()),
        after.data().minus(before.data()),
        after.all().minus(before.all()),
        after.l1().minus(before.l1()),
        after.l2().minus(before.l2()),
        after.evictions() - before.evictions(),
        after.failedInsertions() - before.failedInsertions(),
        0);
  }

  /** Everything since the RegionServer started (what HBase's own ratios cover). */
  public static CacheDelta cumulative(CacheSample sample) {
    Duration up =
        sample.startTime() > 0
            ? Duration.ofMillis(Math.max(0, sample.at().toEpochMilli() - sample.startTime()))
            : Duration.ZERO;
    return new CacheDelta(
        up,
        sample.data(),
        sample.all(),
        sample.l1(),
        sample.l2(),
        sample.evictions(),
        sample.failedInsertions(),
        0);
  }

  /** Sum of several RegionServers' deltas: the ratio of the sums, not the mean of the ratios. */
  public static CacheDelta aggregate(Collection<CacheDelta> deltas) {
    CacheDelta sum = CacheDelta.NONE;
    for (CacheDelta d : deltas) {
      sum = sum.plus(d);
    }
    return sum;
  }

  /**
   * Share of data-block reads served from the cache. Without an L2 that is the data ratio. With an
   * L2, HBase 2.6.4 counts each cold data read as two misses and each warm one as one hit (see
   * {@link CacheSample}), so misses are halved. Null when there were no data reads.
   */
  public static Double dataReadHitRatio(HitCounts data, boolean hasL2) {
    if (!hasL2) {
      return data.ratioOrNull();
    }
    double reads = dataReads(data, hasL2);
    return reads == 0 ? null : data.hits() / reads;
  }

  /** Data-block reads behind these counts, a cold read counted once ({@link #dataReadHitRatio}). */
  public static double dataReads(HitCounts data, boolean hasL2) {
    return data.hits() + (hasL2 ? data.misses() / 2.0 : data.misses());
  }

  /**
   * Share of the data reads of a whole cluster that its caches served over [from, to], from samples
   * of every RegionServer taken before and during that window (each instance told apart by its
   * server name, whose start code changes on restart). Per instance: its counters at {@code to}
   * (its last sample then) minus its counters at {@code from} (its last sample before; zero if it
   * started within the window). Reads of an instance after its last sample are not counted. Cold
   * reads are counted once ({@link #dataReadHitRatio}). Null when there was no read.
   */
  public static Double servedFromCache(Collection<CacheSample> samples, Instant from, Instant to) {
    Map<String, List<CacheSample>> byInstance = new TreeMap<>();
    for (CacheSample s : samples) {
      if (!s.at().isAfter(to)) {
        byInstance.computeIfAbsent(String.valueOf(s.serverName()), k -> new ArrayList<>()).add(s);
      }
    }
    double served = 0;
    double reads = 0;
    for (List<CacheSample> instance : byInstance.values()) {
      instance.sort(Comparator.comparing(CacheSample::at));
      CacheSample last = instance.get(instance.size() - 1);
      if (last.at().isBefore(from)) {
        continue; // gone before the window
      }
      CacheSample base = null;
      for (CacheSample s : instance) {
        if (!s.at().isAfter(from)) {
          base = s;
        }
      }
      if (base == null && last.startTime() < from.toEpochMilli()) {
        base = instance.get(0); // first seen within the window: count from there
      }
      HitCounts data = base == null ? last.data() : last.data().minus(base.data());
      served += data.hits();
      reads += dataReads(data, last.hasL2());
    }
    return reads == 0 ? null : served / reads;
  }

  /**
   * L2 used bytes now as a fraction of before (retention across a restart); null if before was 0.
   */
  public static Double retainedFraction(long l2UsedBefore, long l2UsedAfter) {
    return l2UsedBefore <= 0 ? null : (double) l2UsedAfter / l2UsedBefore;
  }

  static boolean restarted(CacheSample before, CacheSample after) {
    if (before.startTime() != 0
        && after.startTime() != 0
        && before.startTime() != after.startTime()) {
      return true;
    }
    return after.data().anyBelow(before.data())
        || after.all().anyBelow(before.all())
        || after.l1().anyBelow(before.l1())
        || after.l2().anyBelow(before.l2())
        || after.evictions() < before.evictions()
        || after.failedInsertions() < before.failedInsertions();
  }
}
