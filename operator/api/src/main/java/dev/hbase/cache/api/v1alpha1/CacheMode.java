package dev.hbase.cache.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonCreator;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The deploy variants HBase users compare.
 *
 * <ul>
 *   <li>{@code Lru}: on-heap LruBlockCache only (data fits the heap).
 *   <li>{@code Offheap}: CombinedBlockCache, L1 on heap for index/bloom, L2 off-heap BucketCache.
 *   <li>{@code File}: L2 BucketCache in a file (PVC or tmpfs); lost on restart.
 *   <li>{@code PersistentFile}: file L2 whose map is persisted and reloaded across restarts.
 *   <li>{@code MetaOnly}: no L2, data blocks not cached (baseline).
 * </ul>
 */
public enum CacheMode {
  Lru,
  Offheap,
  File,
  PersistentFile,
  MetaOnly;

  public static final String HEAP_REMOVED =
      "mode Heap is not supported: the on-heap BucketCache (hbase.bucketcache.ioengine=heap) no"
          + " longer exists in HBase 2.x; use Offheap (CombinedBlockCache with an off-heap L2)"
          + " or Lru";

  public static final String ALLOWED = "Lru, Offheap, File, PersistentFile, MetaOnly";

  /** Modes whose BucketCache (L2) exists. */
  public boolean hasL2() {
    return this == Offheap || this == File || this == PersistentFile;
  }

  /** Modes whose L2 lives in a file on the cache volume. */
  public boolean isFile() {
    return this == File || this == PersistentFile;
  }

  public boolean isPersistent() {
    return this == PersistentFile;
  }

  /** Parses a mode; refuses {@code Heap} with the reason, and unknown names with the list. */
  @JsonCreator
  public static CacheMode parse(String name) {
    if ("Heap".equalsIgnoreCase(name)) {
      throw new IllegalArgumentException(HEAP_REMOVED);
    }
    return Arrays.stream(values())
        .filter(m -> m.name().equals(name))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "unknown mode \""
                        + name
                        + "\": allowed are "
                        + Arrays.stream(values())
                            .map(Enum::name)
                            .collect(Collectors.joining(", "))));
  }
}
