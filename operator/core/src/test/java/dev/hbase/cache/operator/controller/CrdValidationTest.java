package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.MetricsSpec;
import dev.hbase.cache.operator.plan.BadPolicies;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * crds/ applied to a real kube-apiserver (kube-api-test): every bad input the schema or CEL can see
 * is refused there, with its message; the examples are accepted.
 */
@EnableKubeAPIServer
class CrdValidationTest {
  static KubernetesClient client;
  static final Path CRD = Path.of("../../crds/blockcachepolicies.cache.hbase.dev-v1.yml");

  @BeforeAll
  static void applyCrd() throws Exception {
    try (var in = new FileInputStream(CRD.toFile())) {
      var crd = client.apiextensions().v1().customResourceDefinitions().load(in).item();
      client.resource(crd).serverSideApply();
      client
          .apiextensions()
          .v1()
          .customResourceDefinitions()
          .withName(crd.getMetadata().getName())
          .waitUntilCondition(CrdValidationTest::established, 30, TimeUnit.SECONDS);
    }
  }

  static boolean established(CustomResourceDefinition c) {
    return c != null
        && c.getStatus() != null
        && c.getStatus().getConditions() != null
        && c.getStatus().getConditions().stream()
            .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus()));
  }

  static List<BadPolicies.Case> apiServerCases() {
    return BadPolicies.CASES.stream().filter(c -> c.apiServer() != null).toList();
  }

  static GenericKubernetesResource resource(String yaml, String name) {
    GenericKubernetesResource r = Serialization.unmarshal(yaml, GenericKubernetesResource.class);
    r.getMetadata().setName(name);
    r.getMetadata().setNamespace("default");
    return r;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("apiServerCases")
  void refusedWithItsMessage(BadPolicies.Case c) {
    GenericKubernetesResource r = resource(c.document(), "bad-" + Math.abs(c.name().hashCode()));
    assertThatThrownBy(
            () ->
                client
                    .genericKubernetesResources("cache.hbase.dev/v1alpha1", "BlockCachePolicy")
                    .resource(r)
                    .create())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
        .hasMessageContaining(c.apiServer());
  }

  /**
   * The API server these tests ran on: the one kube-api-test picks (the newest under
   * ~/.kubeapitest), or the version {@code KUBE_API_TEST_API_SERVER_VERSION} asks for ({@code make
   * test-api-oldest}: the oldest Kubernetes the README claims).
   */
  @Test
  void theApiServerIsTheVersionAskedFor() {
    String asked = System.getenv("KUBE_API_TEST_API_SERVER_VERSION");
    String running = client.getKubernetesVersion().getGitVersion();
    System.out.println("CrdValidationTest: kube-apiserver " + running);
    if (asked != null && !asked.isBlank()) {
      assertThat(running).isEqualTo("v" + asked.replaceFirst("^v", ""));
    }
  }

  @Test
  void atLeast25BadInputsReachTheApiServer() {
    assertThat(apiServerCases()).hasSizeGreaterThanOrEqualTo(25);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"lru.yaml", "offheap.yaml", "file.yaml", "persistent-file.yaml", "meta-only.yaml"})
  void examplesAreAcceptedAndDefaulted(String file) throws Exception {
    GenericKubernetesResource r =
        resource(
            Files.readString(Path.of("../../examples", file)), "ex-" + file.replace(".yaml", ""));
    client
        .genericKubernetesResources("cache.hbase.dev/v1alpha1", "BlockCachePolicy")
        .resource(r)
        .create();
    BlockCachePolicy p =
        client
            .resources(BlockCachePolicy.class)
            .inNamespace("default")
            .withName(r.getMetadata().getName())
            .get();
    assertThat(p.getSpec().getMode()).isNotNull();
    if (p.getSpec().getStorage() != null) {
      assertThat(p.getSpec().getStorage().getMountPath()).isEqualTo("/var/lib/hbase/bucketcache");
    }
    if (p.getSpec().getHbase() != null) {
      assertThat(p.getSpec().getHbase().getInfoPort()).isEqualTo(16030);
    }
    client.resource(p).delete();
  }

  @Test
  void fractionsOfExactlyPointEightAreAccepted() {
    String yaml =
        BadPolicies.CASES
            .get(0)
            .document()
            .replace(
                "  mode: Heap\n",
                "  mode: Lru\n  memory:\n    blockCacheFraction: 0.4\n    memstoreFraction: 0.4\n");
    assertThat(createAccepted(yaml, "exactly-08")).isNotNull();
  }

  @Test
  void aJvmAgentReachesTheOperatorWhichAloneKnowsWhetherItIsAllowed() {
    String yaml =
        BadPolicies.CASES
            .get(0)
            .document()
            .replace(
                "  mode: Heap\n",
                "  mode: Lru\n  jvm:\n    extraOptions: [\"-javaagent:/opt/a.jar\"]\n");
    assertThat(createAccepted(yaml, "with-agent").getSpec().getJvm().getExtraOptions())
        .containsExactly("-javaagent:/opt/a.jar");
  }

  /** Creates the policy (the API server must accept it) and reads it back. */
  static BlockCachePolicy createAccepted(String yaml, String name) {
    client
        .genericKubernetesResources("cache.hbase.dev/v1alpha1", "BlockCachePolicy")
        .resource(resource(yaml, name))
        .create();
    return client.resources(BlockCachePolicy.class).inNamespace("default").withName(name).get();
  }

  @Test
  void aTmpfsFileCacheNeedsNoSize() {
    String yaml =
        BadPolicies.CASES
            .get(0)
            .document()
            .replace("  mode: Heap\n", "  mode: File\n  storage:\n    medium: Memory\n");
    assertThat(createAccepted(yaml, "tmpfs-unsized").getSpec().getStorage().getMedium())
        .isEqualTo("Memory");
  }

  @Test
  void targetRefCannotBeChangedButTheRestOfTheSpecCan() {
    String yaml = BadPolicies.CASES.get(0).document().replace("  mode: Heap\n", "  mode: Lru\n");
    BlockCachePolicy p = createAccepted(yaml, "moved");
    String target = p.getSpec().getTargetRef().getName();
    var policies =
        client.resources(BlockCachePolicy.class).inNamespace("default").withName("moved");
    assertThatThrownBy(
            () ->
                policies.edit(
                    x -> {
                      x.getSpec().getTargetRef().setName(target + "-other");
                      return x;
                    }))
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
        .hasMessageContaining("targetRef is immutable");
    BlockCachePolicy edited =
        policies.edit(
            x -> {
              x.getSpec().setMetrics(new MetricsSpec().setInterval("1m"));
              return x;
            });
    assertThat(edited.getSpec().getTargetRef().getName()).isEqualTo(target);
    assertThat(edited.getSpec().getMetrics().getInterval()).isEqualTo("1m");
    policies.delete();
  }

  /** {@code kubectl explain blockcachepolicy.spec...} explains every field (issue 13). */
  @Test
  void everySpecFieldHasADescription() {
    var schema =
        client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("blockcachepolicies.cache.hbase.dev")
            .get()
            .getSpec()
            .getVersions()
            .get(0)
            .getSchema()
            .getOpenAPIV3Schema()
            .getProperties()
            .get("spec");
    List<String> undescribed = new ArrayList<>();
    List<String> described = new ArrayList<>();
    walk(schema, "spec", undescribed, described);
    assertThat(described).hasSizeGreaterThan(40);
    assertThat(undescribed).as("spec fields without a description").isEmpty();
  }

  private static void walk(
      JSONSchemaProps node, String path, List<String> undescribed, List<String> described) {
    if (node.getProperties() != null) {
      node.getProperties()
          .forEach(
              (name, child) -> {
                String p = path + "." + name;
                (child.getDescription() == null || child.getDescription().isBlank()
                        ? undescribed
                        : described)
                    .add(p);
                walk(child, p, undescribed, described);
              });
    }
    if (node.getItems() != null && node.getItems().getSchema() != null) {
      walk(node.getItems().getSchema(), path + "[]", undescribed, described);
    }
  }

  /**
   * status.conditions is a list-map keyed by type: one condition per type, and a second writer's
   * condition (another controller, a tool) survives the operator's server-side apply of its own.
   */
  @Test
  void conditionsAreAMapByType() throws Exception {
    GenericKubernetesResource r =
        resource(Files.readString(Path.of("../../examples/lru.yaml")), "conditions-map");
    var policies =
        client.genericKubernetesResources("cache.hbase.dev/v1alpha1", "BlockCachePolicy");
    policies.resource(r).create();
    var status = policies.inNamespace("default").withName("conditions-map").subresource("status");
    status.patch(ssa("blockcachepolicy"), conditions("Ready", "Valid"));
    status.patch(ssa("another-controller"), conditions("BackedUp"));
    assertThat(types(policies.inNamespace("default").withName("conditions-map").get()))
        .as("conditions after two managers applied theirs")
        .containsExactlyInAnyOrder("Ready", "Valid", "BackedUp");
    // a merge patch (server-side apply refuses duplicate keys before validation, with a 500)
    assertThatThrownBy(
            () ->
                status.patch(
                    io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                        io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
                    conditions("Ready", "Ready")))
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
        .hasMessageContaining("Duplicate value");
    policies.inNamespace("default").withName("conditions-map").delete();
  }

  static io.fabric8.kubernetes.client.dsl.base.PatchContext ssa(String manager) {
    return new io.fabric8.kubernetes.client.dsl.base.PatchContext.Builder()
        .withPatchType(io.fabric8.kubernetes.client.dsl.base.PatchType.SERVER_SIDE_APPLY)
        .withFieldManager(manager)
        .withForce(true)
        .build();
  }

  static String conditions(String... types) {
    StringBuilder b =
        new StringBuilder(
            "{\"apiVersion\":\"cache.hbase.dev/v1alpha1\",\"kind\":\"BlockCachePolicy\","
                + "\"metadata\":{\"name\":\"conditions-map\",\"namespace\":\"default\"},"
                + "\"status\":{\"conditions\":[");
    for (int i = 0; i < types.length; i++) {
      b.append(i == 0 ? "" : ",")
          .append("{\"type\":\"")
          .append(types[i])
          .append("\",\"status\":\"True\",\"reason\":\"Test\"}");
    }
    return b.append("]}}").toString();
  }

  @SuppressWarnings("unchecked")
  static List<String> types(GenericKubernetesResource r) {
    var status = (java.util.Map<String, Object>) r.getAdditionalProperties().get("status");
    var conditions = (List<java.util.Map<String, Object>>) status.get("conditions");
    return conditions.stream().map(c -> (String) c.get("type")).toList();
  }

  @Test
  void printerColumnsAndShortName() {
    var crd =
        client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("blockcachepolicies.cache.hbase.dev")
            .get();
    assertThat(crd.getSpec().getNames().getShortNames()).containsExactly("bcp");
    // kubectl get bcp: the columns in this order, AGE last (kubectl's convention); the API server
    // serves them in the CRD's order
    assertThat(crd.getSpec().getVersions().get(0).getAdditionalPrinterColumns())
        .filteredOn(c -> c.getPriority() == null || c.getPriority() == 0)
        .extracting(c -> c.getName().toUpperCase())
        .containsExactly(
            "MODE", "TARGET", "HIT RATIO", "UPDATED", "PHASE", "LAST ROLL (S)", "READY", "AGE");
    assertThat(crd.getSpec().getVersions().get(0).getAdditionalPrinterColumns())
        .last()
        .extracting(c -> c.getName())
        .isEqualTo("Age");
    // kubectl get hbase lists the policies: the category, as discovery serves it
    assertThat(crd.getSpec().getNames().getCategories()).containsExactly("hbase");
    assertThat(
            client.getApiResources("cache.hbase.dev/v1alpha1").getResources().stream()
                .filter(r -> r.getName().equals("blockcachepolicies"))
                .findFirst()
                .orElseThrow()
                .getCategories())
        .containsExactly("hbase");
    // -o wide adds the cache used, the last roll's cached share and the sizing advice
    assertThat(crd.getSpec().getVersions().get(0).getAdditionalPrinterColumns())
        .filteredOn(c -> c.getPriority() != null && c.getPriority() == 1)
        .extracting(c -> c.getName())
        .containsExactlyInAnyOrder("Cache Used", "Last Roll Cached", "Advice", "Advised L2");
  }
}
