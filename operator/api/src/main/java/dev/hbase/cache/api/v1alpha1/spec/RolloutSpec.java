package dev.hbase.cache.api.v1alpha1.spec;

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

  public enum Strategy {
    /** Decommission with offload, restart, recommission with the same regions (default). */
    DrainAndReload,
    /** Restart in place and rely on the CacheAwareLoadBalancer to bring regions back. */
    InPlace
  }

  @Default("DrainAndReload")
  @JsonPropertyDescription("DrainAndReload (default) or InPlace.")
  private Strategy strategy;

  @Default("1")
  @Min(1)
  @Max(100)
  @JsonPropertyDescription(
      "RegionServer pods restarted at the same time (1-100). Never more than replicas - 1 are down at"
          + " once, counting pods down for other reasons.")
  private Integer maxUnavailable;

  @JsonPropertyDescription(
      "Start no pod's restart while true (pods already restarting finish theirs).")
  private Boolean paused;

  @Default("10m")
  @Pattern(DURATION)
  @ValidationRule(
      value = "duration(self) >= duration('30s') && duration(self) <= duration('24h')",
      message = "rollout.podReadyTimeout must be between 30s and 24h, e.g. 10m")
  @JsonPropertyDescription("How long a restarted pod may take to be Ready before the roll blocks.")
  private String podReadyTimeout;

  @JsonPropertyDescription(
      "What a restarted pod must show (cache retained, hit ratio) before the next pod restarts.")
  private WarmGate warmGate;

  @Default("true")
  @JsonPropertyDescription(
      "Keep a PodDisruptionBudget for the RegionServers (maxUnavailable = the roll's budget) so that"
          + " node drains and other evictions wait while servers are down. Not created when another"
          + " PodDisruptionBudget already selects the pods. false: none.")
  private Boolean podDisruptionBudget;
}
