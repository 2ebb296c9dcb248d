package dev.hbase.cache.operator.plan;

import static dev.hbase.cache.operator.plan.Sizes.MiB;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The RegionServers' hbase-site keys of a plan: what the operator sets over the user's base
 * hbase-site, what it removes from it, and which of their changes make HBase discard a persisted
 * cache. Pure; the HMaster's keys are {@link MasterSite}'s.
 *
 * <p>The one key that depends on the HBase line is the persistence map's checkpoint interval, which
 * only 2.6 has ({@link HBaseLine#persistInterval}).
 */
final class RegionServerSite {
  private RegionServerSite() {}

  static final String CACHE_FILE = "bucketcache.data";
  static final String PERSISTENCE_FILE = "bucketcache.map";

  /** hbase.regionserver.msginterval unless {@code tuning.loadReportIntervalMillis} says. */
  static final long LOAD_REPORT_INTERVAL_MS = 1000;

  /**
   * Keys that enable an L2 or persistence; removed from the base config where the mode has none.
   */
  static final Set<String> L2_KEYS = Set.of("hbase.bucketcache.ioengine", "hbase.bucketcache.size");

  static final Set<String> PERSISTENCE_KEYS =
      Set.of("hbase.bucketcache.persistent.path", "hbase.bucketcache.persist.intervalinmillis");
  static final String DATA_CACHE_ON_READ = "hbase.block.data.cacheonread";

  /**
   * The keys, and the paths the plan names besides them.
   *
   * @param site the keys set (sorted)
   * @param removed the keys removed from the base hbase-site (sorted)
   * @param ioEngine hbase.bucketcache.ioengine, null without an L2
   * @param cacheFile the L2 data file (file engines), else null
   * @param persistentPath hbase.bucketcache.persistent.path, null unless persistent
   */
  record Keys(
      Map<String, String> site,
      Set<String> removed,
      String ioEngine,
      String cacheFile,
      String persistentPath) {}

  /**
   * The keys of a plan whose budget and volume are not refused.
   *
   * @param volume the cache volume (file modes), else null
   * @param line the HBase line the plan is made for
   */
  static Keys of(
      CacheMode mode,
      MemoryBudget budget,
      Plan.CacheVolume volume,
      TuningSpec tuning,
      HBaseLine line) {
    Map<String, String> rs = new TreeMap<>();
    rs.put("hfile.block.cache.size", MemoryBudget.fraction(budget.l1Fraction()));
    rs.put("hbase.regionserver.global.memstore.size", MemoryBudget.fraction(budget.memstore()));
    // A restarted RegionServer's first load report comes one interval after it registers, and the
    // roll sends its regions back only then (HBase's 3 s default: measured as 1-2 s of each
    // restart's delete -> regions home).
    rs.put(
        "hbase.regionserver.msginterval",
        Long.toString(
            Objects.requireNonNullElse(
                tuning.getLoadReportIntervalMillis(), LOAD_REPORT_INTERVAL_MS)));
    String ioEngine = null;
    String cacheFile = null;
    String persistentPath = null;
    if (mode == CacheMode.Offheap) {
      ioEngine = "offheap";
    } else if (mode.isFile()) {
      cacheFile = volume.mountPath() + "/" + CACHE_FILE;
      ioEngine = "file:" + cacheFile;
    }
    if (ioEngine != null) {
      rs.put("hbase.bucketcache.ioengine", ioEngine);
      rs.put("hbase.bucketcache.size", Long.toString(budget.l2() / MiB));
      rs.put("hbase.bucketcache.combinedcache.enabled", "true");
      if (tuning.getBucketSizes() != null) {
        rs.put(
            "hbase.bucketcache.bucket.sizes",
            tuning.getBucketSizes().stream().map(String::valueOf).collect(Collectors.joining(",")));
      }
      putIfSet(rs, "hbase.bucketcache.writer.threads", tuning.getWriterThreads());
      putIfSet(rs, "hbase.bucketcache.writer.queuelength", tuning.getWriterQueueLength());
      putIfSet(rs, "hbase.block.data.cachecompressed", tuning.getCacheDataCompressed());
    }
    if (mode.isPersistent()) {
      persistentPath = volume.mountPath() + "/" + PERSISTENCE_FILE;
      rs.put("hbase.bucketcache.persistent.path", persistentPath);
      if (line.persistInterval()) {
        rs.put(
            HBaseLine.PERSIST_INTERVAL,
            Long.toString(Objects.requireNonNullElse(tuning.getPersistIntervalMillis(), 1000L)));
      }
      // Closing a region must not evict its blocks, or a drain before a restart empties the cache.
      rs.put("hbase.rs.evictblocksonclose", "false");
    }
    if (mode == CacheMode.MetaOnly) {
      rs.put(DATA_CACHE_ON_READ, "false");
    }
    // A persistent cache is prefetched on open unless the policy says otherwise: a region drained
    // to another server for a restart is then read into that server's cache as it opens there
    // (the drain's reads stay warm), it stays there after the region goes back (persistent,
    // evictblocksonclose=false), so the next roll's drain to the same server finds it cached; and a
    // file fully cached is what HBase's regionCachedInfo reports after a restart (the drain
    // targets and the CacheAwareLoadBalancer read it). A region whose blocks are cached already is
    // not read again.
    Boolean prefetch = tuning.getPrefetchOnOpen();
    putIfSet(
        rs,
        "hbase.rs.prefetchblocksonopen",
        prefetch == null && mode.isPersistent() ? Boolean.TRUE : prefetch);
    // Base-config keys that would contradict the mode go; other tuning in the base config stays.
    Set<String> removed = new TreeSet<>();
    if (!mode.hasL2()) {
      removed.addAll(L2_KEYS);
    }
    if (!mode.isPersistent()) {
      removed.addAll(PERSISTENCE_KEYS);
    }
    if (mode != CacheMode.MetaOnly) {
      removed.add(DATA_CACHE_ON_READ);
    }
    return new Keys(rs, removed, ioEngine, cacheFile, persistentPath);
  }

  /**
   * Why rolling from the keys {@code previous} to those of {@code next} throws away persisted
   * caches: HBase refuses to restore a cache map written for another capacity, engine or bucket
   * layout ({@link Planner#cacheResetReasons}, the entry point).
   */
  static List<String> cacheResetReasons(Map<String, String> previous, Plan next) {
    List<String> reasons = new ArrayList<>();
    if (previous == null || !previous.containsKey("hbase.bucketcache.persistent.path")) {
      return reasons;
    }
    Map<String, String> now = next.regionServerSite();
    if (!now.containsKey("hbase.bucketcache.persistent.path")) {
      reasons.add("persistence is turned off (mode " + next.mode() + ")");
      return reasons;
    }
    diff(previous, now, "hbase.bucketcache.ioengine", "the L2 engine", reasons);
    diff(previous, now, "hbase.bucketcache.size", "the L2 capacity (MB)", reasons);
    diff(previous, now, "hbase.bucketcache.bucket.sizes", "the bucket sizes", reasons);
    diff(previous, now, "hbase.bucketcache.persistent.path", "the persistence path", reasons);
    return reasons;
  }

  private static void diff(
      Map<String, String> a, Map<String, String> b, String key, String what, List<String> out) {
    String x = a.get(key);
    String y = b.get(key);
    if (x == null ? y != null : !x.equals(y)) {
      out.add(
          what
              + " changes from "
              + (x == null ? "default" : x)
              + " to "
              + (y == null ? "default" : y));
    }
  }

  private static void putIfSet(Map<String, String> m, String key, Object value) {
    if (value != null) {
      m.put(key, value.toString());
    }
  }
}
