package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * What the operator changes in HBase, as it last saw it: the balancer switch and the target's
 * servers marked decommissioned, from the master's answer at the last roll step that asked it, with
 * that step's own switches and marks applied. Exported as metrics, so that a balancer or a mark the
 * operator failed to give back alerts (docs/operations/metrics.md).
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ClusterSeen {
  @JsonPropertyDescription(
      "Whether HBase's balancer is on, as the operator last saw it (after its own switch in that"
          + " step); absent when the master did not say.")
  private Boolean balancerOn;

  @JsonPropertyDescription(
      "The target's RegionServers marked decommissioned (host,port,startcode), as the operator"
          + " last saw them, whoever marked them (a roll's own drains, an administrator's); another"
          + " StatefulSet's servers of the same HBase are not listed.")
  private List<String> decommissioned = new ArrayList<>();

  @JsonPropertyDescription(
      "Since when (RFC 3339) the master has shown it so, at the roll steps that asked it: the"
          + " operator asks while a roll, a stop or a give-back is under way, and while it last saw a"
          + " server decommissioned; an idle cluster is not asked.")
  private String since;
}
