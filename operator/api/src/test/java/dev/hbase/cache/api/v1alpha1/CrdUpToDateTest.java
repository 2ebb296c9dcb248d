package dev.hbase.cache.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crdv2.generator.CRDGenerator;
import io.fabric8.crdv2.generator.CRDPostProcessor;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The CRD users apply (crds/) is what fabric8's CRD generator makes of the API classes, plus what
 * the generator has no annotation for (see {@link #postProcess}). The build fails when crds/ or the
 * API reference made from it (docs/reference/api.md, {@link ApiReference}) is stale; {@code make
 * crds} runs this test with {@code -Dcrds.update=true} to write them.
 */
class CrdUpToDateTest {
  static final String FILE = "blockcachepolicies.cache.hbase.dev-v1.yml";

  /**
   * The description of the whole resource (kubectl explain bcp). fabric8 7.4's generator reads
   * descriptions from properties only, not from a class (fabric8io/kubernetes-client#7375).
   */
  static final String ROOT_DESCRIPTION =
      "A block-cache policy for one HBase RegionServer StatefulSet: the operator sizes the"
          + " RegionServers' block cache (heap, L1, L2 BucketCache, its volume) from the spec and"
          + " the container's memory limit, writes the settings into their hbase-site and JVM"
          + " options, and restarts the RegionServers to apply them in a roll it paces"
          + " (spec.rollout).";

  /**
   * status.conditions[]: fabric8's Condition class carries no descriptions; these follow
   * metav1.Condition's, as the operator fills them in (controller/Conditions.java).
   */
  static final Map<String, String> CONDITION_DESCRIPTIONS =
      Map.of(
          "type",
          "Valid, Ready, Progressing, Degraded, CacheResetPending or Balanced.",
          "status",
          "True or False.",
          "reason",
          "Why the condition is as it is, one CamelCase word (e.g. Planned, ClusterNotHealthy,"
              + " DrainTimeout).",
          "message",
          "Details for people; may be empty.",
          "lastTransitionTime",
          "When status last changed (RFC 3339).",
          "observedGeneration",
          "The policy's metadata.generation when the condition was set.");

  /**
   * The printer columns in the order {@link BlockCachePolicy} declares them, AGE last. Also
   * status.conditions as a map keyed by type (Kubernetes API conventions, like metav1.Condition):
   * one condition per type, and server-side apply merges conditions by type instead of replacing
   * the list. fabric8 7.4's generator cannot express it (fabric8io/kubernetes-client#6669). Also
   * the descriptions no annotation can give: the root's and status.conditions[]'s.
   */
  static HasMetadata postProcess(HasMetadata resource, String crdVersion) {
    var crd = (CustomResourceDefinition) resource;
    for (var v : crd.getSpec().getVersions()) {
      // kubectl get bcp shows the columns in the CRD's order: the order BlockCachePolicy declares
      // them in (AGE last, as kubectl's own tables), not the generator's (sorted by jsonPath)
      List<String> declared =
          Arrays.stream(BlockCachePolicy.class.getAnnotationsByType(AdditionalPrinterColumn.class))
              .map(AdditionalPrinterColumn::name)
              .toList();
      v.setAdditionalPrinterColumns(
          v.getAdditionalPrinterColumns().stream()
              .sorted(Comparator.comparingInt(c -> declared.indexOf(c.getName())))
              .toList());
      JSONSchemaProps root = v.getSchema().getOpenAPIV3Schema();
      root.setDescription(ROOT_DESCRIPTION);
      JSONSchemaProps conditions =
          root.getProperties().get("status").getProperties().get("conditions");
      conditions.setXKubernetesListType("map");
      conditions.setXKubernetesListMapKeys(List.of("type"));
      // a list-map key must be required (or defaulted)
      conditions.getItems().getSchema().setRequired(List.of("status", "type"));
      conditions
          .getItems()
          .getSchema()
          .getProperties()
          .forEach((name, p) -> p.setDescription(CONDITION_DESCRIPTIONS.get(name)));
    }
    return crd;
  }

  static Path generate(Path dir) throws Exception {
    Files.createDirectories(dir);
    new CRDGenerator()
        .customResourceClasses(BlockCachePolicy.class)
        .forCRDVersions("v1")
        .withPostProcessor(
            new CRDPostProcessor() {
              @Override
              public HasMetadata process(HasMetadata crd, String crdVersion) {
                return postProcess(crd, crdVersion);
              }
            })
        .inOutputDir(dir.toFile())
        .generate();
    return dir.resolve(FILE);
  }

  @Test
  void committedCrdMatchesGeneratedCrd() throws Exception {
    Path generated = generate(Path.of(System.getProperty("generated.crds.dir")));
    Path committed = Path.of(System.getProperty("crds.dir"), FILE);
    assertThat(generated).exists();
    if (Boolean.getBoolean("crds.update")) {
      Files.copy(generated, committed, StandardCopyOption.REPLACE_EXISTING);
    }
    assertThat(committed).as("crds/%s is missing: run `make crds`", FILE).exists();
    assertThat(Files.readString(committed))
        .as("crds/%s is stale: run `make crds` and commit the result", FILE)
        .isEqualTo(Files.readString(generated));
  }

  /** docs/reference/api.md is what {@link ApiReference} makes of the generated CRD. */
  @Test
  void committedApiReferenceMatchesCrd() throws Exception {
    Path crd = generate(Path.of(System.getProperty("generated.crds.dir")));
    String generated = ApiReference.render(CrdSchema.load(crd));
    Path committed = Path.of(System.getProperty("docs.dir"), "reference", "api.md");
    if (Boolean.getBoolean("crds.update")) {
      Files.createDirectories(committed.getParent());
      Files.writeString(committed, generated);
    }
    assertThat(committed).as("docs/reference/api.md is missing: run `make crds`").exists();
    assertThat(Files.readString(committed))
        .as("docs/reference/api.md is stale: run `make crds` and commit the result")
        .isEqualTo(generated);
  }
}
