package dev.hbase.cache.operator.plan;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.spec.StorageSpec;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.List;

/**
 * What a policy must satisfy on its own, before the {@link Planner} does any arithmetic: the fields
 * that go together, the paths, the bucket sizes, the heap shares, the JVM options ({@link
 * JvmOptions}) and the sizes written as quantities. Pure.
 *
 * <p>The CRD's schema and CEL enforce the same rules, but for the allow-list of JVM options, which
 * depends on the operator's install: they are repeated here so that {@code plan} refuses offline
 * what the API server would. The rules that need the memory limit are the budget's ({@link
 * MemoryBudget#refusals}) and the volume's ({@link CacheVolumes#of}).
 */
final class PolicyRules {
  private PolicyRules() {}

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

  /**
   * Adds a reason for each rule the policy breaks, in a fixed order.
   *
   * @param jvmTrust which jvm.extraOptions the operator's install allows ({@link JvmOptions})
   */
  static void check(
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
              + MemoryBudget.fraction(mem.getBlockCacheFraction()));
    }
    if (mem.getMemstoreFraction() != null
        && (mem.getMemstoreFraction() < 0.05 || mem.getMemstoreFraction() > 0.8)) {
      reasons.add(
          "memory.memstoreFraction must be between 0.05 and 0.8, got "
              + MemoryBudget.fraction(mem.getMemstoreFraction()));
    }
  }

  /**
   * The bytes of a size the policy gives, or null: null when it is not set, and null with a reason
   * when it is not a quantity.
   *
   * @param field the field's path, for the reason (memory.heap, storage.size)
   */
  static Long bytes(Quantity q, String field, List<String> reasons) {
    try {
      return Sizes.bytes(q);
    } catch (RuntimeException e) {
      reasons.add(field + " must be a quantity like 4Gi or 512Mi, got \"" + q + "\"");
      return null;
    }
  }
}
