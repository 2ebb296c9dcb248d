package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import lombok.Data;
import lombok.experimental.Accessors;

/** Aggregate over all RegionServers. Ratios are over the last interval; cumulative beside them. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CacheStatus {
  /** Data-block hit ratio over the last interval (the headline). */
  private Double hitRatio;

  private Double l1HitRatio;
  private Double l2HitRatio;

  /** Data-block hit ratio since each RegionServer started. */
  private Double cumulativeHitRatio;

  private Long sizeBytes;
  private Long usedBytes;
  private Long evictions;

  /** Blocks not cached because the BucketCache writer queues were full. */
  private Long failedInsertions;

  private String sampledAt;
}
