package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.PlanStatus;
import dev.hbase.cache.operator.controller.Observation.Observed;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlanStepTest {
  static final BlockCachePolicy POLICY =
      Serialization.unmarshal(
          "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata: {name: p, namespace: ns}\n"
              + "spec:\n  targetRef: {name: rs}\n  hbaseSiteConfigMap: hbase-site\n  mode: PersistentFile\n"
              + "  memory: {bucketCache: 640Mi}\n  storage: {size: 2Gi}\n",
          BlockCachePolicy.class);

  static Observed observed(String limit) {
    Container c =
        new ContainerBuilder()
            .withName("regionserver")
            .withNewResources()
            .addToLimits("memory", new Quantity(limit))
            .addToRequests("memory", new Quantity(limit))
            .endResources()
            .build();
    return new Observed(
        POLICY,
        null,
        new ConfigMapBuilder()
            .withNewMetadata()
            .withName("hbase-site")
            .endMetadata()
            .addToData("hbase-site.xml", "<configuration></configuration>")
            .build(),
        c,
        "config",
        List.of(),
        List.of());
  }

  /**
   * The revision pods are compared against is of the base's files with the plan's hbase-site, as
   * before the derived ConfigMap held per-revision keys: the keys of other revisions never enter it
   * (a roll for each pod that left an older plan), and an upgrade finds the revision its pods run.
   */
  @Test
  void theRevisionIsOfTheCurrentFilesAsBeforePerRevisionKeys() {
    PlanStep.Planned p = (PlanStep.Planned) PlanStep.plan(observed("4Gi"), null);
    assertThat(p.siteData()).containsOnlyKeys("hbase-site.xml");
    assertThat(p.siteData().keySet())
        .noneMatch(dev.hbase.cache.operator.render.RevisionFiles::isRevisionKey);
    assertThat(p.revision())
        .isEqualTo(dev.hbase.cache.operator.render.Desired.revision(p.plan(), p.siteData(), null));
  }

  @Test
  void aLimitTheLastPlanDidNotHaveSaysWhatARestartWouldStartWith() {
    PlanStep.Planned before = (PlanStep.Planned) PlanStep.plan(observed("4Gi"), null);
    PlanStatus applied = before.plan().toStatus();
    assertThat(applied.getMemoryLimit()).isEqualTo("4Gi");

    // helm upgrade lowered the limit below what the policy needs
    PlanStep.Result now = PlanStep.plan(observed("1Gi"), applied);
    assertThat(now).isInstanceOf(PlanStep.Refused.class);
    PlanStep.Refused r = (PlanStep.Refused) now;
    assertThat(r.reason().name()).isEqualTo("MemoryLimitRefused");
    assertThat(r.message())
        .contains("changed from 4Gi to 1Gi")
        .contains("heap " + applied.getHeap())
        .contains("may be OOM-killed");

    // a policy refused from the start has nothing applied yet: the planner's reason alone
    assertThat(((PlanStep.Refused) PlanStep.plan(observed("1Gi"), null)).reason().name())
        .isEqualTo("PlanRefused");
  }
}
