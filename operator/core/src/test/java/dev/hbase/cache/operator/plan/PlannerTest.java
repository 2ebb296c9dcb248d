package dev.hbase.cache.operator.plan;

import static dev.hbase.cache.operator.plan.Sizes.GiB;
import static dev.hbase.cache.operator.plan.Sizes.MiB;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.cli.PlanCommand;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class PlannerTest {

  static final String HEAD =
      "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata:\n  name: p\nspec:\n"
          + "  targetRef:\n    name: rs\n  masterRef:\n    name: master\n  hbaseSiteConfigMap: hbase-site\n";

  static PlanResult plan(String body, String limit) {
    return PlanCommand.plan(HEAD + body, limit == null ? null : Sizes.parse(limit), null);
  }

  static Plan planned(String body, String limit) {
    PlanResult r = plan(body, limit);
    assertThat(r).as("%s at %s", body, limit).isInstanceOf(Plan.class);
    return (Plan) r;
  }

  static Refusal refused(String body, String limit) {
    PlanResult r = plan(body, limit);
    assertThat(r).as("%s at %s", body, limit).isInstanceOf(Refusal.class);
    return (Refusal) r;
  }

  // ---------------------------------------------------------------- every mode at 4, 16, 64Gi

  static Stream<Arguments> modesAndLimits() {
    Map<CacheMode, String> bodies =
        Map.of(
            CacheMode.Lru, "  mode: Lru\n",
            CacheMode.Offheap, "  mode: Offheap\n",
            CacheMode.File, "  mode: File\n  storage:\n    size: 100Gi\n",
            CacheMode.PersistentFile, "  mode: PersistentFile\n  memory:\n    bucketCache: 50Gi\n",
            CacheMode.MetaOnly, "  mode: MetaOnly\n");
    return Stream.of("4Gi", "16Gi", "64Gi")
        .flatMap(
            l -> bodies.entrySet().stream().map(e -> Arguments.of(e.getKey(), l, e.getValue())));
  }

  @ParameterizedTest(name = "{0} at {1}")
  @MethodSource("modesAndLimits")
  void saneplanForEveryModeAndSize(CacheMode mode, String limit, String body) {
    Plan p = planned(body, limit);
    long lim = Sizes.parse(limit);

    assertThat(p.mode()).isEqualTo(mode);
    // The container budget holds: heap + direct + overhead (+ page cache headroom) <= limit.
    long tmpfs = p.volume() != null && p.volume().memory() ? p.bucketCache() : 0;
    assertThat(p.heap() + p.directMemory() + p.overhead() + p.pageCacheHeadroom() + tmpfs)
        .isLessThanOrEqualTo(lim);
    // ... and does not leave more than 1Mi of rounding unused, unless the heap hit the 31Gi cap.
    if (p.heap() < MemoryBudget.COMPRESSED_OOPS_HEAP) {
      assertThat(lim - (p.heap() + p.directMemory() + p.overhead() + p.pageCacheHeadroom() + tmpfs))
          .isLessThan(2 * MiB);
    }
    assertThat(p.heap()).isBetween(MemoryBudget.MIN_HEAP, MemoryBudget.COMPRESSED_OOPS_HEAP);
    assertThat(p.heap() % MiB).isZero();
    // HBase's heap rule.
    double l1 = Double.parseDouble(p.regionServerSite().get("hfile.block.cache.size"));
    double ms =
        Double.parseDouble(p.regionServerSite().get("hbase.regionserver.global.memstore.size"));
    assertThat(l1 + ms).isLessThanOrEqualTo(0.8 + 1e-9);
    assertThat(p.l1()).isEqualTo(Sizes.floorMiB((long) (p.heap() * l1)));
    // env carries exactly the sizes.
    assertThat(p.env()).containsEntry("HBASE_HEAPSIZE", p.heap() / MiB + "m");
    assertThat(p.env()).containsEntry("HBASE_OFFHEAPSIZE", p.directMemory() / MiB + "m");
    assertThat(p.env().get("HBASE_REGIONSERVER_OPTS")).contains("-Dsun.net.inetaddr.ttl=1");

    switch (mode) {
      case Lru -> {
        assertThat(p.ioEngine()).isNull();
        assertThat(p.regionServerSiteRemoved())
            .contains("hbase.bucketcache.ioengine", "hbase.bucketcache.size");
        assertThat(l1).isEqualTo(0.4);
      }
      case MetaOnly -> {
        assertThat(p.ioEngine()).isNull();
        assertThat(p.bucketCache()).isZero();
        assertThat(p.regionServerSite()).containsEntry("hbase.block.data.cacheonread", "false");
      }
      case Offheap -> {
        assertThat(p.ioEngine()).isEqualTo("offheap");
        // MaxDirectMemorySize above the L2 plus a few hundred MB (measured: L2 == max fails).
        assertThat(p.directMemory() - p.bucketCache()).isGreaterThanOrEqualTo(256 * MiB);
        assertThat(p.bucketCache()).isGreaterThan(p.heap());
        assertThat(p.regionServerSite())
            .containsEntry("hbase.bucketcache.size", Long.toString(p.bucketCache() / MiB));
        assertThat(p.pvcSize()).isZero();
      }
      case File, PersistentFile -> {
        assertThat(p.ioEngine()).isEqualTo("file:/var/lib/hbase/bucketcache/bucketcache.data");
        // The file L2 needs no direct memory of its own.
        assertThat(p.directMemory()).isLessThanOrEqualTo(MemoryBudget.MAX_DIRECT);
        assertThat(p.pageCacheHeadroom()).isGreaterThanOrEqualTo(MemoryBudget.MIN_PAGE_CACHE);
        assertThat(p.pvcSize()).isGreaterThanOrEqualTo(p.bucketCache() + GiB);
      }
    }
    // a restarted server reports (and gets its regions back) 1 s after it registers, not 3 s
    assertThat(p.regionServerSite()).containsEntry("hbase.regionserver.msginterval", "1000");
    if (mode == CacheMode.PersistentFile) {
      assertThat(p.persistentPath()).isEqualTo("/var/lib/hbase/bucketcache/bucketcache.map");
      assertThat(p.regionServerSite())
          .containsEntry("hbase.rs.evictblocksonclose", "false")
          .containsEntry("hbase.bucketcache.persistent.path", p.persistentPath());
      // spec.hbase.version unset, the master not seen: the line-neutral keys only (MasterSite)
      assertThat(p.masterSite())
          .containsOnlyKeys(
              "hbase.assignment.dispatch.wait.msec",
              "hbase.procedure.remote.dispatcher.delay.msec");
      // once the HMaster has reported 2.6: 2.6's keys too
      PlanResult seen = PlanCommand.plan(HEAD + body, lim, null, "2.6.4");
      assertThat(((Plan) seen).masterSite())
          .containsEntry("hbase.master.loadbalancer.class", MasterSite.CACHE_AWARE_BALANCER)
          .containsEntry("hbase.master.balancer.stochastic.regionCountCost", "500")
          .containsEntry("hbase.bucketcache.persistent.path", p.persistentPath())
          .containsEntry("hbase.assignment.dispatch.wait.msec", "10")
          .containsEntry("hbase.procedure.remote.dispatcher.delay.msec", "10");
      assertThat(((Plan) seen).configHash()).isEqualTo(p.configHash());
      // a drained region is prefetched where it goes, unless the policy says otherwise
      assertThat(p.regionServerSite()).containsEntry("hbase.rs.prefetchblocksonopen", "true");
      assertThat(p.bucketCache()).isEqualTo(50 * GiB);
      assertThat(p.pvcSize()).isEqualTo(55 * GiB);
    } else {
      assertThat(p.persistentPath()).isNull();
      assertThat(p.masterSite()).isEmpty();
      assertThat(p.regionServerSite()).doesNotContainKey("hbase.rs.prefetchblocksonopen");
      assertThat(p.regionServerSiteRemoved()).contains("hbase.bucketcache.persistent.path");
    }
  }

  @Test
  void sizesAtSixteenGi() {
    // The numbers a user sees for a 16Gi RegionServer, pinned so a change of the model is a
    // deliberate change of this test.
    Plan lru = planned("  mode: Lru\n", "16Gi");
    assertThat(Sizes.quantity(lru.overhead())).isEqualTo("1310Mi"); // 8% of 16Gi
    assertThat(Sizes.quantity(lru.directMemory())).isEqualTo("1Gi"); // limit/16
    assertThat(Sizes.quantity(lru.heap())).isEqualTo("14050Mi"); // the rest
    assertThat(Sizes.quantity(lru.l1())).isEqualTo("5620Mi"); // 0.4

    Plan off = planned("  mode: Offheap\n", "16Gi");
    assertThat(Sizes.quantity(off.heap())).isEqualTo("5620Mi"); // 40% of 14050Mi
    assertThat(Sizes.quantity(off.bucketCache())).isEqualTo("8430Mi"); // the other 60%
    assertThat(Sizes.quantity(off.directMemory())).isEqualTo("9454Mi"); // L2 + 1Gi
    assertThat(Sizes.quantity(off.l1())).isEqualTo("562Mi"); // 0.1: index and bloom only
  }

  // ---------------------------------------------------------------- the limit of each rule

  @Test
  void fractionsExactlyAtPointEightAreAccepted() {
    // 0.4 + 0.4 is 0.8000000000000002 in floating point: still accepted, as HBase does.
    Plan p =
        planned(
            "  mode: Lru\n  memory:\n    blockCacheFraction: 0.4\n    memstoreFraction: 0.4\n",
            "8Gi");
    assertThat(p.regionServerSite()).containsEntry("hfile.block.cache.size", "0.4");
    refused(
        "  mode: Lru\n  memory:\n    blockCacheFraction: 0.41\n    memstoreFraction: 0.4\n", "8Gi");
    planned(
        "  mode: Lru\n  memory:\n    blockCacheFraction: 0.45\n    memstoreFraction: 0.35\n",
        "8Gi");
  }

  @Test
  void explicitHeapFillsTheLimitExactlyButNotOneMiMore() {
    // Lru at 4Gi: overhead 384Mi (floor), direct 256Mi, so the heap may be 4Gi - 640Mi.
    planned("  mode: Lru\n  memory:\n    heap: 3456Mi\n", "4Gi");
    Refusal r = refused("  mode: Lru\n  memory:\n    heap: 3457Mi\n", "4Gi");
    assertThat(r.summary()).contains("raise the limit to at least 4097Mi");
  }

  @Test
  void heapOfExactly512MiIsTheFloor() {
    planned("  mode: Lru\n  memory:\n    heap: 512Mi\n", "4Gi");
    assertThat(refused("  mode: Lru\n  memory:\n    heap: 511Mi\n", "4Gi").summary())
        .contains("below the 512Mi");
  }

  @Test
  void bucketCacheAtTheAllocatorMinimum() {
    // default sizes: 14, the largest 513Ki; 4 x 513Ki x 14 = 28728Ki = 28.05Mi -> 29Mi holds.
    long min = 4L * (512 * 1024 + 1024) * 14;
    assertThat(MemoryBudget.DEFAULT_BUCKET_SIZES).hasSize(14);
    long okMi = Sizes.ceilDiv(min, MiB);
    planned("  mode: Offheap\n  memory:\n    bucketCache: " + okMi + "Mi\n", "4Gi");
    refused("  mode: Offheap\n  memory:\n    bucketCache: " + (okMi - 1) + "Mi\n", "4Gi");
    // with fewer, smaller buckets a small cache is fine, and HBase's own 1MB floor applies.
    planned(
        "  mode: Offheap\n  memory:\n    bucketCache: 1Mi\n  tuning:\n    bucketSizes: [5120, 66560]\n",
        "4Gi");
  }

  @Test
  void offheapDirectMemoryIsTheL2PlusHeadroom() {
    Plan p = planned("  mode: Offheap\n  memory:\n    heap: 1Gi\n    bucketCache: 2Gi\n", "4Gi");
    assertThat(p.directMemory()).isEqualTo(2 * GiB + 256 * MiB);
    assertThat(p.env()).containsEntry("HBASE_OFFHEAPSIZE", "2304m");
    assertThat(p.regionServerSite()).containsEntry("hbase.bucketcache.size", "2048");
    // 1Gi heap + 2.25Gi direct + 384Mi overhead = 3.625Gi <= 4Gi; a 2.5Gi L2 is too much.
    assertThat(
            refused("  mode: Offheap\n  memory:\n    heap: 1Gi\n    bucketCache: 2560Mi\n", "4Gi")
                .summary())
        .contains("memory limit 4Gi is too small");
  }

  @Test
  void pvcIsTheL2PlusBufferAndAGivenSizeMustHoldIt() {
    Plan p = planned("  mode: PersistentFile\n  memory:\n    bucketCache: 4Gi\n", "8Gi");
    assertThat(p.pvcSize()).isEqualTo(5 * GiB); // 4Gi + max(1Gi, 10%)
    planned(
        "  mode: PersistentFile\n  memory:\n    bucketCache: 4Gi\n  storage:\n    size: 5Gi\n",
        "8Gi");
    refused(
        "  mode: PersistentFile\n  memory:\n    bucketCache: 4Gi\n  storage:\n    size: 5119Mi\n",
        "8Gi");
    // storage.size alone: the L2 is fitted into it.
    Plan fit = planned("  mode: File\n  storage:\n    size: 20Gi\n", "8Gi");
    assertThat(fit.bucketCache()).isEqualTo(18 * GiB); // 20Gi - 10%
    assertThat(fit.pvcSize()).isEqualTo(20 * GiB);
  }

  /**
   * File on tmpfs without a size (issue 13): the cache lives in the pod's memory, so the L2 is what
   * an off-heap L2 would get at the same limit, with the same heap; the tmpfs limit holds it.
   */
  @ParameterizedTest
  @ValueSource(strings = {"4Gi", "16Gi", "64Gi"})
  void tmpfsWithoutASizeIsSizedFromTheLimitLikeOffheap(String limit) {
    Plan tmpfs = planned("  mode: File\n  storage:\n    medium: Memory\n", limit);
    Plan offheap = planned("  mode: Offheap\n", limit);
    assertThat(tmpfs.bucketCache()).isPositive().isEqualTo(offheap.bucketCache());
    assertThat(tmpfs.heap()).isEqualTo(offheap.heap());
    assertThat(tmpfs.volume().memory()).isTrue();
    assertThat(tmpfs.volume().size()).isGreaterThanOrEqualTo(tmpfs.bucketCache());
    long lim = Sizes.parse(limit);
    long used = tmpfs.heap() + tmpfs.directMemory() + tmpfs.overhead() + tmpfs.bucketCache();
    assertThat(used).isLessThanOrEqualTo(lim);
    assertThat(lim - used).isLessThan(2 * MiB);
  }

  @Test
  void tmpfsCountsAgainstTheLimit() {
    Plan p =
        planned(
            "  mode: File\n  memory:\n    bucketCache: 1Gi\n  storage:\n    medium: Memory\n",
            "4Gi");
    assertThat(p.volume().memory()).isTrue();
    assertThat(p.pvcSize()).isZero();
    assertThat(p.volume().size()).isEqualTo(GiB + 64 * MiB);
    assertThat(p.heap() + p.directMemory() + p.overhead() + p.bucketCache())
        .isLessThanOrEqualTo(4 * GiB);
    assertThat(p.pageCacheHeadroom()).isZero();
    assertThat(p.warnings()).anyMatch(w -> w.contains("tmpfs"));
  }

  @Test
  void autoSizedHeapStopsAtCompressedOops() {
    Plan p = planned("  mode: Lru\n", "128Gi");
    assertThat(p.heap()).isEqualTo(31 * GiB);
    Plan big = planned("  mode: Lru\n  memory:\n    heap: 40Gi\n", "64Gi");
    assertThat(big.warnings()).anyMatch(w -> w.contains("compressed object pointers"));
  }

  @Test
  void burstablePodIsWarnedNotRefused() {
    PlanResult r = PlanCommand.plan(HEAD + "  mode: Lru\n", 8 * GiB, 4 * GiB);
    assertThat(r).isInstanceOf(Plan.class);
    assertThat(((Plan) r).warnings()).anyMatch(w -> w.contains("Burstable"));
  }

  @Test
  void userTuningReachesHbaseSite() {
    Plan p =
        planned(
            "  mode: PersistentFile\n  memory:\n    bucketCache: 2Gi\n  tuning:\n    bucketSizes: [5120, 9216, 66560]\n"
                + "    writerThreads: 5\n    writerQueueLength: 128\n    cacheDataCompressed: true\n"
                + "    prefetchOnOpen: true\n    persistIntervalMillis: 2000\n"
                + "    loadReportIntervalMillis: 3000\n  storage:\n    mountPath: /cache/\n"
                + "  jvm:\n    gc: ZGC\n    extraOptions: [\"-XX:+PrintFlagsFinal\"]\n",
            "8Gi");
    assertThat(p.regionServerSite())
        .containsEntry("hbase.bucketcache.bucket.sizes", "5120,9216,66560")
        .containsEntry("hbase.bucketcache.writer.threads", "5")
        .containsEntry("hbase.bucketcache.writer.queuelength", "128")
        .containsEntry("hbase.block.data.cachecompressed", "true")
        .containsEntry("hbase.rs.prefetchblocksonopen", "true")
        .containsEntry("hbase.bucketcache.persist.intervalinmillis", "2000")
        .containsEntry("hbase.regionserver.msginterval", "3000")
        .containsEntry("hbase.bucketcache.ioengine", "file:/cache/bucketcache.data")
        .containsEntry("hbase.bucketcache.persistent.path", "/cache/bucketcache.map");
    assertThat(p.jvmOptions()).startsWith("-XX:+UseZGC").endsWith("-XX:+PrintFlagsFinal");
  }

  @Test
  void jvmAgentsOnlyWhenTheOperatorAllowsThem() {
    dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec spec =
        io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
                HEAD
                    + "  mode: Lru\n  jvm:\n    extraOptions: [\"-javaagent:/opt/jmx.jar=9404:/opt/c.yml\"]\n",
                dev.hbase.cache.api.v1alpha1.BlockCachePolicy.class)
            .getSpec();
    assertThat(Planner.plan(spec, 8 * GiB, null))
        .isInstanceOfSatisfying(
            Refusal.class,
            r -> assertThat(r.summary()).contains("allowJvmAgents=true").contains("-javaagent"));
    assertThat(Planner.plan(spec, 8 * GiB, null, JvmOptions.Trust.AGENTS))
        .isInstanceOfSatisfying(
            Plan.class,
            p -> assertThat(p.jvmOptions()).endsWith("-javaagent:/opt/jmx.jar=9404:/opt/c.yml"));
  }

  @Test
  void prefetchCanBeTurnedOffInPersistentFile() {
    Plan p =
        planned(
            "  mode: PersistentFile\n  memory:\n    bucketCache: 2Gi\n  tuning:\n    prefetchOnOpen: false\n",
            "8Gi");
    assertThat(p.regionServerSite()).containsEntry("hbase.rs.prefetchblocksonopen", "false");
  }

  @Test
  void masterKeysNeedAMasterRef() {
    PlanResult r =
        PlanCommand.plan(
            "kind: BlockCachePolicy\nspec:\n  targetRef:\n    name: rs\n  hbaseSiteConfigMap: s\n  mode: PersistentFile\n"
                + "  memory:\n    bucketCache: 1Gi\n",
            8 * GiB,
            null);
    assertThat(((Plan) r).masterSite()).isEmpty();
  }

  // ---------------------------------------------------------------- hash and cache resets

  @Test
  void configHashIsStableAndFollowsWhatPodsSee() {
    String body = "  mode: PersistentFile\n  memory:\n    bucketCache: 4Gi\n";
    Plan a = planned(body, "8Gi");
    assertThat(planned(body, "8Gi").configHash()).isEqualTo(a.configHash()).hasSize(16);
    assertThat(planned(body, "9Gi").configHash()).isNotEqualTo(a.configHash());
    assertThat(planned(body.replace("4Gi", "5Gi"), "8Gi").configHash())
        .isNotEqualTo(a.configHash());
    // Rollout knobs are not pod configuration: no restart for them.
    assertThat(planned(body + "  rollout:\n    maxUnavailable: 2\n", "8Gi").configHash())
        .isEqualTo(a.configHash());
  }

  @Test
  void capacityOrEngineChangeResetsAPersistentCache() {
    Plan before = planned("  mode: PersistentFile\n  memory:\n    bucketCache: 4Gi\n", "8Gi");
    Plan bigger = planned("  mode: PersistentFile\n  memory:\n    bucketCache: 5Gi\n", "8Gi");
    Plan offheap = planned("  mode: Offheap\n  memory:\n    bucketCache: 2Gi\n", "8Gi");
    Plan sameCacheNewHeap =
        planned("  mode: PersistentFile\n  memory:\n    bucketCache: 4Gi\n", "9Gi");

    assertThat(Planner.cacheResetReasons(before.regionServerSite(), bigger))
        .containsExactly("the L2 capacity (MB) changes from 4096 to 5120");
    assertThat(Planner.cacheResetReasons(before.regionServerSite(), offheap))
        .containsExactly("persistence is turned off (mode Offheap)");
    assertThat(Planner.cacheResetReasons(before.regionServerSite(), sameCacheNewHeap)).isEmpty();
    // Nothing persisted before: nothing to lose.
    assertThat(Planner.cacheResetReasons(offheap.regionServerSite(), before)).isEmpty();
    assertThat(Planner.cacheResetReasons(null, before)).isEmpty();
  }

  // ---------------------------------------------------------------- bad input

  static List<BadPolicies.Case> plannerCases() {
    return BadPolicies.CASES.stream().filter(c -> c.planner() != null).toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("plannerCases")
  void badInputIsRefusedWithItsReason(BadPolicies.Case c) {
    PlanResult r =
        PlanCommand.plan(
            c.document(), c.memoryLimit() == null ? null : Sizes.parse(c.memoryLimit()), null);
    assertThat(r).isInstanceOf(Refusal.class);
    assertThat(((Refusal) r).summary()).contains(c.planner());
  }

  @Test
  void atLeast25BadInputsAreCovered() {
    assertThat(plannerCases()).hasSizeGreaterThanOrEqualTo(25);
    assertThat(BadPolicies.CASES).hasSizeGreaterThanOrEqualTo(25);
  }
}
