package dev.hbase.cache.operator.plan;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import dev.hbase.cache.api.v1alpha1.status.Evidence;
import dev.hbase.cache.api.v1alpha1.status.Recommendation;
import dev.hbase.cache.operator.hbase.CacheDelta;
import dev.hbase.cache.operator.hbase.CacheRatios;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * Sizing advice, the seeds' rule applied to what the caches did over a window: pure functions.
 *
 * <ul>
 *   <li>on-heap LRU while the working set fits it (it is the fastest);
 *   <li>an L2 when the LRU is full and evicting below the target hit ratio, or when GC takes a
 *       large share of the time while it evicts (off-heap while it fits the memory limit, else a
 *       persistent file);
 *   <li>a bigger L2 while the L2 is full and the hit ratio is below the target;
 *   <li>more BucketCache writer threads and a longer queue while blocks fail to be cached;
 *   <li>back to the LRU when everything cached would fit the LRU an Lru policy gets, GC is low and
 *       the target is met (Offheap only: a file cache is there for its size or its persistence).
 * </ul>
 *
 * Every recommended mode and size is planned for the same memory limit first: advice the planner
 * would refuse is never given.
 *
 * <p>Why ~540 lines in one class: the window (adding a sample, when it is complete, whether it was
 * gathered under the current plan), the rule above and Apply's guards ({@code following}) read the
 * same evidence fields; they are small pure functions, each covered by RecommenderTest.
 */
public final class Recommender {
  /**
   * A cache at least this full is full: HBase evicts its LRU down to 95% of capacity and its
   * BucketCache down to 85% (their min factors), so a full cache under churn shows 85-99%.
   */
  static final double FULL = 0.8;

  /** Fewer data reads than this in a window: no advice. */
  static final long MIN_READS = 1000;

  /** GC above this share of the time, while the LRU evicts: move the data blocks off the heap. */
  static final double GC_HIGH = 0.05;

  /** GC below this share of the time: the heap could hold the data blocks. */
  static final double GC_LOW = 0.02;

  /** A recommended L2 holds the target share of the working set with this much to spare. */
  static final double HEADROOM = 1.25;

  /** L2 sizes are recommended in steps of this. */
  static final long STEP = 256 * Sizes.MiB;

  /** The working set is estimated at most this many times the cache. */
  static final double MAX_ESTIMATE = 64;

  private static final ObjectMapper JSON = new ObjectMapper();

  private Recommender() {}

  /**
   * One RegionServer between two of the operator's samples.
   *
   * @param delta its counters' deltas (a restart counts from zero, see {@link CacheRatios#between})
   * @param gcMillis GC time in the interval, null when unknown
   */
  public record ServerInterval(
      String pod,
      Instant at,
      CacheDelta delta,
      boolean hasL2,
      long l1CapacityBytes,
      long l1UsedBytes,
      long l2CapacityBytes,
      long l2UsedBytes,
      Long gcMillis) {}

  /**
   * What to change, or the current settings with {@code differs} false.
   *
   * @param bucketCache L2 bytes, 0 without an L2
   * @param writerThreads null: unchanged
   * @param writerQueueLength null: unchanged
   */
  public record Advice(
      CacheMode mode,
      long bucketCache,
      Integer writerThreads,
      Integer writerQueueLength,
      boolean differs,
      String message) {}

  /**
   * The window with these intervals added (the same window when they hold no data read; a new one
   * when there was none). A server reporting other cache capacities than the window's (the policy
   * changed) starts a new window at {@code now}: evidence of another size does not count for this
   * one.
   */
  public static Evidence add(Evidence window, List<ServerInterval> intervals, Instant now) {
    if (intervals.stream().allMatch(x -> x.delta().data().requests() == 0)) {
      return window; // no reads: nothing to learn, and an idle cluster's status stays unwritten
    }
    Evidence w = window == null ? fresh(now) : copy(window);
    for (ServerInterval x : intervals) {
      if (w.getL1CapacityBytes() != null
          && (apart(w.getL1CapacityBytes(), x.l1CapacityBytes())
              || apart(w.getL2CapacityBytes(), x.l2CapacityBytes()))) {
        w = fresh(now);
      }
    }
    double l1Used = 0;
    double l2Used = 0;
    for (ServerInterval x : intervals) {
      CacheDelta d = x.delta();
      w.setDataReads(w.getDataReads() + Math.round(CacheRatios.dataReads(d.data(), x.hasL2())));
      w.setCachedReads(w.getCachedReads() + d.data().hits());
      w.setEvictions(w.getEvictions() + d.evictions());
      w.setFailedInsertions(w.getFailedInsertions() + d.failedInsertions());
      if (x.gcMillis() != null) {
        w.setGcMillis(w.getGcMillis() + x.gcMillis());
        w.setObservedMillis(w.getObservedMillis() + d.interval().toMillis());
      }
      w.setL1CapacityBytes(x.l1CapacityBytes());
      w.setL2CapacityBytes(x.l2CapacityBytes());
      l1Used = Math.max(l1Used, fraction(x.l1UsedBytes(), x.l1CapacityBytes()));
      l2Used = Math.max(l2Used, fraction(x.l2UsedBytes(), x.l2CapacityBytes()));
    }
    // intervals is not empty here: an empty list has no reads and returned above
    w.setL1UsedFraction(round(l1Used));
    w.setL2UsedFraction(round(l2Used));
    w.setTo(now.toString());
    return derive(w);
  }

  /**
   * Whether the window was gathered under this plan: its servers' L2 within 2% of the plan's (HBase
   * reports it within 0.2%), or none for none, and their LRU within 15% (HBase sizes it from the
   * heap the JVM reports, a bit under -Xmx). A plan changed since (a roll pending or just done)
   * makes the window evidence of other settings: it is not advised on.
   */
  public static boolean gatheredUnder(Evidence w, Plan plan) {
    long l2 = w.getL2CapacityBytes() == null ? 0 : w.getL2CapacityBytes();
    boolean l2Same =
        plan.bucketCache() == 0
            ? l2 == 0
            : Math.abs(l2 - plan.bucketCache()) <= plan.bucketCache() / 50;
    long l1 = w.getL1CapacityBytes() == null ? 0 : w.getL1CapacityBytes();
    return l2Same && Math.abs(l1 - plan.l1()) <= plan.l1() * 0.15;
  }

  /**
   * Whether a standing recommendation still asks for a change of the policy as it is now: after the
   * user follows it (or changes the policy otherwise) it may not, long before the next window
   * completes. The L2 counts as followed within 2% (the planner rounds).
   */
  public static boolean stillDiffers(Recommendation r, BlockCachePolicySpec spec, Plan current) {
    if (r.getMode() == null || !Boolean.TRUE.equals(r.getDiffers())) {
      return false;
    }
    if (!r.getMode().equals(current.mode().name())) {
      return true;
    }
    long l2 = r.getBucketCache() == null ? 0 : Sizes.parse(r.getBucketCache());
    if (Math.abs(l2 - current.bucketCache()) > Math.max(l2, current.bucketCache()) / 50) {
      return true;
    }
    TuningSpec t = spec.getTuning() == null ? new TuningSpec() : spec.getTuning();
    return (r.getWriterThreads() != null && !r.getWriterThreads().equals(t.getWriterThreads()))
        || (r.getWriterQueueLength() != null
            && !r.getWriterQueueLength().equals(t.getWriterQueueLength()));
  }

  /**
   * The spec with a recommendation followed (autoTune mode Apply), or why it cannot be.
   *
   * @param spec the policy's spec, or null when the recommendation does not plan for the memory
   *     limit
   * @param refused the planner's reason, when it does not
   */
  public record Following(BlockCachePolicySpec spec, String refused) {}

  /**
   * The edit a user following {@code r} would make: the recommended mode and L2 (the fields that
   * mode does not allow dropped, see {@link #candidate}) and writer settings; a file cache's
   * explicit {@code storage.size} kept when the new L2 still plans with it. Planned for the same
   * memory limit first: the operator never writes a spec its planner refuses, nor one that adds or
   * grows cache volumes (storage is permanent: a PVC never shrinks).
   */
  public static Following following(
      BlockCachePolicySpec spec, Recommendation r, Plan current, JvmOptions.Trust jvmTrust) {
    CacheMode mode = CacheMode.valueOf(r.getMode());
    long l2 = r.getBucketCache() == null ? 0 : Sizes.parse(r.getBucketCache());
    BlockCachePolicySpec c;
    if (mode == current.mode() && !apart(l2, current.bucketCache())) {
      c = JSON.convertValue(spec, BlockCachePolicySpec.class);
    } else {
      c = candidate(spec, mode, l2);
      if (mode.isFile() && spec.getStorage() != null && spec.getStorage().getSize() != null) {
        BlockCachePolicySpec keep = JSON.convertValue(c, BlockCachePolicySpec.class);
        keep.getStorage().setSize(spec.getStorage().getSize());
        if (Planner.plan(keep, current.memoryLimit(), null, jvmTrust) instanceof Plan) {
          c = keep;
        }
      }
    }
    if (r.getWriterThreads() != null || r.getWriterQueueLength() != null) {
      TuningSpec t = c.getTuning() == null ? new TuningSpec() : c.getTuning();
      if (r.getWriterThreads() != null) {
        t.setWriterThreads(r.getWriterThreads());
      }
      if (r.getWriterQueueLength() != null) {
        t.setWriterQueueLength(r.getWriterQueueLength());
      }
      c.setTuning(t);
    }
    PlanResult planned = Planner.plan(c, current.memoryLimit(), null, jvmTrust);
    if (planned instanceof Refusal f) {
      return new Following(null, f.summary());
    }
    long grown = ((Plan) planned).pvcSize();
    if (grown > current.pvcSize()) {
      return new Following(
          null,
          (current.pvcSize() == 0
                  ? "it needs new cache volumes of " + Sizes.quantity(grown)
                  : "its cache volumes would grow from "
                      + Sizes.quantity(current.pvcSize())
                      + " to "
                      + Sizes.quantity(grown))
              + " per RegionServer; a volume never shrinks and the operator never deletes one, so"
              + " autoTune Apply leaves storage to you: give storage.size room for it, or follow"
              + " the advice yourself");
    }
    return new Following(c, null);
  }

  /** Whether the window is complete. */
  public static boolean complete(Evidence w, Duration length, Instant now) {
    return w != null && !Instant.parse(w.getFrom()).plus(length).isAfter(now);
  }

  /**
   * The advice for a window of evidence.
   *
   * @param spec the policy as it is
   * @param current its plan (mode, L2 size, memory limit)
   * @param target the data hit ratio to aim for
   */
  public static Advice advise(
      BlockCachePolicySpec spec,
      Plan current,
      Evidence e,
      double target,
      JvmOptions.Trust jvmTrust) {
    CacheMode mode = current.mode();
    long l2 = current.bucketCache();
    if (e.getDataReads() < MIN_READS) {
      return keep(
          current,
          String.format(
              Locale.ROOT,
              "only %d data reads in the window: too few to advise on",
              e.getDataReads()));
    }
    if (mode == CacheMode.MetaOnly) {
      return keep(current, "MetaOnly caches no data blocks by choice: " + figures(e));
    }
    double h = e.getDataHitRatio();
    long ws = e.getWorkingSetBytes();
    Integer threads = null;
    Integer queue = null;
    String writers = "";
    if (mode.hasL2() && e.getFailedInsertions() > 0) {
      TuningSpec t = spec.getTuning() == null ? new TuningSpec() : spec.getTuning();
      int curThreads = t.getWriterThreads() == null ? 3 : t.getWriterThreads();
      int curQueue = t.getWriterQueueLength() == null ? 64 : t.getWriterQueueLength();
      threads = Math.min(64, curThreads + Math.max(1, curThreads / 2));
      queue = Math.min(65536, curQueue * 2);
      writers =
          String.format(
              Locale.ROOT,
              "; %d blocks were not cached because the BucketCache writer queues were full:"
                  + " writerThreads %d -> %d, writerQueueLength %d -> %d",
              e.getFailedInsertions(),
              curThreads,
              threads,
              curQueue,
              queue);
    }
    if (mode == CacheMode.Lru) {
      boolean churns = e.getEvictions() > 0 && e.getL1UsedFraction() >= FULL && h < target;
      boolean gc =
          e.getEvictions() > 0 && e.getGcTimeFraction() != null && e.getGcTimeFraction() >= GC_HIGH;
      if (!churns && !gc) {
        return keep(
            current,
            String.format(
                Locale.ROOT,
                "the working set (~%s per RegionServer) fits the LRU (%s): %s",
                Sizes.human(ws),
                Sizes.human(current.l1()),
                figures(e)));
      }
      String why =
          churns
              ? String.format(
                  Locale.ROOT,
                  "the LRU (%s per RegionServer) is full and evicting at a hit ratio of %.3f <"
                      + " %.2f (working set ~%s)",
                  Sizes.human(current.l1()),
                  h,
                  target,
                  Sizes.human(ws))
              : String.format(
                  Locale.ROOT,
                  "the LRU evicts and GC takes %.1f%% of the time",
                  e.getGcTimeFraction() * 100);
      return toL2(spec, current, e, l2For(ws, target), target, why, jvmTrust);
    }
    boolean full = e.getEvictions() > 0 && e.getL2UsedFraction() >= FULL && h < target;
    if (full) {
      long bigger = Math.max(l2For(ws, target), roundUp((long) (l2 * HEADROOM)));
      String why =
          String.format(
              Locale.ROOT,
              "the L2 (%s per RegionServer) is full and evicting at a hit ratio of %.3f < %.2f"
                  + " (working set ~%s)",
              Sizes.human(l2),
              h,
              target,
              Sizes.human(ws));
      Advice a = toL2(spec, current, e, bigger, target, why, jvmTrust);
      return threads == null
          ? a
          : new Advice(a.mode(), a.bucketCache(), threads, queue, true, a.message() + writers);
    }
    if (mode == CacheMode.Offheap
        && threads == null
        && h >= target
        && e.getGcTimeFraction() != null
        && e.getGcTimeFraction() < GC_LOW) {
      long cached =
          Math.round(
              e.getL1UsedFraction() * e.getL1CapacityBytes()
                  + e.getL2UsedFraction() * e.getL2CapacityBytes());
      PlanResult lru =
          Planner.plan(candidate(spec, CacheMode.Lru, 0), current.memoryLimit(), null, jvmTrust);
      if (lru instanceof Plan p && cached <= 0.8 * p.l1()) {
        return new Advice(
            CacheMode.Lru,
            0,
            null,
            null,
            true,
            String.format(
                Locale.ROOT,
                "everything cached (~%s per RegionServer) fits the %s LRU an Lru policy gets"
                    + " with GC at %.1f%% of the time: on-heap is fastest while it fits; %s",
                Sizes.human(cached),
                Sizes.human(p.l1()),
                e.getGcTimeFraction() * 100,
                figures(e)));
      }
    }
    if (threads != null) {
      return new Advice(
          mode, l2, threads, queue, true, "the L2 size holds the reads: " + figures(e) + writers);
    }
    return keep(
        current,
        String.format(
            Locale.ROOT,
            "the L2 (%s per RegionServer, %.0f%% full) holds the working set: %s",
            Sizes.human(l2),
            e.getL2UsedFraction() * 100,
            figures(e)));
  }

  /**
   * An L2 of {@code size}: in the current mode when it has one, else off-heap; off-heap only when
   * it fits the memory limit, else a persistent file; the current settings when neither plans.
   */
  private static Advice toL2(
      BlockCachePolicySpec spec,
      Plan current,
      Evidence e,
      long size,
      double target,
      String why,
      JvmOptions.Trust jvmTrust) {
    CacheMode first = current.mode().hasL2() ? current.mode() : CacheMode.Offheap;
    for (CacheMode m :
        first == CacheMode.Offheap
            ? List.of(CacheMode.Offheap, CacheMode.PersistentFile)
            : List.of(first)) {
      if (Planner.plan(candidate(spec, m, size), current.memoryLimit(), null, jvmTrust)
          instanceof Plan) {
        return new Advice(
            m,
            size,
            null,
            null,
            true,
            String.format(
                Locale.ROOT,
                "%s: mode %s with an L2 of %s aims at %.2f; %s",
                why,
                m,
                Sizes.quantity(size),
                target,
                figures(e)));
      }
    }
    return keep(
        current,
        String.format(
            Locale.ROOT,
            "%s, but an L2 of %s does not plan within the memory limit of %s: raise the limit"
                + " or use a file cache; %s",
            why,
            Sizes.quantity(size),
            Sizes.human(current.memoryLimit()),
            figures(e)));
  }

  /**
   * The spec with another mode and L2 size, and without the fields that mode does not allow (the
   * same rules as the CRD's CEL and the planner).
   */
  static BlockCachePolicySpec candidate(BlockCachePolicySpec spec, CacheMode mode, long l2) {
    BlockCachePolicySpec c = JSON.convertValue(spec, BlockCachePolicySpec.class);
    c.setMode(mode);
    MemorySpec m = c.getMemory() == null ? new MemorySpec() : c.getMemory();
    m.setBucketCache(mode.hasL2() ? new Quantity(Sizes.quantity(l2)) : null);
    c.setMemory(m);
    if (!mode.isFile()) {
      c.setStorage(null);
    } else if (c.getStorage() != null) {
      c.getStorage().setSize(null); // the volume is sized from the L2
    }
    TuningSpec t = c.getTuning();
    if (t != null) {
      if (!mode.hasL2()) {
        t.setBucketSizes(null)
            .setWriterThreads(null)
            .setWriterQueueLength(null)
            .setCacheDataCompressed(null);
      }
      if (!mode.isPersistent()) {
        t.setPersistIntervalMillis(null);
      }
    }
    return c;
  }

  /** The L2 that holds {@code target} of a working set, with headroom, in {@link #STEP}s. */
  static long l2For(long workingSet, double target) {
    return Math.max(STEP, roundUp((long) Math.ceil(workingSet * target * HEADROOM)));
  }

  private static long roundUp(long bytes) {
    return Sizes.ceilDiv(bytes, STEP) * STEP;
  }

  private static Advice keep(Plan current, String message) {
    return new Advice(current.mode(), current.bucketCache(), null, null, false, message);
  }

  private static String figures(Evidence e) {
    return String.format(
        Locale.ROOT,
        "data hit ratio %.3f over %d data reads, %d evictions, %d failed insertions%s",
        e.getDataHitRatio(),
        e.getDataReads(),
        e.getEvictions(),
        e.getFailedInsertions(),
        e.getGcTimeFraction() == null
            ? ""
            : String.format(Locale.ROOT, ", GC %.1f%% of the time", e.getGcTimeFraction() * 100));
  }

  /**
   * The derived figures: hit ratio, GC share and the working set. The working set of a full,
   * evicting cache is its capacity over its hit ratio (uniform random reads over W bytes hit a
   * cache of C bytes with probability C/W; skewed reads need less); else what is cached.
   */
  static Evidence derive(Evidence w) {
    w.setDataHitRatio(
        w.getDataReads() == 0 ? null : round((double) w.getCachedReads() / w.getDataReads()));
    w.setGcTimeFraction(
        w.getObservedMillis() == 0
            ? null
            : round((double) w.getGcMillis() / w.getObservedMillis()));
    if (w.getL1CapacityBytes() == null) {
      return w;
    }
    boolean lru = w.getL2CapacityBytes() == null || w.getL2CapacityBytes() == 0;
    long cap = lru ? w.getL1CapacityBytes() : w.getL2CapacityBytes();
    double used = lru ? w.getL1UsedFraction() : w.getL2UsedFraction();
    Double h = w.getDataHitRatio();
    long ws;
    if (w.getEvictions() > 0 && used >= FULL && h != null) {
      ws = Math.round(cap / Math.max(h, 1 / MAX_ESTIMATE));
    } else {
      ws = Math.round(used * cap);
    }
    w.setWorkingSetBytes(ws);
    return w;
  }

  private static Evidence fresh(Instant now) {
    return new Evidence()
        .setFrom(now.toString())
        .setDataReads(0L)
        .setCachedReads(0L)
        .setEvictions(0L)
        .setFailedInsertions(0L)
        .setGcMillis(0L)
        .setObservedMillis(0L);
  }

  private static Evidence copy(Evidence e) {
    return JSON.convertValue(e, Evidence.class);
  }

  private static boolean apart(Long a, long b) {
    long x = a == null ? 0 : a;
    return Math.abs(x - b) > Math.max(x, b) / 50;
  }

  private static double fraction(long used, long capacity) {
    return capacity <= 0 ? 0 : (double) used / capacity;
  }

  private static Double round(Double v) {
    return v == null ? null : Math.round(v * 10000) / 10000.0;
  }
}
