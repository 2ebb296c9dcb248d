package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Step 1's proof that the chart upgrades its CRD: {@code helm upgrade} of the installed release to
 * a copy of the chart whose CRD has one more spec field, and a policy that sets that field keeps
 * it; before the upgrade, and after the upgrade back to the real chart, the API server prunes it.
 * With the CRD in the chart's {@code crds/} folder (Helm installs it once and never upgrades it)
 * the field would stay pruned after the upgrade. The probe policy is only ever a server-side dry
 * run: nothing is stored, the operator never sees it. The release's values are reused, so the
 * operator's Deployment renders the same and does not restart.
 */
final class CrdUpgrade {
  static final String FIELD = "e2eUpgradeProbe";
  static final String CHART = "charts/hbase-cache-operator";
  static final String CRD_FILE = "files/crds/blockcachepolicies.cache.hbase.dev-v1.yml";

  private final KubernetesClient client;
  private final Cluster cluster;
  private final Settings settings;

  CrdUpgrade(KubernetesClient client, Cluster cluster, Settings settings) {
    this.client = client;
    this.cluster = cluster;
    this.settings = settings;
  }

  /** Runs the check; the report lines it makes. Fails (AssertionError) when a stage is wrong. */
  List<String> run() throws IOException {
    long t0 = System.nanoTime();
    assertThat(kept()).as("before the upgrade: spec.%s is unknown and pruned", FIELD).isFalse();
    Path dir = Files.createTempDirectory("chart-with-a-new-field");
    boolean back = false;
    try {
      Path chart = copy(settings.repo().resolve(CHART), dir.resolve("hbase-cache-operator"));
      addField(chart.resolve(CRD_FILE));
      Shell.Result up = upgrade(chart.toString());
      assertThat(up.code())
          .as("helm upgrade to the chart with a new field: %s", up.output())
          .isZero();
      await("spec." + FIELD + " kept after helm upgrade")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofSeconds(1))
          .until(this::kept);
      long upgraded = System.nanoTime();
      Shell.Result restored = upgrade(CHART);
      back = restored.code() == 0;
      assertThat(back).as("helm upgrade back to the real chart: %s", restored.output()).isTrue();
      await("spec." + FIELD + " pruned again after the upgrade back")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> !kept());
      return List.of(
          String.format(
              "the CRD upgrades with the chart: `helm upgrade %s` to a copy whose CRD adds"
                  + " spec.%s: a policy's value kept (server-side dry run; pruned before), %.1f s;"
                  + " upgraded back to the real chart: pruned again; %.1f s in all",
              settings.operatorRelease(),
              FIELD,
              (upgraded - t0) / 1e9,
              (System.nanoTime() - t0) / 1e9));
    } finally {
      if (!back) {
        upgrade(CHART); // a failed check leaves the release on the real chart for the later steps
      }
      try (Stream<Path> s = Files.walk(dir)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Whether the API server keeps spec.FIELD of a new policy (a dry run: nothing is stored). */
  boolean kept() throws IOException {
    GenericKubernetesResource probe =
        client
            .getKubernetesSerialization()
            .unmarshal(
                Files.readString(settings.repo().resolve("examples/lru.yaml")),
                GenericKubernetesResource.class);
    probe.getMetadata().setName("e2e-crd-upgrade-probe");
    probe.getMetadata().setNamespace(cluster.ns);
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = (Map<String, Object>) probe.getAdditionalProperties().get("spec");
    spec.put(FIELD, "kept");
    GenericKubernetesResource out = client.resource(probe).dryRun().create();
    return "kept".equals(out.get("spec", FIELD));
  }

  private Shell.Result upgrade(String chart) {
    return cluster.helm(
        300,
        "upgrade "
            + settings.operatorRelease()
            + " "
            + chart
            + " -n "
            + cluster.opNs
            + " --reuse-values --wait --timeout 3m");
  }

  /** The CRD file with an optional string property spec.FIELD added. */
  static void addField(Path crdFile) throws IOException {
    var serialization = new io.fabric8.kubernetes.client.utils.KubernetesSerialization();
    CustomResourceDefinition crd =
        serialization.unmarshal(Files.readString(crdFile), CustomResourceDefinition.class);
    JSONSchemaProps spec =
        crd.getSpec()
            .getVersions()
            .get(0)
            .getSchema()
            .getOpenAPIV3Schema()
            .getProperties()
            .get("spec");
    spec.getProperties()
        .put(
            FIELD,
            new JSONSchemaPropsBuilder()
                .withType("string")
                .withDescription("added by the e2e's CRD upgrade check")
                .build());
    Files.writeString(crdFile, serialization.asYaml(crd));
  }

  private static Path copy(Path from, Path to) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        Path q = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(q);
        } else {
          Files.copy(p, q);
        }
      }
    }
    return to;
  }
}
