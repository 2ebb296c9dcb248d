package dev.hbase.cache.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.hbase.cache.api.v1alpha1.status.CacheStatus;
import dev.hbase.cache.api.v1alpha1.status.PlanStatus;
import dev.hbase.cache.api.v1alpha1.status.Recommendation;
import dev.hbase.cache.api.v1alpha1.status.RecreateStatus;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;
import lombok.Data;
import lombok.experimental.Accessors;

@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BlockCachePolicyStatus {
  private Long observedGeneration;

  /** Valid, Ready, Progressing, Degraded, CacheResetPending. */
  private List<Condition> conditions = new ArrayList<>();

  private PlanStatus plan;
  private RolloutStatus rollout;
  private CacheStatus cache;
  private Recommendation recommendation;
  private List<RegionServerStatus> regionServers = new ArrayList<>();

  /** Set while the StatefulSet is recreated with the cache volume template (orphan delete). */
  private RecreateStatus recreate;
}
