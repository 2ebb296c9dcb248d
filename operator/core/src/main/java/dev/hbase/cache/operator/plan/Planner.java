package dev.hbase.cache.operator.plan;

import static dev.hbase.cache.operator.plan.Sizes.GiB;
import static dev.hbase.cache.operator.plan.Sizes.MiB;
import static dev.hbase.cache.operator.plan.Sizes.human;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.JvmSpec;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.spec.StorageSpec;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Turns a policy and the RegionServer container's memory limit into a {@link Plan}, or refuses with
 * reasons. Pure: no I/O, same input, same output.
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
 * <p>Why one class of ~800 lines: the five modes share this one budget, and each of the 27 refusals
 * names that budget's numbers; split by mode, the equation and its messages would be written once
 * per mode. The length is the per-mode arithmetic ({@code plan}), the rendering of the plan into
 * site keys and JVM options ({@code render}) and the cross-field rules; each is covered by
 * PlannerTest and BadPolicies.
 */
public final class Planner {
  /** Options that load code into the RegionServer JVM: a policy author may not add them. */

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

  /** PVC = L2 + max(1Gi, 10%): persistence map, filesystem metadata. */
  static final long MIN_PVC_BUFFER = GiB;

  static final double PVC_BUFFER_SHARE = 0.10;

  /**
   * storage.size above this multiple of what the L2 needs (and more than 16Gi above it) is refused:
   * PVCs only grow, so a typo there cannot be undone.
   */
  static final long MAX_PVC_OVERSIZE = 8;

  /** tmpfs emptyDir limit = L2 + this. */
  static final long TMPFS_BUFFER = 64 * MiB;

  static final double DEFAULT_MEMSTORE = 0.4;
  static final double DEFAULT_L1_LRU = 0.4;
  static final double DEFAULT_L1_WITH_L2 = 0.1;

  static final String CACHE_FILE = "bucketcache.data";
  static final String PERSISTENCE_FILE = "bucketcache.map";
  static final String CACHE_AWARE_BALANCER =
      "org.apache.hadoop.hbase.master.balancer.CacheAwareLoadBalancer";

  /**
   * The CacheAwareLoadBalancer's weight of region-count skew (hbase 2.6.4 default 20, the same as
   * its cache cost's; the StochasticLoadBalancer's default is 500). At 20 against 20 the balancer
   * trades an even spread for cache: a drain leaves a fully cached copy of each region it moved on
   * the server it went to, HBase 2.6.4 counts that server the region's "old server" with ratio 1.0,
   * and its candidate generators propose moving the region back there; one such move is worth more
   * than the skew it adds (the likely cause of a restarted server left with 0 of 8 regions, 0/4/4,
   * after a roll on kind). HBASE-30300 ("disproportionally favouring cache ratio over skewness")
   * changes this upstream, after 2.6.4. At 500 a move that takes a server off the mean costs more
   * than any cache gain; the price is that even counts with regions away from their caches no
   * longer start a balancer run for that alone (docs/concepts/roll.md).
   */
  static final int REGION_COUNT_COST = 500;

  /** The master's batching waits for region moves (HBase default 150 ms each). */
  static final int MOVE_BATCH_WAIT_MS = 10;

  /** hbase.regionserver.msginterval unless {@code tuning.loadReportIntervalMillis} says. */
  static final long LOAD_REPORT_INTERVAL_MS = 1000;

  /** JVM flags every RegionServer gets: a short DNS cache (restarted pods get new IPs). */
  static final String DNS_TTL = "-Dsun.net.inetaddr.ttl=1 -Dsun.net.inetaddr.negative.ttl=0";

  /**
   * Keys that enable an L2 or persistence; removed from the base config where the mode has none.
   */
  static final Set<String> L2_KEYS = Set.of("hbase.bucketcache.ioengine", "hbase.bucketcache.size");

  static final Set<String> PERSISTENCE_KEYS =
      Set.of("hbase.bucketcache.persistent.path", "hbase.bucketcache.persist.intervalinmillis");
  static final String DATA_CACHE_ON_READ = "hbase.block.data.cacheonread";

  /** Where no cache volume may be mounted (the CRD's CEL lists the same). */
  static final List<String> SYSTEM_DIRS =
      List.of(
          "/bin",
          "/boot",
          "/dev",
          "/etc",
          "/lib",
          "/lib64",
          "/proc",
          "/run",
          "/sbin",
          "/sys",
          "/usr",
          "/var/run");

  private Planner() {}

  /** Plans a policy with the operator's defaults (jvm.extraOptions from the allow-list). */
  public static PlanResult plan(BlockCachePolicySpec spec, Long memoryLimit, Long memoryRequest) {
    return plan(spec, memoryLimit, memoryRequest, JvmOptions.Trust.ALLOW_LIST);
  }

  /**
   * Plans a policy for a RegionServer container.
   *
   * @param spec the policy
   * @param memoryLimit the container's memory limit in bytes (null: not set, refused)
   * @param memoryRequest the container's memory request in bytes, or null
   * @param jvmTrust which jvm.extraOptions the operator's install allows ({@link JvmOptions})
   */
  public static PlanResult plan(
      BlockCachePolicySpec spec, Long memoryLimit, Long memoryRequest, JvmOptions.Trust jvmTrust) {
    return plan(spec, memoryLimit, memoryRequest, jvmTrust, Map.of(), null);
  }

  /**
   * Same, knowing the base hbase-site the plan's keys go into (the master keys it already sets are
   * kept) and the version the policy's HMaster last reported (with spec.hbase.version unset, the
   * master keys only 2.6 has wait for a report of 2.6): {@link MasterSite}.
   *
   * @param baseSite the base hbase-site's properties (empty: none known)
   * @param masterVersion {@code status.masterVersion}, null when the operator has not seen it
   */
  public static PlanResult plan(
      BlockCachePolicySpec spec,
      Long memoryLimit,
      Long memoryRequest,
      JvmOptions.Trust jvmTrust,
      Map<String, String> baseSite,
      String masterVersion) {
    List<String> reasons = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    if (spec == null || spec.getMode() == null) {
      return new Refusal(List.of("spec.mode is required: one of " + CacheMode.ALLOWED));
    }
    if (memoryLimit == null || memoryLimit <= 0) {
      return new Refusal(
          List.of(
              "the RegionServer container has no memory limit: the planner sizes heap, direct"
                  + " memory and caches from it; set resources.limits.memory on the container"));
    }
    CacheMode mode = spec.getMode();
    MemorySpec mem = spec.getMemory() == null ? new MemorySpec() : spec.getMemory();
    StorageSpec storage = spec.getStorage();
    TuningSpec tuning = spec.getTuning() == null ? new TuningSpec() : spec.getTuning();

    checkCrossFieldRules(spec, mode, mem, storage, tuning, jvmTrust, reasons);
    HBaseLine line = HBaseLine.of(spec, reasons);
    if (line != null) {
      reasons.addAll(line.refusals(spec));
    }

    long limit = memoryLimit;
    boolean tmpfs = storage != null && StorageSpec.MEDIUM_MEMORY.equals(storage.getMedium());
    boolean diskFile = mode.isFile() && !tmpfs;
    Long heapAsked = bytes(mem.getHeap(), "memory.heap", reasons);
    Long l2Asked = bytes(mem.getBucketCache(), "memory.bucketCache", reasons);
    Long overheadAsked = bytes(mem.getOverhead(), "memory.overhead", reasons);
    Long storageSize = storage == null ? null : bytes(storage.getSize(), "storage.size", reasons);
    if (!reasons.isEmpty()) {
      return new Refusal(reasons);
    }
    long overhead =
        orDefault(
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
        l2 = storageSize - pvcBuffer(storageSize);
      } else if (storageSize != null) {
        l2 = storageSize - TMPFS_BUFFER;
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

    // --- HBase's rules and the container's budget ---
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

    double l1Fraction =
        orDefault(
            mem.getBlockCacheFraction(),
            mode.hasL2() || mode == CacheMode.MetaOnly ? DEFAULT_L1_WITH_L2 : DEFAULT_L1_LRU);
    double memstore = orDefault(mem.getMemstoreFraction(), DEFAULT_MEMSTORE);
    if (l1Fraction + memstore > MAX_HEAP_USE + 1e-9) {
      reasons.add(
          String.format(
              "memory.blockCacheFraction %s%s + memory.memstoreFraction %s%s = %s exceeds 0.8:"
                  + " HBase refuses to start (memStore + blockCache + 20%% free heap > 100%%);"
                  + " lower one of them",
              trim(l1Fraction),
              mem.getBlockCacheFraction() == null ? " (default)" : "",
              trim(memstore),
              mem.getMemstoreFraction() == null ? " (default)" : "",
              trim(l1Fraction + memstore)));
    }

    // --- the cache volume ---
    Plan.CacheVolume volume = null;
    if (mode.isFile()) {
      String mountPath =
          storage == null || storage.getMountPath() == null
              ? StorageSpec.DEFAULT_MOUNT_PATH
              : storage.getMountPath().replaceAll("/+$", "");
      long size;
      if (tmpfs) {
        size = storageSize != null ? storageSize : l2 + TMPFS_BUFFER;
      } else {
        long needed = l2 + pvcBuffer(l2);
        size = storageSize != null ? storageSize : Sizes.ceilGiB(needed);
        if (storageSize != null && storageSize < needed) {
          reasons.add(
              "storage.size "
                  + human(storageSize)
                  + " cannot hold an L2 of "
                  + human(l2)
                  + " plus "
                  + human(pvcBuffer(l2))
                  + " for the persistence map and filesystem; set storage.size to at least "
                  + Sizes.quantity(Sizes.ceilGiB(needed))
                  + " or lower memory.bucketCache");
        }
        if (storageSize != null
            && storageSize > MAX_PVC_OVERSIZE * needed
            && storageSize - needed > 16 * GiB) {
          reasons.add(
              "storage.size "
                  + human(storageSize)
                  + " is more than "
                  + MAX_PVC_OVERSIZE
                  + "x what an L2 of "
                  + human(l2)
                  + " needs ("
                  + human(needed)
                  + "): a PVC cannot shrink, so a typo (an extra digit, Gi for Mi) would be"
                  + " permanent; set storage.size to at most "
                  + Sizes.quantity(Sizes.ceilGiB(MAX_PVC_OVERSIZE * needed))
                  + " or raise memory.bucketCache");
        }
      }
      if (tmpfs && storageSize != null && storageSize < l2) {
        reasons.add(
            "storage.size "
                + human(storageSize)
                + " (tmpfs) is smaller than the L2 of "
                + human(l2)
                + "; raise storage.size or lower memory.bucketCache");
      }
      volume =
          new Plan.CacheVolume(
              mountPath, tmpfs, size, storage == null ? null : storage.getStorageClassName());
    }

    if (!reasons.isEmpty()) {
      return new Refusal(reasons);
    }

    // --- warnings ---
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

    return render(
        spec,
        mode,
        limit,
        heap,
        direct,
        overhead,
        pageCache,
        l1Fraction,
        memstore,
        l2,
        volume,
        tuning,
        line,
        baseSite,
        masterVersion,
        warnings);
  }

  private static Plan render(
      BlockCachePolicySpec spec,
      CacheMode mode,
      long limit,
      long heap,
      long direct,
      long overhead,
      long pageCache,
      double l1Fraction,
      double memstore,
      long l2,
      Plan.CacheVolume volume,
      TuningSpec tuning,
      HBaseLine line,
      Map<String, String> baseSite,
      String masterVersion,
      List<String> warnings) {
    Map<String, String> rs = new TreeMap<>();
    rs.put("hfile.block.cache.size", trim(l1Fraction));
    rs.put("hbase.regionserver.global.memstore.size", trim(memstore));
    // A restarted RegionServer's first load report comes one interval after it registers, and the
    // roll sends its regions back only then (HBase's 3 s default: measured as 1-2 s of each
    // restart's delete -> regions home).
    rs.put(
        "hbase.regionserver.msginterval",
        Long.toString(orDefault(tuning.getLoadReportIntervalMillis(), LOAD_REPORT_INTERVAL_MS)));
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
      rs.put("hbase.bucketcache.size", Long.toString(l2 / MiB));
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
            Long.toString(orDefault(tuning.getPersistIntervalMillis(), 1000L)));
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

    Map<String, String> master = new TreeMap<>();
    if (mode.isPersistent() && spec.getMasterRef() != null) {
      MasterSite.Keys keys =
          MasterSite.persistentFile(
              MasterSite.line(spec, masterVersion),
              persistentPath,
              baseSite == null ? Map.of() : baseSite);
      master.putAll(keys.site());
      warnings = new ArrayList<>(warnings);
      warnings.addAll(keys.warnings());
    }

    JvmSpec jvm = spec.getJvm() == null ? new JvmSpec() : spec.getJvm();
    List<String> opts = new ArrayList<>();
    opts.add(
        jvm.getGc() == JvmSpec.Gc.ZGC
            ? "-XX:+UseZGC"
            : "-XX:+UseG1GC -XX:MaxGCPauseMillis=100 -XX:+ParallelRefProcEnabled");
    opts.add("-XX:+ExitOnOutOfMemoryError");
    opts.add(DNS_TTL);
    if (jvm.getExtraOptions() != null) {
      opts.addAll(jvm.getExtraOptions());
    }
    String jvmOptions = String.join(" ", opts);

    Map<String, String> env = new LinkedHashMap<>();
    env.put(Plan.ENV_HEAP, heap / MiB + "m");
    env.put(Plan.ENV_OFFHEAP, direct / MiB + "m");
    env.put(Plan.ENV_OPTS, jvmOptions);

    long memstoreBytes = (long) (heap * memstore);
    long grace = 60 + memstoreBytes / (50 * MiB) + (mode.isPersistent() ? l2 / GiB : 0);
    grace = Sizes.clamp(grace, 120, 3600);

    String hash = hash(env, rs, removed, volume);
    return new Plan(
        mode,
        limit,
        heap,
        direct,
        overhead,
        pageCache,
        Sizes.floorMiB((long) (heap * l1Fraction)),
        l2,
        ioEngine,
        cacheFile,
        persistentPath,
        volume,
        jvmOptions,
        Collections.unmodifiableMap(env),
        Collections.unmodifiableMap(rs),
        Collections.unmodifiableSet(removed),
        Collections.unmodifiableMap(master),
        grace,
        hash,
        List.copyOf(warnings));
  }

  /**
   * Why rolling from {@code previous} to {@code next} throws away persisted caches: HBase refuses
   * to restore a cache map written for another capacity, engine or bucket layout.
   *
   * @param previous the RegionServer hbase-site keys of the plan in force (status.plan), or null
   * @return empty when the caches survive (or there is no persisted cache to lose)
   */
  public static List<String> cacheResetReasons(Map<String, String> previous, Plan next) {
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

  /**
   * Rules the CRD's CEL also enforces; repeated here so `plan` refuses offline what the API server
   * would.
   */
  private static void checkCrossFieldRules(
      BlockCachePolicySpec spec,
      CacheMode mode,
      MemorySpec mem,
      StorageSpec storage,
      TuningSpec tuning,
      JvmOptions.Trust jvmTrust,
      List<String> reasons) {
    if (spec.getTargetRef() == null || spec.getTargetRef().getName() == null) {
      reasons.add("spec.targetRef.name is required: the RegionServer StatefulSet to manage");
    }
    if (spec.getHbaseSiteConfigMap() == null) {
      reasons.add(
          "spec.hbaseSiteConfigMap is required: the ConfigMap holding the base hbase-site.xml");
    }
    if (storage != null && !mode.isFile()) {
      reasons.add(
          "storage applies only to modes with a cache file (File, PersistentFile): mode "
              + mode
              + " keeps no cache on disk; remove storage or change mode");
    }
    if (storage != null
        && storage.getMedium() != null
        && !storage.getMedium().isEmpty()
        && !StorageSpec.MEDIUM_MEMORY.equals(storage.getMedium())) {
      reasons.add("storage.medium must be \"\" (a PVC) or \"Memory\" (tmpfs, File mode only)");
    }
    if (storage != null
        && StorageSpec.MEDIUM_MEMORY.equals(storage.getMedium())
        && mode != CacheMode.File) {
      reasons.add(
          "storage.medium Memory (tmpfs) is allowed only in File mode: a tmpfs cache does not"
              + " survive a restart, so PersistentFile needs a disk-backed volume");
    }
    if (storage != null && storage.getMountPath() != null) {
      String p = storage.getMountPath();
      if (!p.startsWith("/")
          || p.equals("/")
          || p.contains("/../")
          || p.endsWith("/..")
          || p.contains("//")
          || p.contains("/./")
          || p.endsWith("/.")) {
        reasons.add(
            "storage.mountPath must be an absolute path other than / without '..', '.' or '//',"
                + " got \""
                + p
                + "\"");
      }
      if (!p.matches("^[A-Za-z0-9_./-]+$")) {
        reasons.add(
            "storage.mountPath may hold letters, digits and _ . / - only (HBase splits its"
                + " persistence path list on commas), got \""
                + p
                + "\"");
      }
      for (String d : SYSTEM_DIRS) {
        if (p.equals(d) || p.startsWith(d + "/")) {
          reasons.add(
              "storage.mountPath must not be or lie under a system directory, got \""
                  + p
                  + "\" (under "
                  + d
                  + ")");
        }
      }
    }
    if (mem.getBucketCache() != null && !mode.hasL2()) {
      reasons.add(
          "memory.bucketCache is the L2 BucketCache size, which exists only in Offheap, File and"
              + " PersistentFile modes; remove it for "
              + mode);
    }
    if (mode.isFile()
        && mem.getBucketCache() == null
        && (storage == null || storage.getSize() == null)
        && (storage == null || !StorageSpec.MEDIUM_MEMORY.equals(storage.getMedium()))) {
      reasons.add(
          "mode "
              + mode
              + " needs the L2 size: set memory.bucketCache, or storage.size and the cache is sized"
              + " to fit the volume (with storage.medium Memory it is sized from the memory limit)");
    }
    if (!mode.hasL2()
        && (tuning.getBucketSizes() != null
            || tuning.getWriterThreads() != null
            || tuning.getWriterQueueLength() != null
            || tuning.getCacheDataCompressed() != null)) {
      reasons.add(
          "tuning.bucketSizes, writerThreads, writerQueueLength and cacheDataCompressed tune the L2"
              + " BucketCache, which mode "
              + mode
              + " does not have");
    }
    if (tuning.getPersistIntervalMillis() != null && !mode.isPersistent()) {
      reasons.add("tuning.persistIntervalMillis applies only to PersistentFile mode");
    }
    if (tuning.getBucketSizes() != null) {
      List<Long> b = tuning.getBucketSizes();
      if (b.isEmpty() || b.stream().anyMatch(s -> s == null || s < 256 || s % 256 != 0)) {
        reasons.add(
            "tuning.bucketSizes: each size must be a positive multiple of 256 bytes, got " + b);
      } else {
        for (int i = 1; i < b.size(); i++) {
          if (b.get(i) <= b.get(i - 1)) {
            reasons.add(
                "tuning.bucketSizes must be strictly ascending, without duplicates, got " + b);
            break;
          }
        }
      }
    }
    if (spec.getJvm() != null && spec.getJvm().getExtraOptions() != null) {
      for (String o : spec.getJvm().getExtraOptions()) {
        JvmOptions.refusal(o, jvmTrust).ifPresent(why -> reasons.add("jvm.extraOptions: " + why));
      }
    }
    if (mem.getBlockCacheFraction() != null
        && (mem.getBlockCacheFraction() < 0.01 || mem.getBlockCacheFraction() > 0.8)) {
      reasons.add(
          "memory.blockCacheFraction must be between 0.01 and 0.8, got "
              + trim(mem.getBlockCacheFraction()));
    }
    if (mem.getMemstoreFraction() != null
        && (mem.getMemstoreFraction() < 0.05 || mem.getMemstoreFraction() > 0.8)) {
      reasons.add(
          "memory.memstoreFraction must be between 0.05 and 0.8, got "
              + trim(mem.getMemstoreFraction()));
    }
  }

  private static Long bytes(
      io.fabric8.kubernetes.api.model.Quantity q, String field, List<String> reasons) {
    try {
      return Sizes.bytes(q);
    } catch (RuntimeException e) {
      reasons.add(field + " must be a quantity like 4Gi or 512Mi, got \"" + q + "\"");
      return null;
    }
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

  static long pvcBuffer(long l2) {
    return Math.max(MIN_PVC_BUFFER, (long) (l2 * PVC_BUFFER_SHARE));
  }

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

  private static void putIfSet(Map<String, String> m, String key, Object value) {
    if (value != null) {
      m.put(key, value.toString());
    }
  }

  private static <T> T orDefault(T value, T fallback) {
    return value != null ? value : fallback;
  }

  /** 0.4 not 0.4000000001; two decimals are all HBase reads meaningfully. */
  static String trim(double v) {
    String s = String.format(java.util.Locale.ROOT, "%.4f", v);
    s = s.replaceAll("0+$", "");
    return s.endsWith(".") ? s + "0" : s;
  }

  static String hash(
      Map<String, String> env,
      Map<String, String> rs,
      Set<String> removed,
      Plan.CacheVolume volume) {
    StringBuilder b = new StringBuilder();
    new TreeMap<>(env)
        .forEach((k, v) -> b.append("env:").append(k).append('=').append(v).append('\n'));
    rs.forEach((k, v) -> b.append("rs:").append(k).append('=').append(v).append('\n'));
    removed.forEach(k -> b.append("rm:").append(k).append('\n'));
    if (volume != null) {
      b.append("vol:")
          .append(volume.mountPath())
          .append(volume.memory() ? ":tmpfs" : ":pvc")
          .append('\n');
    }
    try {
      byte[] d =
          MessageDigest.getInstance("SHA-256")
              .digest(b.toString().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
