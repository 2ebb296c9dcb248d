package dev.hbase.cache.operator.plan;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.status.PlanStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The settings for one policy and one memory limit: JVM sizes, environment, hbase-site keys and the
 * cache volume. Produced only by {@link Planner}; immutable.
 *
 * @param heap -Xmx in bytes
 * @param directMemory -XX:MaxDirectMemorySize in bytes (off-heap L2 included in Offheap mode)
 * @param overhead JVM native memory budgeted outside heap and direct memory
 * @param pageCacheHeadroom memory left to the page cache (file engines on disk)
 * @param l1 on-heap block cache bytes (hfile.block.cache.size x heap)
 * @param bucketCache L2 capacity in bytes, 0 without an L2
 * @param ioEngine hbase.bucketcache.ioengine, null without an L2
 * @param cacheFile the L2 data file (file engines), else null
 * @param persistentPath hbase.bucketcache.persistent.path, null unless persistent
 * @param volume the cache volume (file engines), else null
 * @param env variables set on the RegionServer container
 * @param regionServerSite hbase-site keys the operator sets on RegionServers
 * @param regionServerSiteRemoved keys removed from the base hbase-site (they would contradict the
 *     mode, e.g. an ioengine left in the base config of an Lru policy)
 * @param masterSite hbase-site keys for the HMaster (empty when the mode needs none)
 * @param terminationGracePeriodSeconds long enough for region close and persisting the cache map
 * @param configHash stable hash of everything that needs a RegionServer restart to take effect
 * @param warnings advice that does not block the plan
 */
public record Plan(
    CacheMode mode,
    long memoryLimit,
    long heap,
    long directMemory,
    long overhead,
    long pageCacheHeadroom,
    long l1,
    long bucketCache,
    String ioEngine,
    String cacheFile,
    String persistentPath,
    CacheVolume volume,
    String jvmOptions,
    Map<String, String> env,
    Map<String, String> regionServerSite,
    Set<String> regionServerSiteRemoved,
    Map<String, String> masterSite,
    long terminationGracePeriodSeconds,
    String configHash,
    List<String> warnings)
    implements PlanResult {

  /**
   * The cache volume of a file mode.
   *
   * @param mountPath where it is mounted in the RegionServer container
   * @param memory tmpfs (emptyDir medium Memory) rather than a PVC
   * @param size PVC request, or the emptyDir sizeLimit for tmpfs
   * @param storageClassName null for the cluster default
   */
  public record CacheVolume(String mountPath, boolean memory, long size, String storageClassName) {}

  public static final String ENV_HEAP = "HBASE_HEAPSIZE";
  public static final String ENV_OFFHEAP = "HBASE_OFFHEAPSIZE";
  public static final String ENV_OPTS = "HBASE_REGIONSERVER_OPTS";

  /** PVC size, 0 when there is no PVC (no L2 file, or tmpfs). */
  public long pvcSize() {
    return volume == null || volume.memory() ? 0 : volume.size();
  }

  /** The plan as status.plan shows it. */
  public PlanStatus toStatus() {
    return new PlanStatus()
        .setMode(mode.name())
        .setMemoryLimit(Sizes.quantity(memoryLimit))
        .setHeap(Sizes.quantity(heap))
        .setDirectMemory(Sizes.quantity(directMemory))
        .setL1Size(Sizes.quantity(l1))
        .setBucketCacheSize(bucketCache == 0 ? null : Sizes.quantity(bucketCache))
        .setIoEngine(ioEngine)
        .setPersistentPath(persistentPath)
        .setPvcSize(pvcSize() == 0 ? null : Sizes.quantity(pvcSize()))
        .setJvmOptions(jvmOptions)
        .setConfigHash(configHash)
        .setRegionServerSite(regionServerSite)
        .setMasterSite(masterSite.isEmpty() ? null : masterSite)
        .setWarnings(warnings.isEmpty() ? null : warnings);
  }

  /** What the {@code plan} command prints, in a fixed order. */
  public Map<String, Object> toDocument() {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("mode", mode.name());
    d.put("memoryLimit", Sizes.quantity(memoryLimit));
    d.put("heap", Sizes.quantity(heap));
    d.put("directMemory", Sizes.quantity(directMemory));
    d.put("overhead", Sizes.quantity(overhead));
    if (pageCacheHeadroom > 0) {
      d.put("pageCacheHeadroom", Sizes.quantity(pageCacheHeadroom));
    }
    d.put("l1Size", Sizes.quantity(l1));
    d.put("bucketCacheSize", Sizes.quantity(bucketCache));
    if (ioEngine != null) {
      d.put("ioEngine", ioEngine);
    }
    if (persistentPath != null) {
      d.put("persistentPath", persistentPath);
    }
    d.put("pvcSize", Sizes.quantity(pvcSize()));
    if (volume != null && volume.memory()) {
      d.put("tmpfsSizeLimit", Sizes.quantity(volume.size()));
    }
    d.put("terminationGracePeriodSeconds", terminationGracePeriodSeconds);
    d.put("configHash", configHash);
    d.put("env", env);
    d.put("regionServerSite", regionServerSite);
    if (!regionServerSiteRemoved.isEmpty()) {
      d.put("regionServerSiteRemoved", List.copyOf(regionServerSiteRemoved));
    }
    d.put("masterSite", masterSite);
    if (!warnings.isEmpty()) {
      d.put("warnings", warnings);
    }
    return d;
  }
}
