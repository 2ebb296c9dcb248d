package dev.hbase.cache.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** A block-cache policy for one HBase RegionServer StatefulSet. */
@Group(BlockCachePolicy.GROUP)
@Version(BlockCachePolicy.VERSION)
@ShortNames("bcp")
// kubectl get hbase: every resource of the category (Kubernetes API conventions, as operators do)
@Categories("hbase")
// The printer columns in this order (kubectl get bcp), AGE last as kubectl's own tables show it:
// fabric8's generator sorts them by jsonPath, CrdUpToDateTest.postProcess puts them back in this
// order.
@AdditionalPrinterColumn(
    name = "Mode",
    jsonPath = ".spec.mode",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Target",
    jsonPath = ".spec.targetRef.name",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Hit Ratio",
    jsonPath = ".status.cache.hitRatio",
    type = AdditionalPrinterColumn.Type.NUMBER)
@AdditionalPrinterColumn(
    name = "Updated",
    jsonPath = ".status.rollout.progress",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Phase",
    jsonPath = ".status.rollout.phase",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Last Roll (s)",
    jsonPath = ".status.rollout.lastRoll.seconds",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Ready",
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
    type = AdditionalPrinterColumn.Type.STRING)
// -o wide
@AdditionalPrinterColumn(
    name = "Cache Used",
    jsonPath = ".status.cache.usedBytes",
    type = AdditionalPrinterColumn.Type.INTEGER,
    priority = 1)
@AdditionalPrinterColumn(
    name = "Last Roll Cached",
    jsonPath = ".status.rollout.lastRoll.cachedReadRatio",
    type = AdditionalPrinterColumn.Type.NUMBER,
    priority = 1)
@AdditionalPrinterColumn(
    name = "Advice",
    jsonPath = ".status.recommendation.mode",
    type = AdditionalPrinterColumn.Type.STRING,
    priority = 1)
@AdditionalPrinterColumn(
    name = "Advised L2",
    jsonPath = ".status.recommendation.bucketCache",
    type = AdditionalPrinterColumn.Type.STRING,
    priority = 1)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class BlockCachePolicy extends CustomResource<BlockCachePolicySpec, BlockCachePolicyStatus>
    implements Namespaced {

  public static final String GROUP = "cache.hbase.dev";
  public static final String VERSION = "v1alpha1";

  /** Set to any new value (e.g. a timestamp) to request a rolling restart of all RegionServers. */
  public static final String RESTART_ANNOTATION = GROUP + "/restart";

  // Overridden only for their descriptions in the CRD (kubectl explain bcp.spec, bcp.status).
  @Override
  @JsonPropertyDescription(
      "What the user asks for: the RegionServer StatefulSet, the cache mode and sizes, and how the"
          + " operator rolls the RegionServers onto them.")
  public BlockCachePolicySpec getSpec() {
    return super.getSpec();
  }

  @Override
  @JsonPropertyDescription(
      "What the operator planned, observed and did: conditions, the plan in force, the roll's"
          + " state, the cache figures and the sizing advice. Written by the operator only.")
  public BlockCachePolicyStatus getStatus() {
    return super.getStatus();
  }
}
