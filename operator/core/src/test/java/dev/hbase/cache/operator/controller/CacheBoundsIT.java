package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What the operator caches is bounded by what its policies name, not by what their namespaces hold
 * (issue 49), on a real API server: a namespace flooded with ConfigMaps, pods and StatefulSets no
 * policy names, and budgets with large annotations and selectors, leaves the operator's caches as
 * they were (the objects the policy names, each once; of each budget a summary of bounded size),
 * while a change of the policy's base ConfigMap still reconciles it at once. Asserted on the
 * caches' contents, not on memory figures: those are measured by {@code CacheMemoryBench}.
 */
@EnableKubeAPIServer
class CacheBoundsIT extends OperatorHarness {
  static final int FLOOD = 40;

  /** 100 KiB of data: a flood of these is what filled the operator's heap before. */
  static final String BULK = "x".repeat(100 * 1024);

  static Set<String> names(List<? extends HasMetadata> objects) {
    return objects.stream()
        .map(o -> o.getMetadata().getNamespace() + "/" + o.getMetadata().getName())
        .collect(Collectors.toSet());
  }

  Informers caches() {
    return reconciler.informers();
  }

  void flood() {
    for (int i = 0; i < FLOOD; i++) {
      client
          .resource(
              new ConfigMapBuilder()
                  .withNewMetadata()
                  .withName("noise-" + i)
                  .withNamespace(ns)
                  .endMetadata()
                  .addToData("blob", BULK)
                  .build())
          .create();
    }
    for (int i = 0; i < 10; i++) {
      // pods the StatefulSet controller would label, of StatefulSets no policy targets
      client
          .resource(
              new PodBuilder()
                  .withNewMetadata()
                  .withName("other-" + i)
                  .withNamespace(ns)
                  .addToLabels(Informers.STATEFULSET_POD_LABEL, "other-" + i)
                  .addToAnnotations("blob", BULK)
                  .endMetadata()
                  .withNewSpec()
                  .addNewContainer()
                  .withName("c")
                  .withImage("busybox")
                  .endContainer()
                  .endSpec()
                  .build())
          .create();
      client
          .resource(
              new StatefulSetBuilder()
                  .withNewMetadata()
                  .withName("other-" + i)
                  .withNamespace(ns)
                  .addToAnnotations("blob", BULK)
                  .endMetadata()
                  .withNewSpec()
                  .withReplicas(0)
                  .withServiceName("other")
                  .withNewSelector()
                  .addToMatchLabels("app", "other-" + i)
                  .endSelector()
                  .withNewTemplate()
                  .withNewMetadata()
                  .addToLabels("app", "other-" + i)
                  .endMetadata()
                  .withNewSpec()
                  .addNewContainer()
                  .withName("c")
                  .withImage("busybox")
                  .endContainer()
                  .endSpec()
                  .endTemplate()
                  .endSpec()
                  .build())
          .create();
      // budgets of other pods, each with 100 KiB of annotations
      client
          .resource(
              new PodDisruptionBudgetBuilder()
                  .withNewMetadata()
                  .withName("other-" + i)
                  .withNamespace(ns)
                  .addToAnnotations("blob", BULK)
                  .endMetadata()
                  .withNewSpec()
                  .withNewSelector()
                  .addToMatchLabels("app", "other-" + i)
                  .endSelector()
                  .withMinAvailable(new IntOrString(1))
                  .endSpec()
                  .build())
          .create();
    }
  }

  @Test
  void aNamespaceFullOfObjectsNoPolicyNamesLeavesTheCachesAsTheyWere() {
    cluster("4Gi", false);
    operator(null);
    policy("cb", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("cb"));
    flood();
    // a budget whose selector is too large to keep: taken to select the RegionServers
    client
        .resource(
            new PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName("huge-selector")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withNewSelector()
                .addNewMatchExpression()
                .withKey("app")
                .withOperator("NotIn")
                .withValues(
                    java.util.stream.IntStream.range(0, 1000).mapToObj(i -> "v" + i).toList())
                .endMatchExpression()
                .endSelector()
                .withMinAvailable(new IntOrString(1))
                .endSpec()
                .build())
        .create();

    // the policy's base changes: the reconcile it triggers carries it into the derived ConfigMap
    client
        .configMaps()
        .inNamespace(ns)
        .withName("hbase-site")
        .edit(
            cm -> {
              cm.getData().put("log4j2.properties", "rootLogger.level=debug\n");
              return cm;
            });
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                "rootLogger.level=debug\n"
                    .equals(
                        client
                            .configMaps()
                            .inNamespace(ns)
                            .withName("cb-rs-site")
                            .get()
                            .getData()
                            .get("log4j2.properties")));

    // the new derived ConfigMap rolls the pods: their cache holds the three once they are back
    await()
        .atMost(Duration.ofSeconds(120))
        .until(() -> idleAndApplied("cb") && caches().pods().cached().size() == 3);
    assertThat(names(caches().configMaps().cached()))
        .as("ConfigMaps cached: the base and the derived one, none of the %d others", FLOOD)
        .containsExactlyInAnyOrder(ns + "/hbase-site", ns + "/cb-rs-site");
    assertThat(names(caches().statefulSets().cached())).containsExactly(ns + "/" + STS);
    assertThat(names(caches().pods().cached()))
        .containsExactlyInAnyOrder(ns + "/rs-0", ns + "/rs-1", ns + "/rs-2");
    List<PodDisruptionBudget> budgets = caches().budgets().list(ns).toList();
    assertThat(budgets).hasSizeGreaterThanOrEqualTo(11);
    assertThat(budgets)
        .allSatisfy(
            b -> {
              assertThat(Serialization.asJson(b).length())
                  .as("summary of budget %s", b.getMetadata().getName())
                  .isLessThanOrEqualTo(Informers.SUMMARY_BYTES_AT_MOST);
              assertThat(b.getMetadata().getManagedFields()).isNullOrEmpty();
            });
    assertThat(
            budgets.stream()
                .filter(b -> b.getMetadata().getName().equals("huge-selector"))
                .findFirst()
                .orElseThrow())
        .satisfies(b -> assertThat(DisruptionBudgetStep.tooLarge(b)).isNotNull());
    // taken to select the RegionServers: the operator keeps no budget of its own beside it
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                client
                        .policy()
                        .v1()
                        .podDisruptionBudget()
                        .inNamespace(ns)
                        .withName("cb-regionservers")
                        .get()
                    == null);
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "PodDisruptionBudgetExists".equals(e.getReason())
                            && e.getMessage().contains("huge-selector")
                            && e.getMessage().contains("not evaluated")));

    // another base: the old one is let go, the new one watched
    ConfigMap other = client.configMaps().inNamespace(ns).withName("hbase-site").get();
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("hbase-site-2")
                .withNamespace(ns)
                .endMetadata()
                .withData(other.getData())
                .build())
        .create();
    mergePatch("cb", "{\"spec\":{\"hbaseSiteConfigMap\":\"hbase-site-2\"}}");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                caches().configMaps().watchedNames().contains(ns + "/hbase-site-2")
                    && !caches().configMaps().watchedNames().contains(ns + "/hbase-site"));

    // the policy gone: nothing of it stays watched
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("cb").delete();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                caches().configMaps().watchedNames().isEmpty()
                    && caches().statefulSets().watchedNames().isEmpty()
                    && caches().pods().watchedNames().isEmpty());
  }
}
