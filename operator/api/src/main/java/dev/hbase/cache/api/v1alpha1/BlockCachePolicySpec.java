package dev.hbase.cache.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.hbase.cache.api.v1alpha1.spec.AutoTuneSpec;
import dev.hbase.cache.api.v1alpha1.spec.HBaseSpec;
import dev.hbase.cache.api.v1alpha1.spec.JvmSpec;
import dev.hbase.cache.api.v1alpha1.spec.MasterRef;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.spec.MetricsSpec;
import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.spec.StorageSpec;
import dev.hbase.cache.api.v1alpha1.spec.TargetRef;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * What the user asks for. Cross-field rules live here as CEL so the API server refuses bad input;
 * the planner checks the same rules (and those that need the pod's memory limit) so the {@code
 * plan} command refuses the same input offline.
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "!has(self.storage) || self.mode == 'File' || self.mode == 'PersistentFile'",
    message =
        "storage applies only to modes with a cache file (File, PersistentFile): Lru, Offheap and"
            + " MetaOnly keep no cache on disk; remove storage or change mode",
    fieldPath = ".storage")
@ValidationRule(
    value =
        "!has(self.storage) || !has(self.storage.medium) || self.storage.medium != 'Memory'"
            + " || self.mode == 'File'",
    message =
        "storage.medium Memory (tmpfs) is allowed only in File mode: a tmpfs cache does not"
            + " survive a restart, so PersistentFile needs a disk-backed volume (medium \"\")",
    fieldPath = ".storage.medium")
@ValidationRule(
    value =
        "!has(self.memory) || !has(self.memory.bucketCache) || self.mode == 'Offheap'"
            + " || self.mode == 'File' || self.mode == 'PersistentFile'",
    message =
        "memory.bucketCache is the L2 BucketCache size, which exists only in Offheap, File and"
            + " PersistentFile modes; remove it for Lru and MetaOnly",
    fieldPath = ".memory.bucketCache")
@ValidationRule(
    value =
        "!(self.mode == 'File' || self.mode == 'PersistentFile')"
            + " || (has(self.memory) && has(self.memory.bucketCache))"
            + " || (has(self.storage) && has(self.storage.size))"
            + " || (has(self.storage) && has(self.storage.medium) && self.storage.medium == 'Memory')",
    message =
        "File and PersistentFile modes need the L2 size: set memory.bucketCache, or storage.size"
            + " and the cache is sized to fit the volume (with storage.medium Memory it is sized"
            + " from the memory limit)")
@ValidationRule(
    value =
        "!has(self.tuning) || self.mode == 'Offheap' || self.mode == 'File'"
            + " || self.mode == 'PersistentFile'"
            + " || (!has(self.tuning.bucketSizes) && !has(self.tuning.writerThreads)"
            + " && !has(self.tuning.writerQueueLength) && !has(self.tuning.cacheDataCompressed))",
    message =
        "tuning.bucketSizes, writerThreads, writerQueueLength and cacheDataCompressed tune the L2"
            + " BucketCache, which exists only in Offheap, File and PersistentFile modes",
    fieldPath = ".tuning")
@ValidationRule(
    value =
        "!has(self.tuning) || !has(self.tuning.persistIntervalMillis)"
            + " || self.mode == 'PersistentFile'",
    message =
        "tuning.persistIntervalMillis applies only to PersistentFile mode (the interval at which"
            + " the cache map is checkpointed)",
    fieldPath = ".tuning.persistIntervalMillis")
public class BlockCachePolicySpec {

  @Required
  // A policy moved to another StatefulSet would leave the first one with the operator's update
  // strategy, config and cache volume, and roll the second without a plan of its own.
  @ValidationRule(
      value = "self == oldSelf",
      message =
          "targetRef is immutable: delete this policy (its StatefulSet, pods and PVCs stay) and"
              + " create one for the other StatefulSet")
  @JsonPropertyDescription("The RegionServer StatefulSet in the policy's namespace. Immutable.")
  private TargetRef targetRef;

  @JsonPropertyDescription(
      "The HMaster StatefulSet or Deployment; gets the master-side keys (CacheAwareLoadBalancer,"
          + " persistence path).")
  private MasterRef masterRef;

  @Required
  @Pattern(TargetRef.DNS1123_SUBDOMAIN)
  @JsonPropertyDescription(
      "The ConfigMap holding the base hbase-site.xml that the operator overlays with the cache"
          + " settings.")
  private String hbaseSiteConfigMap;

  // A string in the schema, checked by CEL: an enum would refuse "Heap" before CEL could explain.
  @Required
  @SchemaFrom(type = String.class)
  @ValidationRule(value = "self != 'Heap'", message = CacheMode.HEAP_REMOVED)
  @ValidationRule(
      value = "self == 'Heap' || self in ['Lru', 'Offheap', 'File', 'PersistentFile', 'MetaOnly']",
      message = "mode must be one of " + CacheMode.ALLOWED)
  @JsonPropertyDescription(
      "Lru | Offheap | File | PersistentFile | MetaOnly. Heap (the on-heap BucketCache) no longer"
          + " exists in HBase 2.x.")
  private CacheMode mode;

  @JsonPropertyDescription(
      "Memory split of the RegionServer container: heap, direct memory, L1 and L2 sizes. All"
          + " optional; the planner derives what is not set from the container's memory limit.")
  private MemorySpec memory;

  @JsonPropertyDescription(
      "The cache volume of the File and PersistentFile modes: a PVC per RegionServer (size,"
          + " StorageClass, medium, mount path).")
  private StorageSpec storage;

  @JsonPropertyDescription(
      "BucketCache tuning: bucket sizes, writer threads and queue, compressed caching, prefetch"
          + " on open, persistence interval.")
  private TuningSpec tuning;

  @JsonPropertyDescription("The RegionServer JVM: garbage collector and extra options.")
  private JvmSpec jvm;

  @JsonPropertyDescription(
      "How the operator restarts RegionServers: strategy, maxUnavailable, paused, podReadyTimeout,"
          + " the warm gate and the PodDisruptionBudget.")
  private RolloutSpec rollout;

  @JsonPropertyDescription(
      "How the operator reaches HBase (ZooKeeper quorum, znode parent, info port). Unset: read"
          + " from the base hbase-site.xml.")
  private HBaseSpec hbase;

  @JsonPropertyDescription("How often the operator samples the RegionServers' cache metrics.")
  private MetricsSpec metrics;

  @JsonPropertyDescription(
      "Sizing advice from the observed caches, in status.recommendation. mode Recommend (the"
          + " default): advice only, you edit the spec to follow it. Apply: the operator writes"
          + " advice that differs into the spec itself once the roll is idle. Off: no advice.")
  private AutoTuneSpec autoTune;
}
