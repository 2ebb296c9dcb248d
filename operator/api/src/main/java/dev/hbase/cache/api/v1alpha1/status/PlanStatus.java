package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;
import lombok.Data;
import lombok.experimental.Accessors;

/** The plan in force: what the planner produced for the current spec and memory limit. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PlanStatus {
  private String mode;

  /** The RegionServer container's memory limit this plan was made for. */
  private String memoryLimit;

  private String heap;
  private String directMemory;
  private String l1Size;
  private String bucketCacheSize;
  private String ioEngine;
  private String persistentPath;
  private String pvcSize;
  private String jvmOptions;
  private String configHash;
  private Map<String, String> regionServerSite;
  private Map<String, String> masterSite;
  private List<String> warnings;
}
