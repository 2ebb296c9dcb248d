package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.CacheDelta;
import dev.hbase.cache.operator.hbase.CacheRatios;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.plan.Plan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A RegionServer with the planned PersistentFile settings, stopped with SIGTERM and started again
 * with the same files, comes back with its L2 (>= 95% of the used bytes) and serves its first reads
 * from it as well as before the stop; with File settings (no persistence) it starts cold.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PersistenceIT {

  /** ~137 MB of values: fits the planned 384 MiB L2. */
  static final int ROWS = 130_000;

  /** Reads measured before and after the restart, one per distinct data block. */
  static final int READS = 800;

  LocalHBase hbase;
  AdminHBaseCluster admin;
  TestTable table;
  final JmxScraper scraper = new JmxScraper(Duration.ofSeconds(5));

  @BeforeAll
  void startClusterAndLoad() throws Exception {
    hbase = LocalHBase.start("persistence", 1);
    admin = hbase.admin();
    table = hbase.loadWithLru(admin, "persistence", ROWS, 4);
  }

  @AfterAll
  void stopCluster() {
    if (hbase != null) {
      hbase.close();
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = CacheMode.class,
      names = {"PersistentFile", "File"})
  void gracefulRestartKeepsTheCacheOnlyWhenPersistent(CacheMode mode) throws Exception {
    boolean persistent = mode == CacheMode.PersistentFile;
    // on 2.5 the planner refuses PersistentFile: this is what it would do there (the 2.6 keys a
    // policy without spec.hbase.version gets), the reason for the refusal
    boolean broken = persistent && LocalHBase.line25();
    Path cacheDir = Files.createDirectories(hbase.dir.resolve("cache-" + mode));
    Plan plan = broken ? Plans.planUnversioned(mode, cacheDir) : Plans.plan(mode, cacheDir);
    int infoPort = hbase.regionServerInfoPort(0);
    hbase.startRegionServer(0, Plans.settings(plan));
    try {
      awaitServing();
      // warm: a scan caches every data block in the L2; HBase drops a block rather than wait when
      // the writer queues are full (a scan of page-cached HFiles outruns them: seen in File mode
      // after the PersistentFile case had prefetched the table into the page cache), so a second
      // scan caches what the first one dropped
      assertThat(table.scanAll()).isEqualTo(ROWS);
      assertThat(table.scanAll()).isEqualTo(ROWS);
      CacheSample warmed = TestTable.settledSample(scraper, infoPort);
      assertThat(warmed.l2UsedBytes()).as("L2 holds the table").isGreaterThan(ROWS * 1_000L);

      double before = readRatio(table.rowsInDistinctBlocks(0, READS, 1), infoPort, "before");
      long l2Before = TestTable.settledSample(scraper, infoPort).l2UsedBytes();

      Instant stop = Instant.now();
      assertThat(hbase.stopRegionServer(0)).as("clean SIGTERM exit").isEqualTo(143);
      if (persistent) {
        assertThat(cacheDir.resolve("bucketcache.map")).as("map written on shutdown").exists();
      }
      if (broken) {
        // HBase 2.5.13: the map is not written; its shutdown fails on blocks without a type
        long mapBytes = Files.size(cacheDir.resolve("bucketcache.map"));
        assertThat(mapBytes)
            .as("HBase %s: the persistence map after a graceful stop", LocalHBase.SERVER_VERSION)
            .isLessThanOrEqualTo(20);
        assertThat(Files.readString(hbase.dir.resolve("logs").resolve("rs0.log")))
            .contains("BucketProtoUtils.toPB");
        // and the map it leaves stops the next start (the cache-map-guard removes only 2.6.4's
        // empty map): a RegionServer that would not come back
        HBaseProcess rs;
        try {
          rs = hbase.startRegionServer(0, Plans.settings(plan));
        } catch (RuntimeException exited) {
          rs = hbase.regionServer(0);
        }
        HBaseProcess dying = rs;
        org.awaitility.Awaitility.await("the RegionServer exits")
            .atMost(Duration.ofMinutes(3))
            .until(() -> !dying.alive());
        assertThat(Files.readString(dying.log)).contains("BucketCacheEntry.hasChecksum()");
        System.out.printf(
            "RESULT HBase %s, PersistentFile keys: no map written at shutdown (%d bytes), and the"
                + " next start fails on it%n",
            LocalHBase.SERVER_VERSION, mapBytes); // gone after the failed start
        return;
      } else if (persistent) {
        // the operator's init container runs before every start: a map with entries is kept
        byte[] map = Files.readAllBytes(cacheDir.resolve("bucketcache.map"));
        assertThat(map.length).as("a map with entries").isGreaterThan(20);
        assertThat(cacheMapGuard(cacheDir.resolve("bucketcache.map"))).contains("kept");
        assertThat(cacheDir.resolve("bucketcache.map")).hasBinaryContent(map);
      }
      hbase.startRegionServer(0, Plans.settings(plan));
      awaitServing();
      CacheSample back =
          persistent && !broken
              ? TestTable.awaitSample(
                  scraper,
                  infoPort,
                  Duration.ofSeconds(90),
                  s -> s.l2UsedBytes() >= 0.95 * l2Before)
              : TestTable.awaitSample(scraper, infoPort, Duration.ofSeconds(30), s -> true);
      double retained = CacheRatios.retainedFraction(l2Before, back.l2UsedBytes());
      double after = readRatio(table.rowsInDistinctBlocks(0, READS, 2), infoPort, "after");
      System.out.printf(
          "RESULT %s: L2 capacity %d, used before %d, after %d, retained %.4f; data hit ratio"
              + " before %.4f, first %d reads after restart %.4f; stop->serving %s%n",
          mode,
          back.l2CapacityBytes(),
          l2Before,
          back.l2UsedBytes(),
          retained,
          before,
          READS,
          after,
          Duration.between(stop, Instant.now()));

      // the warm cache the restart is judged from (cold is below 0.10): two scans leave a block
      // or two uncached now and then (the CI run on 1e9adec: 0.9876 of 800 reads), which the
      // reads of "before" then cache; "after" is held to "before" itself
      assertThat(before).as("%s ratio before the stop", mode).isGreaterThanOrEqualTo(0.97);
      if (broken) {
        assertThat(retained).as("HBase 2.5: PersistentFile keeps nothing").isLessThan(0.05);
        assertThat(after).as("HBase 2.5: PersistentFile starts cold").isLessThan(0.10);
      } else if (persistent) {
        assertThat(retained).as("L2 used bytes retained").isGreaterThanOrEqualTo(0.95);
        assertThat(after).as("first reads after the restart").isGreaterThanOrEqualTo(before - 0.01);
      } else {
        assertThat(retained).as("File mode keeps nothing").isLessThan(0.05);
        assertThat(after).as("File mode starts cold").isLessThan(0.10);
      }
    } finally {
      hbase.stopRegionServer(0);
    }
  }

  /**
   * HBase 2.6.4 writes an empty persistence map when its L2 holds no block at shutdown (nothing was
   * read since it started) and dies reading it at the next start. The operator's cache-map-guard
   * init container removes exactly that file: the RegionServer then starts, with an empty L2.
   */
  @org.junit.jupiter.api.Test
  void anEmptyCacheMapStopsTheNextStartUnlessTheGuardRemovesIt() throws Exception {
    Path cacheDir = Files.createDirectories(hbase.dir.resolve("cache-empty-map"));
    Path map = cacheDir.resolve("bucketcache.map");
    // without prefetch: an L2 that nothing reads stays empty (the idle server of the issue)
    Plan plan =
        LocalHBase.line25()
            ? Plans.plan(
                Plans.policy(CacheMode.PersistentFile, cacheDir)
                    .setHbase(null)
                    .setTuning(
                        new dev.hbase.cache.api.v1alpha1.spec.TuningSpec()
                            .setPrefetchOnOpen(false)))
            : Plans.planWithoutPrefetch(CacheMode.PersistentFile, cacheDir);
    int infoPort = hbase.regionServerInfoPort(0);
    hbase.startRegionServer(0, Plans.settings(plan));
    try {
      awaitServing();
      assertThat(TestTable.settledSample(scraper, infoPort).l2UsedBytes())
          .as("no reads: the L2 holds nothing")
          .isZero();
      assertThat(hbase.stopRegionServer(0)).as("clean SIGTERM exit").isEqualTo(143);
      assertThat(map).as("the empty map HBase wrote at shutdown").exists();
      if (LocalHBase.line25()) {
        // HBase 2.5.13 writes an empty cache's map in another format (193 bytes here) and reads
        // it back at the next start: the 2.6.4 failure the guard is for does not happen
        long size = Files.size(map);
        assertThat(size).isNotEqualTo(20);
        Instant start = Instant.now();
        hbase.startRegionServer(0, Plans.settings(plan));
        awaitServing();
        System.out.printf(
            "RESULT HBase %s, empty map of %d bytes: no guard needed, serving %s after its start%n",
            LocalHBase.SERVER_VERSION, size, Duration.between(start, Instant.now()));
        return;
      }
      assertThat(Files.size(map)).isEqualTo(20);

      // without the guard: the RegionServer dies at start, every time
      HBaseProcess rs = null;
      try {
        rs = hbase.startRegionServer(0, Plans.settings(plan));
      } catch (org.awaitility.core.ConditionTimeoutException | IllegalStateException e) {
        rs = hbase.regionServer(0);
      }
      HBaseProcess dying = rs;
      org.awaitility.Awaitility.await("the RegionServer exits")
          .atMost(Duration.ofSeconds(90))
          .until(() -> !dying.alive());
      assertThat(Files.readString(dying.log))
          .contains("retrieveChunkedBackingMap")
          .contains("firstChunk");
      hbase.stopRegionServer(0);

      // with the guard: the map goes, the RegionServer starts and serves
      assertThat(cacheMapGuard(map)).contains("removed the empty BucketCache persistence map");
      assertThat(map).doesNotExist();
      Instant start = Instant.now();
      hbase.startRegionServer(0, Plans.settings(plan));
      awaitServing();
      System.out.printf(
          "RESULT empty map: removed by the guard, RegionServer serving %s after its start%n",
          Duration.between(start, Instant.now()));
    } finally {
      hbase.stopRegionServer(0);
    }
  }

  /** Runs the operator's cache-map-guard script as its init container does; returns its output. */
  static String cacheMapGuard(Path map) throws Exception {
    ProcessBuilder pb =
        new ProcessBuilder(
            "sh",
            "-c",
            dev.hbase.cache.operator.render.PodHooks.CACHE_MAP_GUARD_SCRIPT,
            dev.hbase.cache.operator.render.PodHooks.CACHE_MAP_GUARD,
            map.toString());
    pb.environment().put("TERMINATION_LOG", map.resolveSibling("termination-log").toString());
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor()).as(out).isZero();
    return out;
  }

  /** Data-block hit ratio (JMX counter deltas) of one get per row. */
  private double readRatio(List<String> rows, int infoPort, String what) throws Exception {
    CacheSample s0 = TestTable.settledSample(scraper, infoPort);
    table.get(rows);
    TestTable.awaitSample(
        scraper,
        infoPort,
        Duration.ofSeconds(30),
        s ->
            CacheRatios.between(s0, s).data().hits()
                    + CacheRatios.between(s0, s).data().misses() / 2
                >= rows.size());
    CacheDelta d = CacheRatios.between(s0, TestTable.settledSample(scraper, infoPort));
    System.out.printf("%s: %s%n", what, d);
    assertThat(d.restarts()).isZero();
    return d.data().ratio().orElseThrow();
  }

  private void awaitServing() {
    hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
    LocalHBase.awaitOneServerServing(admin, 5, Duration.ofSeconds(90)); // meta + 4 table regions
  }
}
