package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.ValidationRule;
import lombok.Data;
import lombok.experimental.Accessors;

@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class MetricsSpec {
  @Default("30s")
  @Pattern(RolloutSpec.DURATION)
  @ValidationRule(
      value = "duration(self) >= duration('10s') && duration(self) <= duration('1h')",
      message =
          "metrics.interval must be between 10s and 1h: HBase refreshes its cache metrics only"
              + " every 5-10s, so faster sampling reads zeros")
  @JsonPropertyDescription("How often hit ratios are sampled from each RegionServer. Default 30s.")
  private String interval;
}
