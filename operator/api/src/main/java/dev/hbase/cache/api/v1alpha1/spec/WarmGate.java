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

/** What a restarted pod must show before the next pod restarts. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class WarmGate {
  /** The defaults, written once (see {@link RolloutSpec}'s). */
  public static final String DEFAULT_TIMEOUT = "5m";

  public static final double DEFAULT_MIN_RETAINED_FRACTION = 0.9;

  @Default("" + DEFAULT_MIN_RETAINED_FRACTION)
  @Min(0)
  @Max(1)
  @JsonPropertyDescription(
      "PersistentFile: L2 used bytes after the restart / before it must reach this (0-1). Default"
          + " 0.9. Not waited for when the roll resets the cache (CacheResetPending).")
  private Double minRetainedFraction;

  @Min(0)
  @Max(1)
  @JsonPropertyDescription(
      "Data-block hit ratio (0-1) since its start the restarted RegionServer must reach. Default:"
          + " not checked.")
  private Double minHitRatio;

  @Default(DEFAULT_TIMEOUT)
  @Pattern(RolloutSpec.DURATION)
  @ValidationRule(
      value = "duration(self) >= duration('0s') && duration(self) <= duration('24h')",
      message = "rollout.warmGate.timeout must be between 0s and 24h, e.g. 5m")
  @JsonPropertyDescription(
      "How long to wait for the gate; after it the roll goes on and the pod is reported cold."
          + " Default 5m.")
  private String timeout;

  /** {@link #timeout}, or its default when absent. */
  @JsonIgnore
  public String timeoutOrDefault() {
    return timeout == null ? DEFAULT_TIMEOUT : timeout;
  }
}
