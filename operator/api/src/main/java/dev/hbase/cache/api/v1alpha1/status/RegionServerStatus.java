package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import lombok.Data;
import lombok.experimental.Accessors;

@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RegionServerStatus {
  private String pod;
  private Boolean ready;
  private String configHash;
  private Double hitRatio;
  private Double l1HitRatio;
  private Double l2HitRatio;
  private Double cumulativeHitRatio;
  private Long l2UsedBytes;

  /** Blocks evicted from the caches since the RegionServer started (its own counter). */
  private Long evictions;

  /** Blocks the L2 writer queues dropped since the RegionServer started (its own counter). */
  private Long failedInsertions;

  private String restartedAt;

  /** L2 used bytes after the last operator restart / before it. */
  private Double retainedFraction;
}
