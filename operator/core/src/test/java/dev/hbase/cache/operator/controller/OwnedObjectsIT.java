package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Objects the operator writes only when they are its own (issue 25, split from {@link
 * ConfinedDeputyIT}), on a real API server: a ConfigMap or PodDisruptionBudget of the name the
 * policy derives that another team made is left alone (Degraded ObjectNotOwned, a Warning), a base
 * ConfigMap switched under the policy does not reach the pods through the derived one, and a policy
 * in a namespace the operator does not watch gets nothing.
 */
@EnableKubeAPIServer
class OwnedObjectsIT extends OperatorHarness {

  /**
   * Another team's ConfigMap that happens to carry the name the policy derives ({@code
   * <policy>-rs-site}) is not written over: Degraded ObjectNotOwned names it, the StatefulSet is
   * untouched.
   */
  @Test
  void aConfigMapOfTheDerivedNameThatIsNotOursIsLeftAlone() {
    cluster("4Gi", false);
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("team-rs-site")
                .withNamespace(ns)
                .endMetadata()
                .addToData("secret-sauce", "1")
                .build())
        .create();
    Long before = sts().getMetadata().getGeneration();
    operator(null);
    policy("team", "  mode: Lru\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> reason("team", "Degraded", "True").equals("ObjectNotOwned"));
    assertThat(conditionMessage("team", "Degraded")).contains(ns + "/team-rs-site");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "ObjectNotOwned".equals(e.getReason())
                            && e.getMessage().contains("team-rs-site")));
    ConfigMap cm = client.configMaps().inNamespace(ns).withName("team-rs-site").get();
    assertThat(cm.getData()).containsExactly(Map.entry("secret-sauce", "1"));
    assertUntouched(before);
  }

  /**
   * A ConfigMap planted under the derived name with the operator's labels and a file of its own (it
   * would be mounted into every RegionServer, and a server-side apply leaves keys it does not
   * send): not written over, Degraded names it.
   */
  @Test
  void aLabelledConfigMapOfTheDerivedNameWithAFileOfItsOwnIsLeftAlone() {
    cluster("4Gi", false);
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("team-rs-site")
                .withNamespace(ns)
                .addToLabels(
                    dev.hbase.cache.operator.render.Desired.MANAGED_BY, "hbase-cache-operator")
                .addToLabels(dev.hbase.cache.operator.render.Desired.POLICY_LABEL, "team")
                .endMetadata()
                .addToData("log4j2.component.properties", "log4j2.configurationFile=http://x/l.xml")
                .build())
        .create();
    Long before = sts().getMetadata().getGeneration();
    operator(null);
    policy("team", "  mode: Lru\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> reason("team", "Degraded", "True").equals("ObjectNotOwned"));
    assertThat(client.configMaps().inNamespace(ns).withName("team-rs-site").get().getData())
        .containsOnlyKeys("log4j2.component.properties");
    assertUntouched(before);
  }

  /**
   * Once the RegionServers mount the derived ConfigMap, pointing spec.hbaseSiteConfigMap at another
   * ConfigMap of the author's does not carry its files into them: that takes an edit of the
   * StatefulSet's config volume.
   */
  @Test
  void anotherBaseConfigMapDoesNotReachRegionServersThatMountTheDerivedOne() {
    cluster("4Gi", false);
    operator(null);
    policy("base", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("base"));
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("evil-site")
                .withNamespace(ns)
                .endMetadata()
                .addToData("hbase-site.xml", BASE_SITE)
                .addToData("core-site.xml", "<configuration/>")
                .build())
        .create();
    Long before = sts().getMetadata().getGeneration();
    int deletes = kube.deletes.size();
    mergePatch("base", "{\"spec\":{\"hbaseSiteConfigMap\":\"evil-site\"}}");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> reason("base", "Valid", "False").equals("ConfigVolumeNotFound"));
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> true);
    assertThat(client.configMaps().inNamespace(ns).withName("base-rs-site").get().getData())
        .doesNotContainKey("core-site.xml");
    assertThat(sts().getMetadata().getGeneration()).isEqualTo(before);
    assertThat(kube.deletes).hasSize(deletes);
  }

  /**
   * A PodDisruptionBudget of the policy's budget name that is not the policy's is neither taken
   * over nor deleted; the roll goes on, Degraded names the budget.
   */
  @Test
  void aBudgetOfThePolicysNameThatIsNotOursIsLeftAlone() {
    cluster("4Gi", false);
    PodDisruptionBudget theirs =
        client
            .resource(
                new PodDisruptionBudgetBuilder()
                    .withNewMetadata()
                    .withName("pdb-regionservers")
                    .withNamespace(ns)
                    .endMetadata()
                    .withNewSpec()
                    .withNewSelector()
                    .addToMatchLabels("app", "someone-else")
                    .endSelector()
                    .withMinAvailable(new IntOrString(5))
                    .endSpec()
                    .build())
            .create();
    operator(null);
    policy("pdb", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> idle("pdb"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> reason("pdb", "Degraded", "True").equals("ObjectNotOwned"));
    assertThat(conditionMessage("pdb", "Degraded")).contains(ns + "/pdb-regionservers");
    PodDisruptionBudget now =
        client
            .policy()
            .v1()
            .podDisruptionBudget()
            .inNamespace(ns)
            .withName("pdb-regionservers")
            .get();
    assertThat(now.getMetadata().getUid()).isEqualTo(theirs.getMetadata().getUid());
    assertThat(now.getSpec()).isEqualTo(theirs.getSpec());
    assertThat(now.getMetadata().getOwnerReferences()).isNullOrEmpty();
  }

  /** The operator watches its namespaces only: a policy elsewhere gets no status, no write. */
  @Test
  void aPolicyInANamespaceTheOperatorDoesNotWatchIsLeftAlone() {
    cluster("4Gi", false);
    String watched = ns;
    operator(null); // watches `watched` only
    cluster("4Gi", false); // a second namespace, same objects
    Long before = sts().getMetadata().getGeneration();
    policy("elsewhere", "  mode: Lru\n");
    await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(10)).until(() -> true);
    assertThat(get("elsewhere").getStatus()).isNull();
    assertThat(client.configMaps().inNamespace(ns).withName("elsewhere-rs-site").get()).isNull();
    assertUntouched(before);
    assertThat(watched).isNotEqualTo(ns);
  }
}
