package dev.hbase.cache.operator.hbase;

import java.time.Duration;

/**
 * Cache activity over an interval (or since start, for cumulative figures), of one RegionServer or
 * summed over several. Ratios come from {@link HitCounts#ratio()}, so "no lookups" stays absent
 * instead of reading as 0.
 *
 * @param interval length of the interval; for cumulative figures, the time since start
 * @param data data-block lookups (the headline ratio)
 * @param all lookups of every block type
 * @param l1 on-heap LRU lookups
 * @param l2 BucketCache lookups
 * @param evictions blocks evicted
 * @param failedInsertions blocks not cached (BucketCache writer queues full)
 * @param restarts how many of the summed RegionServers restarted within the interval
 */
public record CacheDelta(
    Duration interval,
    HitCounts data,
    HitCounts all,
    HitCounts l1,
    HitCounts l2,
    long evictions,
    long failedInsertions,
    int restarts) {

  public static final CacheDelta NONE =
      new CacheDelta(
          Duration.ZERO, HitCounts.ZERO, HitCounts.ZERO, HitCounts.ZERO, HitCounts.ZERO, 0, 0, 0);

  /** The sum of two deltas; the interval is the longer one (they are meant to overlap). */
  public CacheDelta plus(CacheDelta o) {
    return new CacheDelta(
        interval.compareTo(o.interval) >= 0 ? interval : o.interval,
        data.plus(o.data),
        all.plus(o.all),
        l1.plus(o.l1),
        l2.plus(o.l2),
        evictions + o.evictions,
        failedInsertions + o.failedInsertions,
        restarts + o.restarts);
  }
}
