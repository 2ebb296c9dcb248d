package dev.hbase.cache.operator.plan;

import static dev.hbase.cache.operator.plan.Sizes.GiB;
import static dev.hbase.cache.operator.plan.Sizes.MiB;
import static dev.hbase.cache.operator.plan.Sizes.human;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How the RegionServer container's memory limit is shared out in each mode, and what HBase and the
 * container refuse of the result: the {@link Planner}'s arithmetic. Pure.
 *
 * <p>The memory model of a RegionServer container:
 *
 * <pre>
 *   limit >= heap + directMemory + overhead [+ page cache headroom (file L2 on disk)]
 *                                            [+ L2 (file L2 on tmpfs: tmpfs pages count)]
 *   heap         = memstore + L1 + free        (HBase: memstore + L1 <= 0.8 of heap)
 *   directMemory = RPC buffers and slack       [+ L2 (Offheap)]
 * </pre>
 *
 * <p>One budget for the five modes, not one class a mode: they share this one equation, and each
 * refusal names its numbers; split by mode, the equation and its messages would be written once per
 * mode. What the mode changes is where the L2 lives ({@link #of}): in direct memory (Offheap), in
 * the pod's memory as a tmpfs file (File with storage.medium Memory), or on a volume with page
 * cache left beside it (File and PersistentFile on a PVC); Lru and MetaOnly have none.
 *
 * @param mode the policy's mode
 * @param limit the container's memory limit in bytes
 * @param tmpfs the L2 is a file on tmpfs (storage.medium Memory), whose pages count in the limit
 * @param heapAsked memory.heap in bytes, or null when the heap is what the rest leaves
 * @param overhead JVM native memory budgeted outside heap and direct memory
 * @param pageCache memory left to the page cache (a file L2 on disk), else 0
 * @param l2 the L2 BucketCache capacity in bytes, 0 without an L2
 * @param heap -Xmx in bytes
 * @param direct -XX:MaxDirectMemorySize in bytes (the off-heap L2 included in Offheap mode)
 * @param l1Fraction hfile.block.cache.size: the heap's share for the L1
 * @param memstore hbase.regionserver.global.memstore.size: the heap's share for the memstores
 */
record MemoryBudget(
    CacheMode mode,
    long limit,
    boolean tmpfs,
    Long heapAsked,
    long overhead,
    long pageCache,
    long l2,
    long heap,
    long direct,
    double l1Fraction,
    double memstore) {

  // --- HBase's own rules ---
  /** memstore + L1 may use at most this share of the heap (HBase keeps 20% free). */
  static final double MAX_HEAP_USE = 0.8;

  /** hbase.bucketcache.size below 1 MB is refused by HBase. */
  static final long MIN_BUCKET_CACHE = MiB;

  /** BucketAllocator: each bucket holds at least 4 of the largest items, one bucket per size. */
  static final int FEWEST_ITEMS_IN_BUCKET = 4;

  /** HBase's hbase.bucketcache.bucket.sizes default (BucketAllocator.DEFAULT_BUCKET_SIZES). */
  static final List<Long> DEFAULT_BUCKET_SIZES =
      List.of(4, 8, 16, 32, 40, 48, 56, 64, 96, 128, 192, 256, 384, 512).stream()
          .map(k -> k * 1024L + 1024)
          .toList();

  // --- our sizing choices ---
  static final long MIN_HEAP = 512 * MiB;

  /** Above this the JVM loses compressed object pointers; auto-sizing never goes beyond. */
  static final long COMPRESSED_OOPS_HEAP = 31 * GiB;

  /** JVM native memory: 8% of the limit within [384Mi, 2Gi]. */
  static final double OVERHEAD_SHARE = 0.08;

  static final long MIN_OVERHEAD = 384 * MiB;
  static final long MAX_OVERHEAD = 2 * GiB;

  /**
   * Direct memory besides the L2 (RPC buffer pool, netty, DFS client): limit/16 in [256Mi, 1Gi].
   */
  static final long MIN_DIRECT = 256 * MiB;

  static final long MAX_DIRECT = GiB;

  /** Page cache left to file engines on disk: 10% of the limit within [256Mi, 4Gi]. */
  static final double PAGE_CACHE_SHARE = 0.10;

  static final long MIN_PAGE_CACHE = 256 * MiB;
  static final long MAX_PAGE_CACHE = 4 * GiB;

  /** Offheap mode without sizes: this share of what is left goes to the heap, the rest to L2. */
  static final double OFFHEAP_HEAP_SHARE = 0.4;

  static final double DEFAULT_MEMSTORE = 0.4;
  static final double DEFAULT_L1_LRU = 0.4;
  static final double DEFAULT_L1_WITH_L2 = 0.1;

  /**
   * Shares out the limit. The sizes the policy gives are taken as they are (the checks of {@link
   * #refusals} say when they do not fit); the others are derived: the overhead, the direct memory
   * besides the L2 and the page cache from the limit, the L2 from memory.bucketCache, else from
   * storage.size less what the volume needs besides it ({@link CacheVolumes}), else (Offheap,
   * tmpfs) from what the heap leaves of the limit, and the heap last from what all of them leave.
   *
   * @param mem the policy's memory section, for the heap's shares
   * @param heapAsked memory.heap in bytes, or null
   * @param l2Asked memory.bucketCache in bytes, or null
   * @param overheadAsked memory.overhead in bytes, or null
   * @param storageSize storage.size in bytes, or null
   */
  static MemoryBudget of(
      CacheMode mode,
      long limit,
      boolean tmpfs,
      MemorySpec mem,
      Long heapAsked,
      Long l2Asked,
      Long overheadAsked,
      Long storageSize) {
    boolean diskFile = mode.isFile() && !tmpfs;
    long overhead =
        Objects.requireNonNullElse(
            overheadAsked,
            Sizes.floorMiB(
                Sizes.clamp((long) (limit * OVERHEAD_SHARE), MIN_OVERHEAD, MAX_OVERHEAD)));
    long directReserve = Sizes.clamp(limit / 16, MIN_DIRECT, MAX_DIRECT);
    long pageCache =
        diskFile
            ? Sizes.clamp((long) (limit * PAGE_CACHE_SHARE), MIN_PAGE_CACHE, MAX_PAGE_CACHE)
            : 0;

    // --- L2 size ---
    long l2 = 0;
    if (mode.isFile()) {
      if (l2Asked != null) {
        l2 = l2Asked;
      } else if (storageSize != null && !tmpfs) {
        l2 = storageSize - CacheVolumes.pvcBuffer(storageSize);
      } else if (storageSize != null) {
        l2 = storageSize - CacheVolumes.TMPFS_BUFFER;
      } else if (tmpfs) {
        // the cache file lives in the pod's memory: sized from the limit as an off-heap L2 is
        l2 = inMemoryL2(limit, overhead, directReserve, heapAsked);
      }
    } else if (mode == CacheMode.Offheap) {
      l2 = l2Asked != null ? l2Asked : inMemoryL2(limit, overhead, directReserve, heapAsked);
    }
    l2 = Sizes.floorMiB(l2);

    // --- heap ---
    long fixed = overhead + directReserve + pageCache;
    if (mode == CacheMode.Offheap || tmpfs) {
      fixed += l2;
    }
    long heap =
        heapAsked != null
            ? heapAsked
            : Sizes.floorMiB(Math.min(COMPRESSED_OOPS_HEAP, limit - fixed));
    long direct = directReserve + (mode == CacheMode.Offheap ? l2 : 0);

    // --- the heap's shares ---
    double l1Fraction =
        Objects.requireNonNullElse(
            mem.getBlockCacheFraction(),
            mode.hasL2() || mode == CacheMode.MetaOnly ? DEFAULT_L1_WITH_L2 : DEFAULT_L1_LRU);
    double memstore = Objects.requireNonNullElse(mem.getMemstoreFraction(), DEFAULT_MEMSTORE);
    return new MemoryBudget(
        mode, limit, tmpfs, heapAsked, overhead, pageCache, l2, heap, direct, l1Fraction, memstore);
  }

  /** A file L2 on disk, which leaves page cache beside it in the limit. */
  boolean diskFile() {
    return mode.isFile() && !tmpfs;
  }

  /** The on-heap block cache in bytes (hfile.block.cache.size x heap). */
  long l1() {
    return Sizes.floorMiB((long) (heap * l1Fraction));
  }

  /**
   * HBase's rules and the container's budget: an L2 HBase and its BucketAllocator accept, a heap a
   * RegionServer can run in, sizes that fit the limit, heap shares HBase starts with.
   *
   * @param mem the policy's memory section, for whether a fraction is the default
   * @param tuning the policy's tuning section, for the bucket sizes
   * @param reasons where each refusal is added, naming the budget's numbers
   */
  void refusals(MemorySpec mem, TuningSpec tuning, List<String> reasons) {
    boolean diskFile = diskFile();
    if (mode.hasL2()) {
      List<Long> buckets =
          tuning.getBucketSizes() != null ? tuning.getBucketSizes() : DEFAULT_BUCKET_SIZES;
      long allocatorMin =
          FEWEST_ITEMS_IN_BUCKET
              * buckets.stream().mapToLong(Long::longValue).max().orElse(0)
              * buckets.size();
      if (l2 < MIN_BUCKET_CACHE) {
        reasons.add(
            "the L2 BucketCache would be "
                + human(Math.max(l2, 0))
                + ": HBase needs at least 1Mi (hbase.bucketcache.size >= 1 MB); "
                + (mode == CacheMode.Offheap
                    ? "raise the memory limit, lower memory.heap or set memory.bucketCache"
                    : "raise memory.bucketCache or storage.size"));
      } else if (l2 < allocatorMin) {
        reasons.add(
            "memory.bucketCache "
                + human(l2)
                + " is too small for "
                + buckets.size()
                + " bucket sizes up to "
                + buckets.get(buckets.size() - 1)
                + " bytes: HBase's BucketAllocator needs room for one bucket of 4 largest"
                + " blocks per size, at least "
                + human(allocatorMin));
      }
    }
    if (heap < MIN_HEAP) {
      reasons.add(
          heapAsked != null
              ? "memory.heap " + human(heap) + " is below the 512Mi a RegionServer needs"
              : "memory limit "
                  + human(limit)
                  + " leaves only "
                  + human(Math.max(heap, 0))
                  + " for the heap after "
                  + budgetParts(direct, overhead, pageCache, tmpfs ? l2 : 0)
                  + "; a RegionServer needs at least 512Mi: raise the limit"
                  + (mode.hasL2() ? " or lower the L2 (memory.bucketCache)" : ""));
    }
    long required = heap + direct + overhead + (tmpfs ? l2 : 0) + (diskFile ? MIN_PAGE_CACHE : 0);
    if (heapAsked != null && required > limit) {
      reasons.add(
          "memory limit "
              + human(limit)
              + " is too small: heap "
              + human(heap)
              + " + "
              + budgetParts(direct, overhead, diskFile ? MIN_PAGE_CACHE : 0, tmpfs ? l2 : 0)
              + " = "
              + human(required)
              + "; raise the limit to at least "
              + Sizes.quantity(Sizes.ceilDiv(required, MiB) * MiB)
              + " or lower memory.heap");
    }
    if (l1Fraction + memstore > MAX_HEAP_USE + 1e-9) {
      reasons.add(
          String.format(
              "memory.blockCacheFraction %s%s + memory.memstoreFraction %s%s = %s exceeds 0.8:"
                  + " HBase refuses to start (memStore + blockCache + 20%% free heap > 100%%);"
                  + " lower one of them",
              fraction(l1Fraction),
              mem.getBlockCacheFraction() == null ? " (default)" : "",
              fraction(memstore),
              mem.getMemstoreFraction() == null ? " (default)" : "",
              fraction(l1Fraction + memstore)));
    }
  }

  /**
   * Advice on a budget that is not refused: a Burstable pod, a heap without compressed pointers, a
   * cache that counts in the limit and does not survive a restart.
   *
   * @param memoryRequest the container's memory request in bytes, or null
   */
  List<String> warnings(Long memoryRequest) {
    List<String> warnings = new ArrayList<>();
    if (memoryRequest != null && memoryRequest < limit) {
      warnings.add(
          "memory request "
              + human(memoryRequest)
              + " is below the limit "
              + human(limit)
              + ": the pod is Burstable and is among the first evicted under node memory"
              + " pressure; a cache server should request its limit (Guaranteed QoS)");
    }
    if (heap > COMPRESSED_OOPS_HEAP) {
      warnings.add(
          "heap "
              + human(heap)
              + " is above 31Gi: the JVM loses compressed object pointers; prefer an L2 for the"
              + " memory beyond");
    }
    if (tmpfs) {
      warnings.add(
          "storage.medium Memory: the tmpfs cache file counts against the memory limit and is lost"
              + " on every restart");
    }
    return warnings;
  }

  /** An L2 in the pod's memory (off-heap, or a tmpfs file): what the heap leaves of the limit. */
  private static long inMemoryL2(long limit, long overhead, long directReserve, Long heapAsked) {
    long rest = limit - overhead - directReserve;
    long heap = heapAsked != null ? heapAsked : autoOffheapHeap(rest);
    return rest - heap;
  }

  private static long autoOffheapHeap(long rest) {
    return Sizes.floorMiB(
        Sizes.clamp((long) (rest * OFFHEAP_HEAP_SHARE), GiB, COMPRESSED_OOPS_HEAP));
  }

  /** What the budget holds besides the heap, for the messages that say what the heap is left. */
  private static String budgetParts(long direct, long overhead, long pageCache, long tmpfsL2) {
    StringBuilder b = new StringBuilder();
    b.append("direct memory ")
        .append(human(direct))
        .append(" + JVM overhead ")
        .append(human(overhead));
    if (pageCache > 0) {
      b.append(" + page cache ").append(human(pageCache));
    }
    if (tmpfsL2 > 0) {
      b.append(" + tmpfs L2 ").append(human(tmpfsL2));
    }
    return b.toString();
  }

  /**
   * A heap share as HBase's keys and the messages write it: 0.4 not 0.4000000001; two decimals are
   * all HBase reads meaningfully.
   */
  static String fraction(double v) {
    String s = String.format(java.util.Locale.ROOT, "%.4f", v);
    s = s.replaceAll("0+$", "");
    return s.endsWith(".") ? s + "0" : s;
  }
}
