package dev.hbase.cache.operator.plan;

import static dev.hbase.cache.operator.plan.HBaseLineTest.PERSISTENT;
import static dev.hbase.cache.operator.plan.HBaseLineTest.planned;
import static dev.hbase.cache.operator.plan.HBaseLineTest.policy;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 52, the master side: the HMaster's keys that only HBase 2.6 has (the CacheAwareLoadBalancer
 * and what goes with it; a 2.5 master configured with it does not start, HBaseLineIT) are written
 * for a master the operator has seen run 2.6 or that spec.hbase.version says runs it, never for one
 * seen on 2.5, and, with spec.hbase.version unset, not before the master was seen. The version
 * comes in as the planner's input ({@code status.masterVersion}); the pods' revision does not
 * depend on it.
 */
class MasterSiteTest {

  /** The keys every line reads (the master's batching waits): always written. */
  static final Set<String> NEUTRAL =
      Set.of("hbase.assignment.dispatch.wait.msec", "hbase.procedure.remote.dispatcher.delay.msec");

  static final String NAMED_26 = PERSISTENT + "  hbase:\n    version: \"2.6\"\n";

  @Test
  void anUnsetVersionGetsTheKeysOfTwoSixOnlyOnceTheMasterIsSeenRunningTwoSix() {
    Plan unseen = planned(PERSISTENT, Map.of(), null);
    assertThat(unseen.masterSite()).containsOnlyKeys(NEUTRAL);
    assertThat(unseen.warnings())
        .anySatisfy(
            w ->
                assertThat(w)
                    .contains(
                        "the master keys only HBase 2.6 has (the CacheAwareLoadBalancer",
                        "spec.hbase.version is unset and the operator has not yet seen the HMaster",
                        "written once the master reports 2.6",
                        "Set spec.hbase.version to 2.6 to write them at once"));
    assertThat(planned(PERSISTENT, Map.of(), " ").masterSite())
        .as("a blank version is none")
        .containsOnlyKeys(NEUTRAL);

    Plan six = planned(PERSISTENT, Map.of(), "2.6.4-hadoop3");
    assertThat(six.masterSite())
        .containsEntry(MasterSite.BALANCER, MasterSite.CACHE_AWARE_BALANCER)
        .containsEntry(MasterSite.REGION_COUNT_COST, "500")
        .containsEntry("hbase.bucketcache.persistent.path", six.persistentPath())
        .containsKeys(NEUTRAL.toArray(String[]::new));
    assertThat(six.warnings()).noneSatisfy(w -> assertThat(w).contains("2.6 has"));

    Plan five = planned(PERSISTENT, Map.of(), "2.5.13");
    assertThat(five.masterSite()).containsOnlyKeys(NEUTRAL);
    assertThat(five.warnings())
        .anySatisfy(
            w ->
                assertThat(w)
                    .contains(
                        "the HMaster reports HBase 2.5.13 but the policy is planned for 2.6",
                        "spec.hbase.version is unset",
                        "set spec.hbase.version to 2.5",
                        "are not written: a 2.5 master configured with the CacheAwareLoadBalancer"
                            + " does not start"));

    Plan vendor = planned(PERSISTENT, Map.of(), "2.6.0.7.3.1.0-197");
    assertThat(vendor.masterSite()).as("a version of no known line").containsOnlyKeys(NEUTRAL);
    assertThat(vendor.warnings())
        .anySatisfy(w -> assertThat(w).contains("cannot tell which line 2.6.0.7.3.1.0-197 is"));

    // the RegionServers' plan and the pods' revision do not move with what the master reported
    for (Plan p : new Plan[] {six, five, vendor}) {
      assertThat(p.regionServerSite()).isEqualTo(unseen.regionServerSite());
      assertThat(p.configHash()).isEqualTo(unseen.configHash());
    }
  }

  @Test
  void aNamedTwoSixIsBelievedUntilTheMasterIsSeenOnTwoFive() {
    for (String v : new String[] {null, "2.6.4", "2.6.0.7.3.1.0-197"}) {
      assertThat(planned(NAMED_26, Map.of(), v).masterSite())
          .as("spec.hbase.version 2.6, the master reporting %s", v)
          .containsEntry(MasterSite.BALANCER, MasterSite.CACHE_AWARE_BALANCER);
    }
    Plan five = planned(NAMED_26, Map.of(), "2.5.11");
    assertThat(five.masterSite()).containsOnlyKeys(NEUTRAL);
    assertThat(five.warnings())
        .anySatisfy(
            w ->
                assertThat(w)
                    .contains("the HMaster reports HBase 2.5.11", "(spec.hbase.version 2.6)"));
  }

  @Test
  void underRegionServerGroupsNothingOfTwoSixGoesInBeforeTheMasterIsSeen() {
    Map<String, String> base = Map.of(MasterSite.BALANCER, MasterSite.RSGROUP_BALANCER);
    assertThat(planned(PERSISTENT, base, null).masterSite()).containsOnlyKeys(NEUTRAL);
    assertThat(planned(PERSISTENT, base, "2.6.4").masterSite())
        .containsEntry(MasterSite.GROUP_BALANCER, MasterSite.CACHE_AWARE_BALANCER);
  }

  /** What the roll step asks the master for, and when the master is pointed at its site. */
  @Test
  void theMasterIsAskedWhileTheKeysWaitAndPointedAtItsSiteOnceSeen() {
    var unset = policy(PERSISTENT).getSpec();
    assertThat(MasterSite.awaitsMaster(unset, null)).isTrue();
    assertThat(MasterSite.unseen(unset, null)).isTrue();
    assertThat(MasterSite.awaitsMaster(unset, "2.6.4")).isFalse();
    assertThat(MasterSite.unseen(unset, "2.6.4")).isFalse();
    // seen on 2.5: still asked (an upgrade to 2.6 shows), the master pointed at the neutral keys
    assertThat(MasterSite.awaitsMaster(unset, "2.5.13")).isTrue();
    assertThat(MasterSite.unseen(unset, "2.5.13")).isFalse();

    var named = policy(NAMED_26).getSpec();
    assertThat(MasterSite.awaitsMaster(named, null)).isFalse();
    assertThat(MasterSite.unseen(named, null)).isFalse();

    var offheap = policy("  mode: Offheap\n").getSpec();
    assertThat(MasterSite.awaitsMaster(offheap, null)).as("no master keys to wait for").isFalse();
    var noMaster = policy(PERSISTENT).getSpec().setMasterRef(null);
    assertThat(MasterSite.awaitsMaster(noMaster, null)).isFalse();
    assertThat(MasterSite.unseen(noMaster, null)).isFalse();
  }
}
