package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.status.Evidence;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.CacheDelta;
import dev.hbase.cache.operator.hbase.CacheRatios;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.plan.JvmOptions;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.Recommender;
import dev.hbase.cache.operator.plan.Recommender.Advice;
import dev.hbase.cache.operator.plan.Recommender.ServerInterval;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * For each cache mode, the settings the planner renders start a real RegionServer whose /jmx shows
 * the planned cache, and the scraper's counts match the reads the test does: N gets of rows in N
 * distinct cold blocks raise the data-block misses by N; the same gets again raise the data hits by
 * N (by 0 in MetaOnly, which does not cache data blocks).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CacheModesIT {

  static final int ROWS = 40_000;
  static final int READS = 200;

  LocalHBase hbase;
  AdminHBaseCluster admin;
  TestTable table;
  final JmxScraper scraper = new JmxScraper(Duration.ofSeconds(5));

  @BeforeAll
  void startCluster() throws Exception {
    hbase = LocalHBase.start("modes", 1);
    admin = hbase.admin();
    table = hbase.loadWithLru(admin, "modes", ROWS, 2);
  }

  @AfterAll
  void stopCluster() {
    if (hbase != null) {
      hbase.close();
    }
  }

  @ParameterizedTest
  @EnumSource(CacheMode.class)
  void plannedSettingsGiveThePlannedCache(CacheMode mode) throws Exception {
    Path cacheDir = Files.createDirectories(hbase.dir.resolve("cache-" + mode));
    // HBase's own counting of cold and warm gets: nothing prefetched before the first get
    Plan plan = Plans.planWithoutPrefetch(mode, cacheDir);
    hbase.startRegionServer(0, Plans.settings(plan));
    try {
      hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
      awaitTableOnline();
      int infoPort = hbase.regionServerInfoPort(0);

      CacheSample first =
          TestTable.awaitSample(scraper, infoPort, Duration.ofSeconds(30), s -> true);
      // L1: HBase sizes it as hfile.block.cache.size x the heap the JVM reports (a bit under -Xmx)
      assertThat((double) first.l1CapacityBytes())
          .as("%s L1 capacity vs planned %d", mode, plan.l1())
          .isCloseTo(plan.l1(), within(plan.l1() * 0.10));
      if (plan.bucketCache() > 0) {
        assertThat(first.hasL2()).as("%s has an L2", mode).isTrue();
        assertThat((double) first.l2CapacityBytes())
            .as("%s L2 capacity vs planned %d", mode, plan.bucketCache())
            .isCloseTo(plan.bucketCache(), within(plan.bucketCache() * 0.03));
      } else {
        assertThat(first.hasL2()).as("%s has no L2", mode).isFalse();
      }
      if (mode.isFile()) {
        assertThat(cacheDir.resolve("bucketcache.data")).exists();
      }

      // cold reads: one get per distinct data block
      // every RegionServer start is cold (fresh cache dir for the file modes): same rows each time
      List<String> rows = table.rowsInDistinctBlocks(0, READS, 7);
      CacheSample before = TestTable.settledSample(scraper, infoPort);
      table.get(rows);
      TestTable.awaitSample(
          scraper,
          infoPort,
          Duration.ofSeconds(30),
          s -> CacheRatios.between(before, s).all().requests() >= READS);
      CacheDelta cold = CacheRatios.between(before, TestTable.settledSample(scraper, infoPort));
      System.out.printf("%s cold: %s%n", mode, cold);
      assertThat(cold.restarts()).isZero();
      assertThat(cold.data().hits()).as("%s cold data hits", mode).isLessThanOrEqualTo(5);
      if (mode == CacheMode.MetaOnly) {
        // hbase.block.data.cacheonread=false: data blocks are not even looked up
        assertThat(cold.data().requests()).as("MetaOnly data lookups").isZero();
      } else if (plan.bucketCache() > 0) {
        // measured on 2.6.4: with an L2 (CombinedBlockCache) a cold data block counts two data
        // misses and two L2 misses (the reader looks it up again under its lock); a hit counts once
        assertThat(cold.data().misses())
            .as("%s cold data misses", mode)
            .isBetween(2L * READS, 2L * READS + 5);
        assertThat(cold.l2().misses())
            .as("%s cold L2 misses", mode)
            .isBetween(2L * READS, 2L * READS + 5);
      } else {
        assertThat(cold.data().misses())
            .as("%s cold data misses", mode)
            .isBetween((long) READS, READS + 5L);
      }

      // the same rows again: cached unless MetaOnly
      CacheSample warmBefore = TestTable.settledSample(scraper, infoPort);
      table.get(rows);
      TestTable.awaitSample(
          scraper,
          infoPort,
          Duration.ofSeconds(30),
          s -> CacheRatios.between(warmBefore, s).all().requests() >= READS);
      CacheSample after = TestTable.settledSample(scraper, infoPort);
      CacheDelta warm = CacheRatios.between(warmBefore, after);
      System.out.printf("%s warm: %s%nsample %s%n", mode, warm, after);
      if (mode == CacheMode.MetaOnly) {
        assertThat(warm.data().requests()).isZero();
        assertThat(warm.data().ratioOrNull()).as("no data lookups: no ratio, not 0").isNull();
        assertThat(after.dataBlockCount()).as("MetaOnly caches no data block").isZero();
        assertThat(warm.all().hits()).as("index blocks are cached").isGreaterThanOrEqualTo(READS);
      } else {
        assertThat(warm.data().hits())
            .as("%s warm data hits", mode)
            .isBetween(READS - 5L, (long) READS);
        assertThat(warm.data().misses()).as("%s warm data misses", mode).isLessThanOrEqualTo(5);
        assertThat(after.dataBlockCount()).isGreaterThanOrEqualTo(READS);
        if (plan.bucketCache() > 0) {
          assertThat(warm.l2().hits())
              .as("%s data hits come from the L2", mode)
              .isGreaterThanOrEqualTo(READS - 5L);
          assertThat(after.l2UsedBytes()).as("L2 used bytes").isGreaterThan(READS * 60_000L);
        } else {
          assertThat(after.l1UsedBytes()).as("L1 used bytes").isGreaterThan(READS * 60_000L);
        }
      }
      saveSample(mode, infoPort);
    } finally {
      assertThat(hbase.stopRegionServer(0)).as("clean SIGTERM exit").isEqualTo(143);
    }
  }

  /**
   * Sizing advice on a real RegionServer: an Lru policy whose LRU (3% of a 512Mi heap, ~15Mi) is
   * far under the table (40,000 rows of 1,000 bytes) read at random. The operator's scraper and GC
   * probe every 5 s, turned into a window the way the operator does: the LRU is full and evicting,
   * the working-set estimate lands near the table's size, and the advice is an L2 that holds it.
   */
  @Test
  void anLruThatTheWorkingSetOutgrowsGetsAnL2Recommended() throws Exception {
    BlockCachePolicySpec spec = Plans.policy(CacheMode.Lru, null);
    spec.setMemory(new MemorySpec().setHeap(new Quantity("512Mi")).setBlockCacheFraction(0.03));
    Plan plan = Plans.plan(spec);
    hbase.startRegionServer(0, Plans.settings(plan));
    try {
      hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
      awaitTableOnline();
      int infoPort = hbase.regionServerInfoPort(0);
      CacheSample last = TestTable.settledSample(scraper, infoPort);
      long gc = scraper.gcTimeMillis(LocalHBase.HOST, infoPort);
      Random random = new Random(11);
      Evidence window = null;
      Instant end = Instant.now().plusSeconds(45);
      while (Instant.now().isBefore(end)) {
        Instant next = Instant.now().plusSeconds(5);
        List<String> rows = new ArrayList<>();
        while (Instant.now().isBefore(next)) {
          rows.clear();
          for (int i = 0; i < 200; i++) {
            rows.add(TestTable.row(random.nextInt(ROWS)));
          }
          table.get(rows);
        }
        CacheSample s = scraper.scrape(LocalHBase.HOST, infoPort);
        long gcNow = scraper.gcTimeMillis(LocalHBase.HOST, infoPort);
        window =
            Recommender.add(
                window,
                List.of(
                    new ServerInterval(
                        "rs-0",
                        s.at(),
                        CacheRatios.between(last, s),
                        s.hasL2(),
                        s.l1CapacityBytes(),
                        s.l1UsedBytes(),
                        s.l2CapacityBytes(),
                        s.l2UsedBytes(),
                        gcNow - gc)),
                s.at());
        last = s;
        gc = gcNow;
      }
      System.out.printf("Lru under churn, window: %s%n", window);
      Advice advice = Recommender.advise(spec, plan, window, 0.95, JvmOptions.Trust.ALLOW_LIST);
      System.out.printf("advice: %s%n", advice);
      assertThat(window.getEvictions()).as("LRU evictions").isPositive();
      assertThat(window.getL1UsedFraction()).as("LRU fill").isGreaterThanOrEqualTo(0.8);
      assertThat(window.getDataHitRatio()).as("data hit ratio").isBetween(0.05, 0.9);
      assertThat(window.getGcTimeFraction()).as("GC share, from the real JvmMetrics").isNotNull();
      long tableBytes = (long) ROWS * TestTable.VALUE_BYTES;
      assertThat(window.getWorkingSetBytes())
          .as("working set estimate vs the table's %d bytes of values", tableBytes)
          .isBetween(tableBytes / 2, tableBytes * 2);
      assertThat(advice.mode()).isIn(CacheMode.Offheap, CacheMode.PersistentFile);
      assertThat(advice.differs()).isTrue();
      assertThat(advice.bucketCache()).isGreaterThanOrEqualTo((long) (0.95 * tableBytes / 2));
    } finally {
      assertThat(hbase.stopRegionServer(0)).as("clean SIGTERM exit").isEqualTo(143);
    }
  }

  private void awaitTableOnline() {
    LocalHBase.awaitOneServerServing(admin, 3, Duration.ofSeconds(90)); // meta + 2 table regions
  }

  /** Keeps a real /jmx answer beside the test output (the unit tests' resource comes from one). */
  private void saveSample(CacheMode mode, int infoPort) throws Exception {
    java.net.http.HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(JmxScraper.uri(LocalHBase.HOST, infoPort))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    Files.writeString(hbase.dir.resolve("jmx-" + mode + ".json"), r.body());
  }
}
