package dev.hbase.cache.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.crdv2.generator.CRDGenerator;
import io.fabric8.crdv2.generator.CRDPostProcessor;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The CRD users apply (crds/) is what fabric8's CRD generator makes of the API classes, plus what
 * the generator has no annotation for (see {@link #postProcess}). The build fails when crds/ is
 * stale; {@code make crds} runs this test with {@code -Dcrds.update=true} to write it.
 */
class CrdUpToDateTest {
  static final String FILE = "blockcachepolicies.cache.hbase.dev-v1.yml";

  /**
   * status.conditions as a map keyed by type (Kubernetes API conventions, like metav1.Condition):
   * one condition per type, and server-side apply merges conditions by type instead of replacing
   * the list. fabric8 7.4's generator cannot express it (fabric8io/kubernetes-client#6669).
   */
  static HasMetadata postProcess(HasMetadata resource, String crdVersion) {
    var crd = (CustomResourceDefinition) resource;
    for (var v : crd.getSpec().getVersions()) {
      JSONSchemaProps conditions =
          v.getSchema()
              .getOpenAPIV3Schema()
              .getProperties()
              .get("status")
              .getProperties()
              .get("conditions");
      conditions.setXKubernetesListType("map");
      conditions.setXKubernetesListMapKeys(List.of("type"));
      // a list-map key must be required (or defaulted)
      conditions.getItems().getSchema().setRequired(List.of("status", "type"));
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
}
