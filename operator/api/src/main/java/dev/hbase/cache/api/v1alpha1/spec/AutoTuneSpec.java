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

/**
 * Sizing advice from what the RegionServers' caches do over a window ({@code
 * status.recommendation}). In Recommend mode the operator never changes the policy itself: the user
 * applies a recommendation by editing the spec. In Apply mode the operator makes that edit (mode,
 * memory.bucketCache, the writer settings), which rolls through the same safe roll.
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AutoTuneSpec {
  /** The defaults, written once (see {@link RolloutSpec}'s). */
  public static final String DEFAULT_WINDOW = "1h";

  public static final double DEFAULT_TARGET_HIT_RATIO = 0.95;

  public enum Mode {
    /** No advice, and no JVM metrics scraped for it. */
    Off,
    /** status.recommendation and a RecommendationChanged event; nothing applied (default). */
    Recommend,
    /**
     * As Recommend, and the operator writes a recommendation that differs into the spec when the
     * roll is idle (a RecommendationApplied event); the RegionServers roll as after a user's edit.
     */
    Apply
  }

  @Default("Recommend")
  @JsonPropertyDescription(
      "Off | Recommend | Apply. Recommend (default): status.recommendation gives the mode and L2"
          + " size the observed hit ratios, evictions, L2 fill, failed insertions and GC time call"
          + " for, and an event says when it changes. Nothing is applied: edit the spec to follow"
          + " it. Apply: the operator makes that edit itself (spec.mode, memory.bucketCache,"
          + " tuning.writerThreads/writerQueueLength) once the roll is idle, with a"
          + " RecommendationApplied event, and the RegionServers roll as after your edit; a new"
          + " size of a persistent L2 starts it empty (CacheResetPending). It never adds or grows"
          + " cache volumes (give storage.size room for a bigger L2). A tool that owns the"
          + " spec (GitOps) reverts such edits: use Recommend there.")
  private Mode mode;

  @Default(DEFAULT_WINDOW)
  @Pattern(RolloutSpec.DURATION)
  @ValidationRule(
      value = "duration(self) >= duration('1m') && duration(self) <= duration('168h')",
      message =
          "autoTune.window must be between 1m and 168h: advice from seconds of reads follows"
              + " noise (1h or more in production)")
  @JsonPropertyDescription(
      "How long the evidence is gathered before a recommendation is made (then a new window"
          + " starts). Default 1h.")
  private String window;

  @Default("" + DEFAULT_TARGET_HIT_RATIO)
  @Min(0.5)
  @Max(1)
  @JsonPropertyDescription(
      "The data-block hit ratio (share of data reads served from cache, 0.5-1) the advice aims"
          + " for. Default 0.95.")
  private Double targetHitRatio;
}
