package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import lombok.Data;
import lombok.experimental.Accessors;

/** Aggregate over all RegionServers. Ratios are over the last interval; cumulative beside them. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CacheStatus {
  /** Data-block hit ratio over the last interval (the headline). */
  @JsonPropertyDescription(
      "Share of the data-block reads served from cache (0-1) over the last metrics interval, all"
          + " Ready RegionServers (a cold read counted once). Index and bloom blocks are left out.")
  private Double hitRatio;

  @JsonPropertyDescription(
      "L1 (on-heap LRU) hits / lookups over the last interval, all block types, as HBase counts"
          + " them. Absent without lookups.")
  private Double l1HitRatio;

  @JsonPropertyDescription(
      "L2 (BucketCache) hits / lookups over the last interval, as HBase counts them. Absent"
          + " without lookups (no L2).")
  private Double l2HitRatio;

  /** Data-block hit ratio since each RegionServer started. */
  @JsonPropertyDescription("Data-block hit ratio (0-1) since each RegionServer started.")
  private Double cumulativeHitRatio;

  @JsonPropertyDescription("Cache capacity, L1 plus L2, summed over the RegionServers, in bytes.")
  private Long sizeBytes;

  @JsonPropertyDescription("Bytes in use in L1 and L2, summed over the RegionServers.")
  private Long usedBytes;

  @JsonPropertyDescription("Blocks evicted since each RegionServer started, summed.")
  private Long evictions;

  /** Blocks not cached because the BucketCache writer queues were full. */
  @JsonPropertyDescription(
      "Blocks not cached because the BucketCache writer queues were full, since each"
          + " RegionServer started, summed.")
  private Long failedInsertions;

  @JsonPropertyDescription(
      "When these figures were sampled (RFC 3339); a sample with the same figures keeps it.")
  private String sampledAt;
}
