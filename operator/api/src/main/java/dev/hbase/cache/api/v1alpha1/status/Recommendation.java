package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * Sizing advice (spec.autoTune): the settings the last complete window of evidence calls for. The
 * operator writes it into the spec only in autoTune mode Apply ({@link #applied}).
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Recommendation {
  @JsonPropertyDescription("The recommended spec.mode.")
  private String mode;

  @JsonPropertyDescription("The recommended spec.memory.bucketCache (L2 size); unset for no L2.")
  private String bucketCache;

  @JsonPropertyDescription("The recommended spec.tuning.writerThreads, when it should change.")
  private Integer writerThreads;

  @JsonPropertyDescription("The recommended spec.tuning.writerQueueLength, when it should change.")
  private Integer writerQueueLength;

  @JsonPropertyDescription(
      "Whether following it changes the spec (and so rolls the RegionServers).")
  private Boolean differs;

  @JsonPropertyDescription("Why, in a sentence, with the figures that decided it.")
  private String message;

  @JsonPropertyDescription("When this recommendation was first made (RFC 3339).")
  private String since;

  @JsonPropertyDescription(
      "autoTune mode Apply: when the operator wrote this recommendation into the spec (RFC"
          + " 3339).")
  private String applied;

  @JsonPropertyDescription("The complete window it is based on.")
  private Evidence evidence;

  @JsonPropertyDescription("The window being gathered now (the next recommendation's evidence).")
  private Evidence window;
}
