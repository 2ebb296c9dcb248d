package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.plan.BadPolicies;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
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
  void printerColumnsAndShortName() {
    var crd =
        client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("blockcachepolicies.cache.hbase.dev")
            .get();
    assertThat(crd.getSpec().getNames().getShortNames()).containsExactly("bcp");
    assertThat(crd.getSpec().getVersions().get(0).getAdditionalPrinterColumns())
        .extracting(c -> c.getName().toUpperCase())
        .contains("MODE", "TARGET", "HIT RATIO", "UPDATED", "PHASE", "AGE");
  }
}
