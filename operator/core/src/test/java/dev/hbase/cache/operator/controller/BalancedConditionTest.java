package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The Balanced condition: every Ready RegionServer within one region of the mean, from the region
 * counts of the last sample; not judged while a server is in flight.
 */
class BalancedConditionTest {

  static BlockCachePolicy policy(RolloutStatus rollout, Integer... regions) {
    List<RegionServerStatus> rows = new ArrayList<>();
    for (int i = 0; i < regions.length; i++) {
      rows.add(new RegionServerStatus().setPod("rs-" + i).setReady(true).setRegions(regions[i]));
    }
    BlockCachePolicy p = new BlockCachePolicy();
    p.getMetadata().setGeneration(1L);
    p.setStatus(new BlockCachePolicyStatus().setRollout(rollout).setRegionServers(rows));
    return p;
  }

  static Optional<Condition> balanced(BlockCachePolicy p) {
    BlockCachePolicyStatus s = new StatusAggregator(p, Instant.now()).balance().status();
    return Conditions.find(s.getConditions(), Conditions.BALANCED);
  }

  @Test
  void withinOneOfTheMeanIsBalanced() {
    Condition c = balanced(policy(null, 3, 3, 2)).orElseThrow();
    assertThat(c.getStatus()).isEqualTo("True");
    assertThat(c.getReason()).isEqualTo("RegionsEven");
    assertThat(c.getMessage()).contains("rs-0 3, rs-1 3, rs-2 2 (mean 2.7)");
  }

  @Test
  void aServerWithNoneWhileTheOthersHoldFourIsSkewed() {
    // what HBase's balancer left after a kind roll (issue 28): 0/4/4
    Condition c = balanced(policy(null, 0, 4, 4)).orElseThrow();
    assertThat(c.getStatus()).isEqualTo("False");
    assertThat(c.getReason()).isEqualTo("RegionsSkewed");
    assertThat(c.getMessage()).endsWith("more than one off: rs-0, rs-1, rs-2");
  }

  @Test
  void notJudgedWhileAServerIsInFlightOrWithOneCountedServer() {
    RolloutStatus rolling =
        new RolloutStatus().setInFlight(new ArrayList<>(List.of(new PodRoll().setPod("rs-0"))));
    assertThat(balanced(policy(rolling, 0, 4, 4))).isEmpty();
    assertThat(balanced(policy(null, 5, null))).isEmpty();
  }

  @Test
  void notJudgedWhileAReadyServerHasNoCountYet() {
    // seen on kind after a scale-up 2 -> 3: "rs-0 3, rs-1 5 (mean 4.0), each within one of it"
    // while the returned rs-2 was Ready and not yet sampled
    assertThat(balanced(policy(null, 3, 5, null))).isEmpty();
    // a server that is not Ready is not judged (nor waited for)
    BlockCachePolicy p = policy(null, 3, 3, null);
    p.getStatus().getRegionServers().get(2).setReady(false);
    assertThat(balanced(p)).map(Condition::getStatus).contains("True");
  }
}
