package dev.hbase.cache.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The planner and the HBase line (spec.hbase.version), and the master keys against the user's base
 * hbase-site ({@link MasterSite}).
 */
class HBaseLineTest {

  static final String PERSISTENT = "  mode: PersistentFile\n  memory:\n    bucketCache: 4Gi\n";

  static BlockCachePolicy policy(String body) {
    try {
      return new com.fasterxml.jackson.databind.ObjectMapper(
              new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
          .readValue(PlannerTest.HEAD + body, BlockCachePolicy.class);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** Planned as the operator does once the HMaster has reported 2.6.4 ({@link MasterSiteTest}). */
  static PlanResult plan(String body, Map<String, String> base) {
    return plan(body, base, "2.6.4");
  }

  /**
   * @param masterVersion what the HMaster last reported ({@code status.masterVersion}), or null
   */
  static PlanResult plan(String body, Map<String, String> base, String masterVersion) {
    return Planner.plan(
        policy(body).getSpec(),
        Sizes.parse("16Gi"),
        null,
        JvmOptions.Trust.ALLOW_LIST,
        base,
        masterVersion);
  }

  static Plan planned(String body, Map<String, String> base) {
    return planned(body, base, "2.6.4");
  }

  static Plan planned(String body, Map<String, String> base, String masterVersion) {
    PlanResult r = plan(body, base, masterVersion);
    assertThat(r).as(body).isInstanceOf(Plan.class);
    return (Plan) r;
  }

  @Test
  void versionsMapToTheirLine() {
    assertThat(HBaseLine.of("2.5")).contains(HBaseLine.V2_5);
    assertThat(HBaseLine.of("2.5.13")).contains(HBaseLine.V2_5);
    assertThat(HBaseLine.of("2.5.13-hadoop3")).contains(HBaseLine.V2_5);
    assertThat(HBaseLine.of("2.6.4-hadoop3")).contains(HBaseLine.V2_6);
    assertThat(HBaseLine.of("2.4.18")).isEmpty();
    assertThat(HBaseLine.of("3.0.0")).isEmpty();
    assertThat(HBaseLine.of("2.55")).isEmpty();
  }

  @Test
  void onTwoFivePersistentFileIsRefusedNamingTheVersion() {
    PlanResult r = plan(PERSISTENT + "  hbase:\n    version: 2.5.13\n", Map.of());
    assertThat(r).isInstanceOf(Refusal.class);
    assertThat(((Refusal) r).summary())
        .contains("mode PersistentFile: HBase 2.5's BucketCache does not write its persistence map")
        .contains("use File");
    // the same policy for 2.6 (the default) is planned, with 2.6's keys once the master shows 2.6
    Plan six = planned(PERSISTENT, Map.of());
    assertThat(six.masterSite())
        .containsEntry("hbase.master.loadbalancer.class", MasterSite.CACHE_AWARE_BALANCER);
    assertThat(six.regionServerSite()).containsKey("hbase.bucketcache.persist.intervalinmillis");
    // an unknown line: refused offline as the CRD's CEL refuses it
    PlanResult old = plan(PERSISTENT + "  hbase:\n    version: 2.4.18\n", Map.of());
    assertThat(((Refusal) old).summary()).contains("hbase.version \"2.4.18\" is not a line");
  }

  /**
   * Every other mode writes only keys 2.5 reads (each found in the 2.5.13 hbase-server and
   * hbase-procedure jars): the plans of both lines are the same, and none carries a 2.6-only key.
   */
  @Test
  void theOtherModesArePlannedAlikeOnBothLinesWithKeysTwoFiveKnows() {
    java.util.Set<String> twoSixOnly =
        java.util.Set.of(
            "hbase.bucketcache.persist.intervalinmillis", "hbase.rsgroup.grouploadbalancer.class");
    for (String body :
        java.util.List.of(
            "  mode: Lru\n",
            "  mode: Offheap\n",
            "  mode: File\n  storage:\n    size: 20Gi\n",
            "  mode: MetaOnly\n")) {
      Plan five = planned(body + "  hbase:\n    version: \"2.5\"\n", Map.of());
      Plan six = planned(body, Map.of());
      assertThat(five.regionServerSite()).as(body).isEqualTo(six.regionServerSite());
      assertThat(five.masterSite()).as(body).isEqualTo(six.masterSite()).isEmpty();
      assertThat(five.regionServerSite().keySet()).as(body).doesNotContainAnyElementsOf(twoSixOnly);
      assertThat(five.configHash()).isEqualTo(six.configHash());
    }
  }

  @Test
  void aBalancerOfTheUsersOwnIsKept() {
    Map<String, String> base =
        Map.of(
            "hbase.master.loadbalancer.class", "com.example.OurBalancer",
            "hbase.master.balancer.stochastic.regionCountCost", "100");
    Plan p = planned(PERSISTENT, base);
    assertThat(p.masterSite())
        .doesNotContainKeys(
            "hbase.master.loadbalancer.class", "hbase.master.balancer.stochastic.regionCountCost");
    assertThat(p.warnings())
        .anySatisfy(
            w ->
                assertThat(w)
                    .contains("hbase.master.loadbalancer.class=com.example.OurBalancer: kept"));
  }

  @Test
  void theUsersRegionCountCostIsKept() {
    Plan p = planned(PERSISTENT, Map.of("hbase.master.balancer.stochastic.regionCountCost", "80"));
    assertThat(p.masterSite())
        .containsEntry("hbase.master.loadbalancer.class", MasterSite.CACHE_AWARE_BALANCER)
        .doesNotContainKey("hbase.master.balancer.stochastic.regionCountCost");
    assertThat(p.warnings()).anySatisfy(w -> assertThat(w).contains("regionCountCost=80: kept"));
  }

  @Test
  void withRegionServerGroupsTheCacheAwareBalancerGoesInsideEachGroup() {
    Map<String, String> base =
        Map.of(
            "hbase.master.loadbalancer.class",
            "org.apache.hadoop.hbase.rsgroup.RSGroupBasedLoadBalancer",
            "hbase.coprocessor.master.classes",
            "org.apache.hadoop.hbase.rsgroup.RSGroupAdminEndpoint");
    Plan p = planned(PERSISTENT, base);
    assertThat(p.masterSite())
        .doesNotContainKey("hbase.master.loadbalancer.class")
        .containsEntry("hbase.rsgroup.grouploadbalancer.class", MasterSite.CACHE_AWARE_BALANCER)
        .containsEntry("hbase.bucketcache.persistent.path", p.persistentPath());
    // a group balancer of their own stays too
    Map<String, String> own = new java.util.HashMap<>(base);
    own.put("hbase.rsgroup.grouploadbalancer.class", "com.example.GroupBalancer");
    Plan q = planned(PERSISTENT, own);
    assertThat(q.masterSite())
        .doesNotContainKeys(
            "hbase.master.loadbalancer.class", "hbase.rsgroup.grouploadbalancer.class");
    assertThat(q.warnings())
        .anySatisfy(
            w -> assertThat(w).contains("grouploadbalancer.class=com.example.GroupBalancer"));
  }

  @Test
  void theMastersVersionIsComparedWithThePolicysLine() {
    var spec = policy(PERSISTENT).getSpec();
    assertThat(HBaseLine.mismatch(spec, "2.6.4")).isEmpty();
    assertThat(HBaseLine.mismatch(spec, null)).isEmpty();
    assertThat(HBaseLine.mismatch(spec, "2.5.13"))
        .hasValueSatisfying(
            m ->
                assertThat(m)
                    .contains("the HMaster reports HBase 2.5.13")
                    .contains("planned for 2.6 (the default")
                    .contains("set spec.hbase.version to 2.5"));
    var five = policy(PERSISTENT + "  hbase:\n    version: \"2.5\"\n").getSpec();
    assertThat(HBaseLine.mismatch(five, "2.5.13")).isEmpty();
  }

  /** Only a PersistentFile plan for 2.6 on a master that reports 2.5 holds the roll. */
  @Test
  void onlyAPersistentPlanForTwoSixIsUnsafeOnATwoFiveMaster() {
    var unset = new dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec();
    unset.setMode(dev.hbase.cache.api.v1alpha1.CacheMode.PersistentFile);
    assertThat(HBaseLine.unsafe(unset, "2.5.13"))
        .hasValueSatisfying(
            m ->
                assertThat(m)
                    .contains(
                        "HBase 2.5.13",
                        "spec.hbase.version is unset",
                        "Set spec.hbase.version to 2.5"));
    assertThat(HBaseLine.unsafe(unset, "2.6.4")).isEmpty();
    assertThat(HBaseLine.unsafe(unset, null)).as("no version reported").isEmpty();
    assertThat(HBaseLine.unsafe(unset, "2.6.0.7.3.1.0-197"))
        .as("a vendor's version: its line unknown, a warning only")
        .isEmpty();
    var offheap = new dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec();
    offheap.setMode(dev.hbase.cache.api.v1alpha1.CacheMode.Offheap);
    assertThat(HBaseLine.unsafe(offheap, "2.5.13")).as("the same keys on both lines").isEmpty();
    var explicit = new dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec();
    explicit.setMode(dev.hbase.cache.api.v1alpha1.CacheMode.PersistentFile);
    explicit.setHbase(new dev.hbase.cache.api.v1alpha1.spec.HBaseSpec());
    explicit.getHbase().setVersion("2.6");
    assertThat(HBaseLine.unsafe(explicit, "2.5.11"))
        .hasValueSatisfying(m -> assertThat(m).contains("(spec.hbase.version 2.6)"));
  }
}
