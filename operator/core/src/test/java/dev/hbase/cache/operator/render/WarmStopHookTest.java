package dev.hbase.cache.operator.render;

import static dev.hbase.cache.operator.render.CacheMapGuardTest.HEAD;
import static dev.hbase.cache.operator.render.CacheVolumeGroupTest.PERSISTENT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

/**
 * The preStop hook that makes every stop a warm stop: rendered with DrainAndReload, the grace
 * period raised by its bound, never over a hook of the template's own. (What the script does is
 * checked against a real RegionServer in make test-hbase: WarmStopHookIT.)
 */
class WarmStopHookTest {
  static final Container BARE = CacheVolumeGroupTest.BARE;

  static PodSpec render(String rollout, Container regionServer, int infoPort) {
    BlockCachePolicy policy =
        Serialization.unmarshal(
            HEAD + "  mode: PersistentFile\n" + rollout, BlockCachePolicy.class);
    return Desired.regionServerPatch(
            policy, PERSISTENT, "rev", regionServer, "conf", null, infoPort)
        .getSpec()
        .getTemplate()
        .getSpec();
  }

  @Test
  void drainAndReloadGetsTheHookWithTheInfoPortAndAGracePeriodLongerByItsBound() {
    PodSpec spec = render("", BARE, 16031);
    var hook = spec.getContainers().get(0).getLifecycle().getPreStop().getExec().getCommand();
    assertThat(hook)
        .containsExactly(
            "bash",
            "-c",
            Desired.WARM_STOP_SCRIPT,
            Desired.WARM_STOP,
            "16031",
            Long.toString(Desired.WARM_STOP_SECONDS),
            Long.toString(Desired.WARM_STOP_STALL_SECONDS));
    assertThat(spec.getTerminationGracePeriodSeconds())
        .isEqualTo(PERSISTENT.terminationGracePeriodSeconds() + Desired.WARM_STOP_SECONDS);
  }

  @Test
  void inPlaceGetsNoHookAndThePlansGracePeriod() {
    PodSpec spec = render("  rollout:\n    strategy: InPlace\n", BARE, 16030);
    assertThat(spec.getContainers().get(0).getLifecycle()).isNull();
    assertThat(spec.getTerminationGracePeriodSeconds())
        .isEqualTo(PERSISTENT.terminationGracePeriodSeconds());
  }

  @Test
  void aHookOfTheTemplatesOwnIsKept() {
    Container withMover =
        new ContainerBuilder(BARE)
            .withNewLifecycle()
            .withNewPreStop()
            .withNewExec()
            .withCommand("/stackable/hbase/bin/hbase", "org.apache.hadoop.hbase.util.RegionMover")
            .endExec()
            .endPreStop()
            .endLifecycle()
            .build();
    PodSpec spec = render("", withMover, 16030);
    assertThat(spec.getContainers().get(0).getLifecycle()).as("the patch sets no hook").isNull();
    assertThat(spec.getTerminationGracePeriodSeconds())
        .isEqualTo(PERSISTENT.terminationGracePeriodSeconds());
  }

  @Test
  void theOperatorsOwnHookFromAnEarlierApplyIsRenderedAgain() {
    Container applied =
        new ContainerBuilder(BARE)
            .withLifecycle(Desired.warmStop(policy(), BARE, 16030).orElseThrow())
            .build();
    PodSpec spec = render("", applied, 16030);
    assertThat(spec.getContainers().get(0).getLifecycle().getPreStop().getExec().getCommand())
        .contains(Desired.WARM_STOP);
  }

  private static BlockCachePolicy policy() {
    return Serialization.unmarshal(HEAD + "  mode: PersistentFile\n", BlockCachePolicy.class);
  }
}
