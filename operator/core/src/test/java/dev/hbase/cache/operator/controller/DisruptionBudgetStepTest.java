package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DisruptionBudgetStepTest {

  static final Map<String, String> POD = Map.of("app", "hbase", "component", "regionserver");

  static BlockCachePolicy policy(String rollout) {
    return Serialization.unmarshal(
        "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata:\n  name: p\n"
            + "  namespace: ns\n  uid: u-1\nspec:\n  targetRef:\n    name: rs\n"
            + "  hbaseSiteConfigMap: hbase-site\n  mode: Lru\n"
            + rollout,
        BlockCachePolicy.class);
  }

  static StatefulSet target(int replicas) {
    return new StatefulSetBuilder()
        .withNewMetadata()
        .withName("rs")
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withNewSelector()
        .addToMatchLabels("component", "regionserver")
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(POD)
        .endMetadata()
        .endTemplate()
        .endSpec()
        .build();
  }

  static PodDisruptionBudget other(String name, LabelSelector s) {
    return new PodDisruptionBudgetBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withSelector(s)
        .endSpec()
        .build();
  }

  @Test
  void selectorsAreEvaluatedAsTheApiServerDoes() {
    assertThat(DisruptionBudgetStep.selects(null, POD)).as("no selector: none").isFalse();
    assertThat(DisruptionBudgetStep.selects(new LabelSelector(), POD)).as("empty: all").isTrue();
    assertThat(
            DisruptionBudgetStep.selects(
                new LabelSelectorBuilder().addToMatchLabels("app", "hbase").build(), POD))
        .isTrue();
    assertThat(
            DisruptionBudgetStep.selects(
                new LabelSelectorBuilder().addToMatchLabels("app", "other").build(), POD))
        .isFalse();
    LabelSelector in =
        new LabelSelectorBuilder()
            .addNewMatchExpression()
            .withKey("component")
            .withOperator("In")
            .withValues("master", "regionserver")
            .endMatchExpression()
            .build();
    assertThat(DisruptionBudgetStep.selects(in, POD)).isTrue();
    LabelSelector notIn =
        new LabelSelectorBuilder()
            .addNewMatchExpression()
            .withKey("component")
            .withOperator("NotIn")
            .withValues("regionserver")
            .endMatchExpression()
            .build();
    assertThat(DisruptionBudgetStep.selects(notIn, POD)).isFalse();
    LabelSelector missing =
        new LabelSelectorBuilder()
            .addNewMatchExpression()
            .withKey("tier")
            .withOperator("DoesNotExist")
            .endMatchExpression()
            .build();
    assertThat(DisruptionBudgetStep.selects(missing, POD)).isTrue();
  }

  @Test
  void theBudgetIsTheRollersAndGivesWayToAnotherOne() {
    var d = DisruptionBudgetStep.decide(policy(""), target(3), List.of());
    assertThat(d.desired().getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
    assertThat(d.desired().getSpec().getSelector()).isEqualTo(target(3).getSpec().getSelector());
    assertThat(d.desired().getMetadata().getOwnerReferences().get(0).getUid()).isEqualTo("u-1");

    assertThat(
            DisruptionBudgetStep.decide(
                    policy("  rollout:\n    maxUnavailable: 5\n"), target(3), List.of())
                .desired()
                .getSpec()
                .getMaxUnavailable()
                .getIntVal())
        .as("never every server")
        .isEqualTo(2);

    var withOurs =
        DisruptionBudgetStep.decide(
            policy(""),
            target(3),
            List.of(other("p-regionservers", target(3).getSpec().getSelector())));
    assertThat(withOurs.desired()).as("our own is not another one").isNotNull();

    var withOther =
        DisruptionBudgetStep.decide(
            policy(""),
            target(3),
            List.of(
                other("zk", new LabelSelectorBuilder().addToMatchLabels("app", "zk").build()),
                other(
                    "all-hbase",
                    new LabelSelectorBuilder().addToMatchLabels("app", "hbase").build())));
    assertThat(withOther.desired()).isNull();
    assertThat(withOther.others()).containsExactly("all-hbase");

    assertThat(
            DisruptionBudgetStep.decide(
                    policy("  rollout:\n    podDisruptionBudget: false\n"), target(3), List.of())
                .desired())
        .isNull();
  }
}
