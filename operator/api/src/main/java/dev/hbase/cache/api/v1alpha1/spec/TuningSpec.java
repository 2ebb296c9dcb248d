package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;
import lombok.Data;
import lombok.experimental.Accessors;

/** BucketCache and RegionServer knobs. Unset fields keep HBase's defaults unless said. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TuningSpec {
  @Size(min = 1, max = 32)
  @ValidationRule(
      value = "self.all(s, s >= 256 && s % 256 == 0)",
      message =
          "tuning.bucketSizes: each size must be a positive multiple of 256 bytes (HBase: 'All"
              + " bucket sizes to be multiples of 256'), e.g. [5120, 9216, 17408, 33792, 66560]")
  @ValidationRule(
      value = "self.isSorted() && self.all(s, self.indexOf(s) == self.lastIndexOf(s))",
      message = "tuning.bucketSizes must be strictly ascending, without duplicates")
  @JsonPropertyDescription(
      "hbase.bucketcache.bucket.sizes in bytes: ascending multiples of 256; the largest must hold"
          + " the largest block (block size + 1Ki).")
  private List<Long> bucketSizes;

  @Min(1)
  @Max(64)
  @JsonPropertyDescription("hbase.bucketcache.writer.threads (HBase default 3).")
  private Integer writerThreads;

  @Min(1)
  @Max(65536)
  @JsonPropertyDescription("hbase.bucketcache.writer.queuelength (HBase default 64).")
  private Integer writerQueueLength;

  @JsonPropertyDescription(
      "hbase.block.data.cachecompressed: keep data blocks compressed in cache (HBase default"
          + " false).")
  private Boolean cacheDataCompressed;

  @JsonPropertyDescription(
      "hbase.rs.prefetchblocksonopen: read a region's blocks into the cache when it opens."
          + " Default true in PersistentFile (a region drained for a restart is cached where it"
          + " goes, and stays cached there for the next roll), HBase's default (false) otherwise.")
  private Boolean prefetchOnOpen;

  @Min(100)
  @Max(3600000)
  @JsonPropertyDescription(
      "hbase.bucketcache.persist.intervalinmillis (PersistentFile): checkpoint interval of the"
          + " cache map in milliseconds; a crash loses at most this much. HBase default 1000.")
  private Long persistIntervalMillis;

  @Min(200)
  @Max(60000)
  @JsonPropertyDescription(
      "hbase.regionserver.msginterval in milliseconds: how often each RegionServer sends the"
          + " master its load report (regions, cached MB per region). A restarted RegionServer gets"
          + " its regions back after its first report, one interval after it registers. Default"
          + " 1000 (HBase's own default is 3000: each restart of a roll then takes 1-2 s longer).")
  private Long loadReportIntervalMillis;
}
