package dev.hbase.cache.operator.plan;

import static dev.hbase.cache.operator.plan.Sizes.GiB;
import static dev.hbase.cache.operator.plan.Sizes.MiB;
import static dev.hbase.cache.operator.plan.Sizes.human;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.StorageSpec;
import java.util.List;

/**
 * The cache volume of a file mode, for the {@link Planner}: where it is mounted, whether it is a
 * PVC or tmpfs, and how large, with what is refused of the size the policy gives. Pure.
 *
 * <p>A PVC holds the L2 and, beside it, the persistence map and the filesystem's metadata ({@link
 * #pvcBuffer}); a tmpfs holds the L2 and a small margin ({@link #TMPFS_BUFFER}). The same buffers
 * run the other way in {@link MemoryBudget#of}, where an L2 without memory.bucketCache is what
 * storage.size leaves after them.
 */
final class CacheVolumes {
  private CacheVolumes() {}

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

  /**
   * The volume of a file mode, or null for the modes without a cache file.
   *
   * @param storage the policy's storage section, or null
   * @param storageSize storage.size in bytes, or null
   * @param l2 the L2 capacity the budget gives ({@link MemoryBudget#l2})
   * @param tmpfs storage.medium Memory
   * @param reasons where a storage.size that cannot be used is refused
   */
  static Plan.CacheVolume of(
      CacheMode mode,
      StorageSpec storage,
      Long storageSize,
      long l2,
      boolean tmpfs,
      List<String> reasons) {
    if (!mode.isFile()) {
      return null;
    }
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
    return new Plan.CacheVolume(
        mountPath, tmpfs, size, storage == null ? null : storage.getStorageClassName());
  }

  /** What a PVC holds besides an L2 of {@code l2} bytes: the persistence map, the filesystem. */
  static long pvcBuffer(long l2) {
    return Math.max(MIN_PVC_BUFFER, (long) (l2 * PVC_BUFFER_SHARE));
  }
}
