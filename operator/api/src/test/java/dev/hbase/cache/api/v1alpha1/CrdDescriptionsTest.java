package dev.hbase.cache.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hbase.cache.api.v1alpha1.spec.AutoTuneSpec;
import dev.hbase.cache.api.v1alpha1.spec.WarmGate;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kubectl explain bcp} (and the API reference, docs/reference/api.md) shows what the CRD's
 * schema describes: every node the generated CRD has, from the root down to the properties of array
 * items, must say what it is. A field without {@code @JsonPropertyDescription} fails here by its
 * path.
 */
class CrdDescriptionsTest {
  static Map<String, JSONSchemaProps> nodes;

  @BeforeAll
  static void generate() throws Exception {
    Path crd =
        CrdUpToDateTest.generate(Path.of(System.getProperty("generated.crds.dir"), "descriptions"));
    nodes = CrdSchema.nodes(CrdSchema.root(CrdSchema.load(crd)));
  }

  @Test
  void everySchemaNodeIsDescribed() {
    List<String> undescribed =
        nodes.entrySet().stream()
            .filter(
                e ->
                    e.getValue().getDescription() == null
                        || e.getValue().getDescription().isBlank())
            .map(Map.Entry::getKey)
            .toList();
    System.out.printf(
        "CRD schema nodes described: %d of %d%n", nodes.size() - undescribed.size(), nodes.size());
    assertThat(undescribed)
        .as(
            "%d of %d CRD schema nodes have no description (add @JsonPropertyDescription, or for"
                + " the root and status.conditions[] see CrdUpToDateTest.postProcess)",
            undescribed.size(), nodes.size())
        .isEmpty();
  }

  /** Defaults the operator applies to an absent field are in the schema too, with its value. */
  @Test
  void defaultsInTheSchema() {
    assertThat(defaultOf(".spec.rollout.warmGate.minRetainedFraction").asDouble())
        .isEqualTo(WarmGate.DEFAULT_MIN_RETAINED_FRACTION);
    assertThat(defaultOf(".spec.autoTune.targetHitRatio").asDouble())
        .isEqualTo(AutoTuneSpec.DEFAULT_TARGET_HIT_RATIO);
    assertThat(defaultOf(".spec.autoTune.window").asText()).isEqualTo(AutoTuneSpec.DEFAULT_WINDOW);
  }

  static JsonNode defaultOf(String path) {
    JsonNode d = nodes.get(path).getDefault();
    assertThat(d).as("%s has no default in the CRD", path).isNotNull();
    return d;
  }
}
