package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.metrics.CacheProbe;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** One namespace's share of the reconcile threads ({@link NamespaceShare}). */
class NamespaceShareTest {

  @Test
  void aNamespaceHoldsAtMostItsShareAndOthersAreNotCounted() {
    NamespaceShare share = new NamespaceShare(3);
    assertThat(share.enter("noisy")).isTrue();
    assertThat(share.enter("noisy")).isTrue();
    assertThat(share.enter("noisy")).isTrue();
    assertThat(share.enter("noisy")).as("the fourth of a share of 3").isFalse();
    assertThat(share.enter("quiet")).as("another namespace's first").isTrue();
    assertThat(share.turnedAway()).isEqualTo(1);
    share.exit("noisy");
    assertThat(share.running("noisy")).isEqualTo(2);
    assertThat(share.enter("noisy")).as("a place given back is taken again").isTrue();
    share.exit("noisy");
    share.exit("noisy");
    share.exit("noisy");
    share.exit("noisy"); // one more exit than enters: no negative count
    assertThat(share.running("noisy")).isZero();
    assertThat(share.enter("noisy")).isTrue();
    assertThat(share.retryAfter()).isBetween(Duration.ofSeconds(1), Duration.ofMillis(1_500));
  }

  /**
   * The reconciler asks the share before anything else: with its namespace's share taken, a
   * reconcile reads and writes nothing (here: it does not touch the absent JOSDK context) and comes
   * back later; a policy of another namespace goes on (here: as far as the missing context).
   */
  @Test
  void theReconcilerTurnsAwayAPolicyWhoseNamespacesShareIsTaken() {
    var reconciler =
        new BlockCachePolicyReconciler(
            Clock.systemUTC(),
            (settings, login) -> {
              throw new AssertionError("no HBase");
            },
            new CacheProbe() {
              @Override
              public CacheSample scrape(String host, int port) throws IOException {
                throw new AssertionError("no info server");
              }
            });
    for (int i = 0; i < NamespaceShare.PER_NAMESPACE; i++) {
      assertThat(reconciler.share.enter("noisy")).isTrue();
    }

    UpdateControl<BlockCachePolicy> away = reconciler.reconcile(policy("noisy"), null);
    assertThat(away.isNoUpdate()).isTrue();
    assertThat(away.getScheduleDelay())
        .hasValueSatisfying(ms -> assertThat(ms).isBetween(1_000L, 1_500L));
    assertThat(reconciler.reconcilesTurnedAway()).isEqualTo(1);
    assertThat(reconciler.share.running("noisy")).isEqualTo(NamespaceShare.PER_NAMESPACE);

    assertThatThrownBy(() -> reconciler.reconcile(policy("quiet"), null))
        .as("admitted: the reconcile goes on to read its context")
        .isInstanceOf(NullPointerException.class);
    assertThat(reconciler.share.running("quiet")).as("its place given back").isZero();
  }

  private static BlockCachePolicy policy(String namespace) {
    BlockCachePolicy p = new BlockCachePolicy();
    p.setMetadata(new ObjectMetaBuilder().withName("cache").withNamespace(namespace).build());
    return p;
  }
}
