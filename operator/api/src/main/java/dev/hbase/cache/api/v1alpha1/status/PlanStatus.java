package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;
import java.util.Map;
import lombok.Data;
import lombok.experimental.Accessors;

/** The plan in force: what the planner produced for the current spec and memory limit. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PlanStatus {
  @JsonPropertyDescription("The cache mode planned (spec.mode).")
  private String mode;

  /** The RegionServer container's memory limit this plan was made for. */
  @JsonPropertyDescription(
      "The RegionServer container's memory limit this plan was made for (a quantity).")
  private String memoryLimit;

  @JsonPropertyDescription("JVM heap, -Xmx (a quantity).")
  private String heap;

  @JsonPropertyDescription(
      "JVM direct memory, -XX:MaxDirectMemorySize (a quantity); includes an off-heap L2 in"
          + " Offheap mode.")
  private String directMemory;

  @JsonPropertyDescription(
      "On-heap block cache (L1): hfile.block.cache.size x the heap (a quantity).")
  private String l1Size;

  @JsonPropertyDescription("L2 BucketCache capacity (a quantity). Absent without an L2.")
  private String bucketCacheSize;

  @JsonPropertyDescription(
      "hbase.bucketcache.ioengine: offheap, or file: and the cache file. Absent without an L2.")
  private String ioEngine;

  @JsonPropertyDescription(
      "hbase.bucketcache.persistent.path: where the cache map is persisted. PersistentFile only.")
  private String persistentPath;

  @JsonPropertyDescription(
      "Size of each RegionServer's cache PVC (a quantity). Absent without a PVC (no file L2, or"
          + " tmpfs).")
  private String pvcSize;

  @JsonPropertyDescription(
      "The RegionServer's JVM options (HBASE_REGIONSERVER_OPTS; the heap is set apart): the"
          + " collector's flags, the OOM exit, the DNS cache TTL and jvm.extraOptions.")
  private String jvmOptions;

  @JsonPropertyDescription(
      "Hash of everything in the plan that needs a RegionServer restart to take effect.")
  private String configHash;

  @JsonPropertyDescription(
      "The hbase-site keys the operator sets on the RegionServers over the base hbase-site.xml.")
  private Map<String, String> regionServerSite;

  @JsonPropertyDescription(
      "The hbase-site keys for the HMaster (spec.masterRef). Absent when the mode needs none.")
  private Map<String, String> masterSite;

  @JsonPropertyDescription("Advice about the plan that does not block it.")
  private List<String> warnings;
}
