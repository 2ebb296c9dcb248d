package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import lombok.Data;
import lombok.experimental.Accessors;

@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RegionServerStatus {
  @JsonPropertyDescription("The RegionServer pod.")
  private String pod;

  @JsonPropertyDescription("Whether the pod is Ready.")
  private Boolean ready;

  @JsonPropertyDescription(
      "The revision the pod runs (its cache.hbase.dev/config-hash annotation); up to date when it"
          + " equals status.rollout.revision.")
  private String configHash;

  @JsonPropertyDescription(
      "Share of its data-block reads served from cache (0-1) over the last metrics interval (a"
          + " cold read counted once).")
  private Double hitRatio;

  @JsonPropertyDescription(
      "Its L1 (on-heap LRU) hits / lookups over the last interval, as HBase counts them.")
  private Double l1HitRatio;

  @JsonPropertyDescription(
      "Its L2 (BucketCache) hits / lookups over the last interval, as HBase counts them.")
  private Double l2HitRatio;

  @JsonPropertyDescription("Its data-block hit ratio (0-1) since the RegionServer started.")
  private Double cumulativeHitRatio;

  @JsonPropertyDescription(
      "Regions it serves, as its /jmx said at the last sample (HBase refreshes the figure every 5"
          + " s). The Balanced condition compares them.")
  private Integer regions;

  @JsonPropertyDescription("L2 bytes in use. Absent without an L2.")
  private Long l2UsedBytes;

  @JsonPropertyDescription(
      "Blocks evicted from the RegionServer's block caches since it started (its own counter; it"
          + " restarts at 0 with the RegionServer).")
  private Long evictions;

  @JsonPropertyDescription(
      "Blocks not cached because the BucketCache writer queues were full, since the RegionServer"
          + " started.")
  private Long failedInsertions;

  @JsonPropertyDescription(
      "When the pod's last restart by the operator came back: its new RegionServer registered"
          + " (RFC 3339).")
  private String restartedAt;

  @JsonPropertyDescription(
      "What the cache-map-guard removed before the pod's RegionServer read its BucketCache"
          + " persistence map, as it last reported for this pod: a map HBase 2.6.4 would die on or"
          + " drop at start. The RegionServer then started with an empty L2. Absent when the guard"
          + " kept the map.")
  private CacheMapRemoval cacheMapRemoved;

  /** A removal by the cache-map-guard. */
  @Data
  @Accessors(chain = true)
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class CacheMapRemoval {
    @JsonPropertyDescription(
        "Why: EmptyCacheMapRemoved (no cached block), TruncatedCacheMapRemoved (it ends before the"
            + " chunks its header counts), UnreadableCacheMapRemoved (no map at all, zero-filled"
            + " say).")
    private String reason;

    @JsonPropertyDescription(
        "When (RFC 3339): the end of the guard's init container, or the start of the RegionServer"
            + " container whose postStart hook removed it.")
    private String at;

    @JsonPropertyDescription("The guard's message: the file, its size and what was wrong.")
    private String message;
  }

  /** L2 used bytes after the last operator restart / before it. */
  @JsonPropertyDescription(
      "L2 bytes in use after the operator's last restart of the pod / before it (0-1), when the"
          + " warm gate let it pass. Absent when there was nothing to retain or it is unknown.")
  private Double retainedFraction;
}
