package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import lombok.Data;
import lombok.experimental.Accessors;

/** What a roll cost: its duration, its restarts and its slowest pod. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RollSummary {
  @JsonPropertyDescription("The revision the roll rolls out (status.rollout.revision).")
  private String revision;

  @JsonPropertyDescription("When the roll started: its first pod admitted (RFC 3339).")
  private String startedAt;

  @JsonPropertyDescription(
      "When every pod ran the revision (RFC 3339). Set in lastRoll, absent in current.")
  private String finishedAt;

  @JsonPropertyDescription("From the roll's start to its last pod warm, in seconds.")
  private Long seconds;

  @JsonPropertyDescription("Pods restarted by the roll.")
  private Integer restarts;

  @JsonPropertyDescription("Restarts whose cache did not come back within warmGate.timeout.")
  private Integer coldRestarts;

  @JsonPropertyDescription("The pod that took longest from its delete to all its regions back.")
  private String slowestPod;

  @JsonPropertyDescription("That pod's seconds from delete to all its regions back.")
  private Double slowestPodSeconds;

  @JsonPropertyDescription(
      "Data-block reads of every RegionServer during the roll (a cold read counted once), from"
          + " their /jmx counters sampled every few seconds while the roll ran.")
  private Long dataReads;

  @JsonPropertyDescription("Of dataReads, the reads served from the cache.")
  private Long cachedReads;

  @JsonPropertyDescription(
      "cachedReads / dataReads: what the roll cost the whole cluster's cache (1 = nothing).")
  private Double cachedReadRatio;
}
