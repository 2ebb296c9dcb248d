package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Quantity;
import lombok.Data;
import lombok.experimental.Accessors;

/** Memory split of the RegionServer container. Everything is optional; the planner fills gaps. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value =
        "!has(self.blockCacheFraction) || !has(self.memstoreFraction)"
            + " || self.blockCacheFraction + self.memstoreFraction <= 0.8000001",
    message =
        "memory.blockCacheFraction + memory.memstoreFraction must be at most 0.8: HBase keeps 20%"
            + " of the heap free and refuses to start otherwise")
public class MemorySpec {
  @ValidationRule(
      value =
          "isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('512Mi')) >= 0",
      message = "memory.heap must be a quantity of at least 512Mi (e.g. 4Gi)")
  @JsonPropertyDescription("JVM heap (-Xmx). Default: sized from the container memory limit.")
  private Quantity heap;

  @ValidationRule(
      value = "isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('1Mi')) >= 0",
      message = "memory.bucketCache must be a quantity of at least 1Mi (HBase's minimum), e.g. 8Gi")
  @JsonPropertyDescription(
      "L2 BucketCache capacity (Offheap, File, PersistentFile). Offheap: counted in the memory"
          + " limit; File/PersistentFile: on the cache volume.")
  private Quantity bucketCache;

  @ValidationRule(
      value = "isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('0')) >= 0",
      message = "memory.overhead must be a non-negative quantity, e.g. 512Mi")
  @JsonPropertyDescription(
      "JVM native memory outside heap and direct buffers (metaspace, threads, GC, code cache)."
          + " Default: 8% of the limit, between 384Mi and 2Gi.")
  private Quantity overhead;

  @Min(0.01)
  @Max(0.8)
  @JsonPropertyDescription(
      "hfile.block.cache.size: share of the heap for the on-heap block cache (L1). Default 0.4 in"
          + " Lru mode, 0.1 with an L2 (L1 then holds only index and bloom blocks).")
  private Double blockCacheFraction;

  @Min(0.05)
  @Max(0.8)
  @JsonPropertyDescription("hbase.regionserver.global.memstore.size. Default 0.4.")
  private Double memstoreFraction;
}
