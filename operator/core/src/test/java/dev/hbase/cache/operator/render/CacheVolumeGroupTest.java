package dev.hbase.cache.operator.render;

import static dev.hbase.cache.operator.render.CacheMapGuardTest.HEAD;
import static dev.hbase.cache.operator.render.CacheMapGuardTest.plan;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.plan.Plan;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

/**
 * The cache volume's group: a non-root RegionServer can write its cache file on storage whose
 * volumes are root-owned and not world-writable (make e2e proves it on such volumes on kind).
 */
class CacheVolumeGroupTest {
  static final Plan PERSISTENT =
      plan("  mode: PersistentFile\n  memory:\n    bucketCache: 2Gi\n  storage:\n    size: 4Gi\n");

  /** As charts/hbase runs the RegionServer: user 10001, group 0, set on the pod. */
  static final PodSecurityContext CHART =
      new PodSecurityContextBuilder()
          .withRunAsUser(10001L)
          .withRunAsGroup(0L)
          .withRunAsNonRoot(true)
          .build();

  static final Container BARE = new ContainerBuilder().withName("regionserver").build();

  @Test
  void aPvcCacheOfANonRootServerGetsItsGroupAsFsGroupChangedOnlyOnARootMismatch() {
    var spec =
        Desired.regionServerPatch(
                Serialization.unmarshal(HEAD + "  mode: PersistentFile\n", BlockCachePolicy.class),
                PERSISTENT,
                "rev",
                BARE,
                "conf",
                CHART)
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(spec.getSecurityContext().getFsGroup()).isEqualTo(0L);
    assertThat(spec.getSecurityContext().getFsGroupChangePolicy()).isEqualTo("OnRootMismatch");
    // only the fields the operator owns: the chart keeps its runAsUser & co.
    assertThat(spec.getSecurityContext().getRunAsUser()).isNull();
  }

  @Test
  void theGroupIsTheContainersOwnBeforeThePods() {
    Container own =
        new ContainerBuilder()
            .withName("regionserver")
            .withNewSecurityContext()
            .withRunAsUser(2000L)
            .endSecurityContext()
            .build();
    assertThat(Desired.cacheVolumeGroup(PERSISTENT, CHART, own))
        .as("the container's user, the pod's group")
        .contains(0L);
    assertThat(Desired.cacheVolumeGroup(PERSISTENT, null, own))
        .as("no group anywhere: the user's id")
        .contains(2000L);
    assertThat(
            Desired.cacheVolumeGroup(
                PERSISTENT, new PodSecurityContextBuilder().withRunAsUser(10001L).build(), BARE))
        .contains(10001L);
  }

  @Test
  void nothingForRootAnUnknownUserTmpfsNoCacheOrAnotherFsGroupOfTheTemplate() {
    assertThat(
            Desired.cacheVolumeGroup(
                PERSISTENT, new PodSecurityContextBuilder().withRunAsUser(0L).build(), BARE))
        .as("root writes anyway")
        .isEmpty();
    assertThat(Desired.cacheVolumeGroup(PERSISTENT, null, BARE))
        .as("the image's user, unknown here")
        .isEmpty();
    assertThat(
            Desired.cacheVolumeGroup(
                plan("  mode: File\n  storage:\n    medium: Memory\n    size: 1Gi\n"), CHART, BARE))
        .as("tmpfs")
        .isEmpty();
    assertThat(Desired.cacheVolumeGroup(plan("  mode: Offheap\n"), CHART, BARE))
        .as("no cache volume")
        .isEmpty();
    assertThat(
            Desired.cacheVolumeGroup(
                PERSISTENT, new PodSecurityContextBuilder(CHART).withFsGroup(3000L).build(), BARE))
        .as("the template's own fsGroup")
        .isEmpty();
    assertThat(
            Desired.cacheVolumeGroup(
                PERSISTENT, new PodSecurityContextBuilder(CHART).withFsGroup(0L).build(), BARE))
        .as("the operator's own from an earlier apply: applied again, or the apply would drop it")
        .contains(0L);
  }
}
