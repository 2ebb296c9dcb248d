package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.ValidationRule;
import lombok.Data;
import lombok.experimental.Accessors;

@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RolloutSpec {
  public static final String DURATION = "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$";

  // The defaults, written once: the CRD's (@Default, applied by the API server) and the operator's
  // when a field is absent all the same (a policy stored before the default existed, a unit test).
  public static final String DEFAULT_STRATEGY = "DrainAndReload";
  public static final int DEFAULT_MAX_UNAVAILABLE = 1;
  public static final String DEFAULT_POD_READY_TIMEOUT = "10m";

  public enum Strategy {
    /**
     * Decommission (no offload), move the regions to the servers that cache their blocks, restart,
     * bring the same regions back (default).
     */
    DrainAndReload,
    /** Restart in place and rely on the CacheAwareLoadBalancer to bring regions back. */
    InPlace
  }

  @Default(DEFAULT_STRATEGY)
  @JsonPropertyDescription("DrainAndReload (default) or InPlace.")
  private Strategy strategy;

  @Default("" + DEFAULT_MAX_UNAVAILABLE)
  @Min(1)
  @Max(100)
  @JsonPropertyDescription(
      "RegionServer pods restarted at the same time (1-100). Never more than replicas - 1 are down at"
          + " once, counting pods down for other reasons. Default 1.")
  private Integer maxUnavailable;

  @JsonPropertyDescription(
      "Start no pod's restart while true (pods already restarting finish theirs).")
  private Boolean paused;

  @Default(DEFAULT_POD_READY_TIMEOUT)
  @Pattern(DURATION)
  @ValidationRule(
      value = "duration(self) >= duration('30s') && duration(self) <= duration('24h')",
      message = "rollout.podReadyTimeout must be between 30s and 24h, e.g. 10m")
  @JsonPropertyDescription(
      "How long each step of a pod's restart may take (its drain, the new pod serving, its regions"
          + " coming back) before the roll blocks; a drain that times out is undone and tried"
          + " again after as long again. Default 10m.")
  private String podReadyTimeout;

  @JsonPropertyDescription(
      "What a restarted pod must show (cache retained, hit ratio) before the next pod restarts.")
  private WarmGate warmGate;

  @Default("true")
  @JsonPropertyDescription(
      "Keep a PodDisruptionBudget for the RegionServers (maxUnavailable = the roll's budget) so that"
          + " node drains and other evictions wait while servers are down. Not created when another"
          + " PodDisruptionBudget already selects the pods. Default true; false: none.")
  private Boolean podDisruptionBudget;

  /** {@link #strategy}, or its default when absent. */
  @JsonIgnore
  public Strategy strategyOrDefault() {
    return strategy == null ? Strategy.valueOf(DEFAULT_STRATEGY) : strategy;
  }

  /** {@link #maxUnavailable}, or its default when absent. */
  @JsonIgnore
  public int maxUnavailableOrDefault() {
    return maxUnavailable == null ? DEFAULT_MAX_UNAVAILABLE : maxUnavailable;
  }

  /** {@link #podReadyTimeout}, or its default when absent. */
  @JsonIgnore
  public String podReadyTimeoutOrDefault() {
    return podReadyTimeout == null ? DEFAULT_POD_READY_TIMEOUT : podReadyTimeout;
  }

  /** {@link #warmGate}, or one with every field at its default when absent. */
  @JsonIgnore
  public WarmGate warmGateOrDefault() {
    return warmGate == null ? new WarmGate() : warmGate;
  }
}
