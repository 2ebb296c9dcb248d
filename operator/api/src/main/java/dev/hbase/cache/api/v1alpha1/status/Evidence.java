package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * What the RegionServers' caches did over a window, summed over the servers: the evidence of a
 * {@link Recommendation}. Counts come from each server's /jmx counter deltas between the operator's
 * samples (restarts and unready pods leave gaps, never double counts).
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Evidence {
  @JsonPropertyDescription("Start of the window (RFC 3339).")
  private String from;

  @JsonPropertyDescription("The last sample in the window (RFC 3339).")
  private String to;

  @JsonPropertyDescription("Data-block reads (a cold read counted once).")
  private Long dataReads;

  @JsonPropertyDescription("Of dataReads, the reads served from the cache.")
  private Long cachedReads;

  @JsonPropertyDescription("cachedReads / dataReads.")
  private Double dataHitRatio;

  @JsonPropertyDescription("Blocks evicted from the caches.")
  private Long evictions;

  @JsonPropertyDescription("Blocks not cached because the BucketCache writer queues were full.")
  private Long failedInsertions;

  @JsonPropertyDescription("Milliseconds the RegionServer JVMs spent in garbage collection.")
  private Long gcMillis;

  @JsonPropertyDescription("Milliseconds of RegionServer time observed (sum over servers).")
  private Long observedMillis;

  @JsonPropertyDescription("gcMillis / observedMillis: the share of time spent in GC.")
  private Double gcTimeFraction;

  @JsonPropertyDescription("L1 (on-heap LRU) capacity per RegionServer, bytes.")
  private Long l1CapacityBytes;

  @JsonPropertyDescription("The fullest RegionServer's L1 used / capacity at its last sample.")
  private Double l1UsedFraction;

  @JsonPropertyDescription("L2 (BucketCache) capacity per RegionServer, bytes; 0 without an L2.")
  private Long l2CapacityBytes;

  @JsonPropertyDescription("The fullest RegionServer's L2 used / capacity at its last sample.")
  private Double l2UsedFraction;

  @JsonPropertyDescription(
      "Estimated working set per RegionServer, bytes: the cache in use / the hit ratio when the"
          + " cache is full and evicting (uniform access; skewed access needs less), else what"
          + " is cached.")
  private Long workingSetBytes;
}
