package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.plan.Plan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Damaged BucketCache persistence maps on a real HBase 2.6.4 RegionServer: a map HBase wrote for a
 * warm L2 (in several chunks), then cut after its header, after a chunk, inside a chunk, or
 * zero-filled. A map that ends where a chunk should begin kills every start of HBase (the
 * NullPointerException of HBASE-29857: a crash loop); the operator's cache-map-guard removes each
 * of them, and the RegionServer starts and serves, cold (an empty L2, prefetch off so that nothing
 * fills it by itself).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CacheMapDamageIT {

  /** ~26 MB of values in ~400 data blocks: with 100 blocks a chunk, a map of 4 or more chunks. */
  static final int ROWS = 25_000;

  static final Map<String, String> SMALL_CHUNKS =
      Map.of("hbase.bucketcache.persistence.chunksize", "100");

  LocalHBase hbase;
  AdminHBaseCluster admin;
  TestTable table;
  Path cacheDir;
  Path map;
  Plan plan;
  int infoPort;
  final JmxScraper scraper = new JmxScraper(Duration.ofSeconds(5));

  /** The map HBase wrote at the graceful stop of a warm RegionServer, and where its chunks end. */
  byte[] written;

  List<Integer> chunkEnds;

  @BeforeAll
  void warmAndStop() throws Exception {
    hbase = LocalHBase.start("cache-map-damage", 1);
    admin = hbase.admin();
    table = hbase.loadWithLru(admin, "damage", ROWS, 2);
    cacheDir = Files.createDirectories(hbase.dir.resolve("cache"));
    map = cacheDir.resolve("bucketcache.map");
    plan = Plans.planWithoutPrefetch(CacheMode.PersistentFile, cacheDir);
    infoPort = hbase.regionServerInfoPort(0);
    start();
    awaitServing();
    assertThat(table.scanAll()).isEqualTo(ROWS);
    assertThat(table.scanAll()).isEqualTo(ROWS);
    assertThat(TestTable.settledSample(scraper, infoPort).l2UsedBytes())
        .as("a warm L2")
        .isGreaterThan(ROWS * 500L);
    assertThat(hbase.stopRegionServer(0)).as("clean SIGTERM exit").isEqualTo(143);
    written = Files.readAllBytes(map);
    chunkEnds = chunkEnds(written);
    System.out.printf(
        "RESULT the map of a warm L2: %d bytes, %d chunks ending at %s%n",
        written.length, chunkEnds.size(), chunkEnds);
    assertThat(chunkEnds).as("a map in several chunks").hasSizeGreaterThanOrEqualTo(3);
    assertThat(chunkEnds.get(chunkEnds.size() - 1)).isEqualTo(written.length);
  }

  @AfterAll
  void stopCluster() {
    if (hbase != null) {
      hbase.close();
    }
  }

  enum Damage {
    CUT_AFTER_THE_HEADER("TruncatedCacheMapRemoved"),
    CUT_AFTER_A_CHUNK("TruncatedCacheMapRemoved"),
    CUT_INSIDE_A_CHUNK("TruncatedCacheMapRemoved"),
    ZERO_FILLED("UnreadableCacheMapRemoved");

    final String reason;

    Damage(String reason) {
      this.reason = reason;
    }

    byte[] apply(byte[] map, List<Integer> chunkEnds) {
      return switch (this) {
        case CUT_AFTER_THE_HEADER -> Arrays.copyOf(map, 20);
        case CUT_AFTER_A_CHUNK -> Arrays.copyOf(map, chunkEnds.get(1));
        case CUT_INSIDE_A_CHUNK -> Arrays.copyOf(map, (chunkEnds.get(1) + chunkEnds.get(2)) / 2);
        case ZERO_FILLED -> new byte[map.length];
      };
    }
  }

  /**
   * With the guard before the start: the map goes, the RegionServer serves with an empty L2. On a
   * guard that keeps the map (the one before this test), HBase dies at the start instead.
   */
  @ParameterizedTest
  @EnumSource(Damage.class)
  void theGuardRemovesADamagedMapAndTheRegionServerServesCold(Damage damage) throws Exception {
    Files.write(map, damage.apply(written, chunkEnds));
    Files.deleteIfExists(cacheDir.resolve("termination-log"));
    String out = PersistenceIT.cacheMapGuard(map);

    Instant start = Instant.now();
    HBaseProcess rs = startMayDie();
    try {
      awaitServing();
      assertThat(rs.alive()).isTrue();
      assertThat(TestTable.settledSample(scraper, infoPort).l2UsedBytes())
          .as("cold: the L2 starts empty")
          .isZero();
      table.get(table.rowsInDistinctBlocks(0, 50, 7));
      System.out.printf(
          "RESULT %s: removed by the guard, serving cold %s after the start%n",
          damage, Duration.between(start, Instant.now()));
    } finally {
      hbase.stopRegionServer(0);
    }
    assertThat(out)
        .contains("cache-map-guard: " + damage.reason + ": removed the ")
        .contains(" BucketCache persistence map " + map);
    assertThat(Files.readString(cacheDir.resolve("termination-log"))).startsWith(damage.reason);
  }

  /**
   * The same maps without the guard: each start of HBase dies on a map that ends where a chunk
   * should begin (twice in a row: a crash loop). A map that ends inside a chunk or is zero-filled
   * HBase drops by itself ("Can't restore from file") and starts cold: not started here, measured
   * once (docs/concepts/warm-gate.md).
   */
  @Test
  void withoutTheGuardAMapCutAtAChunksBoundaryKillsEveryStart() throws Exception {
    for (Damage damage :
        List.of(Damage.CUT_AFTER_A_CHUNK, Damage.CUT_AFTER_A_CHUNK, Damage.CUT_AFTER_THE_HEADER)) {
      Files.write(map, damage.apply(written, chunkEnds));
      HBaseProcess rs = startMayDie();
      await(damage + ": the RegionServer exits")
          .atMost(Duration.ofSeconds(90))
          .until(() -> !rs.alive());
      assertThat(Files.readString(rs.log))
          .contains("java.lang.NullPointerException")
          .contains("BucketCache.retrieveChunkedBackingMap");
      hbase.stopRegionServer(0);
      // a new log for the next start: this one holds the trace
      Files.move(rs.log, rs.log.resolveSibling(rs.log.getFileName() + "." + System.nanoTime()));
      System.out.printf(
          "RESULT without the guard, %s: dies at start (NullPointerException)%n", damage);
    }
  }

  /**
   * A full disk under the map (opt-in, root: {@code -Dhbase.it.fullDisk=true} mounts a 64 MiB
   * tmpfs): HBase 2.6.4 writes the map to a temporary file and renames it only when the write
   * succeeded, so the map keeps the last complete one; the temporary files of the failed writes
   * stay beside it. What it found is printed; the RegionServer serves after the guard, the disk
   * still full.
   */
  @Test
  @org.junit.jupiter.api.condition.EnabledIfSystemProperty(
      named = "hbase.it.fullDisk",
      matches = "true")
  void aFullDiskLeavesTheLastCompleteMap() throws Exception {
    Path full = Files.createDirectories(hbase.dir.resolve("full-disk"));
    assertThat(
            new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", full.toString())
                .inheritIO()
                .start()
                .waitFor())
        .isZero();
    Plan fullPlan = Plans.planWithoutPrefetch(CacheMode.PersistentFile, full);
    Map<String, String> site = new LinkedHashMap<>(Plans.settings(fullPlan).site());
    site.putAll(SMALL_CHUNKS);
    var settings = new LocalHBase.RegionServerSettings(fullPlan.env(), site);
    Path fullMap = full.resolve("bucketcache.map");
    try {
      hbase.startRegionServer(0, settings);
      awaitServing();
      table.scanAll();
      table.scanAll();
      Thread.sleep(5_000); // the persister writes the map every second while the L2 changes
      long before = Files.size(fullMap);
      try (var out = Files.newOutputStream(full.resolve("filler"))) {
        byte[] mb = new byte[1 << 20];
        while (true) {
          out.write(mb);
        }
      } catch (java.io.IOException e) {
        System.out.printf("RESULT full disk: filled (%s)%n", e.getMessage());
      }
      table.get(table.rowsInDistinctBlocks(0, 50, 11));
      Thread.sleep(5_000);
      int exit = hbase.stopRegionServer(0);
      byte[] left = Files.readAllBytes(fullMap);
      List<String> temps;
      try (var files = Files.list(full)) {
        temps =
            files
                .map(f -> f.getFileName() + " " + f.toFile().length())
                .filter(f -> f.startsWith("bucketcache.map") && !f.startsWith("bucketcache.map "))
                .toList();
      }
      String guard = PersistenceIT.cacheMapGuard(fullMap);
      System.out.printf(
          "RESULT full disk: SIGTERM exit %d; map %d bytes before the fill, %d after the stop (chunks"
              + " ending at %s); temporary maps left: %s; guard: %s%n",
          exit, before, left.length, chunkEnds(left), temps, guard.strip());
      hbase.startRegionServer(0, settings);
      awaitServing();
      System.out.printf("RESULT full disk: serving again, the disk still full%n");
    } finally {
      hbase.stopRegionServer(0);
      new ProcessBuilder("umount", "-l", full.toString()).inheritIO().start().waitFor();
    }
  }

  private HBaseProcess start() throws Exception {
    Map<String, String> site = new LinkedHashMap<>(Plans.settings(plan).site());
    site.putAll(SMALL_CHUNKS);
    return hbase.startRegionServer(0, new LocalHBase.RegionServerSettings(plan.env(), site));
  }

  /** Starts HBase on a map it may die of: the RPC port may never open. */
  private HBaseProcess startMayDie() throws Exception {
    try {
      return start();
    } catch (org.awaitility.core.ConditionTimeoutException | IllegalStateException e) {
      return hbase.regionServer(0);
    }
  }

  private void awaitServing() {
    hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
    LocalHBase.awaitOneServerServing(admin, 3, Duration.ofSeconds(90)); // meta + 2 table regions
  }

  /**
   * Where each chunk of a map in HBase 2.6's chunked format ends: after "V2UF", the chunk size and
   * the number of chunks, each chunk a varint length and that many bytes.
   */
  static List<Integer> chunkEnds(byte[] map) {
    assertThat(new String(map, 0, 4, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("V2UF");
    long chunks = java.nio.ByteBuffer.wrap(map, 12, 8).getLong();
    List<Integer> ends = new ArrayList<>();
    int off = 20;
    for (long i = 0; i < Math.max(1, chunks); i++) {
      long len = 0;
      int shift = 0;
      int b;
      do {
        b = map[off++] & 0xff;
        len |= (long) (b & 0x7f) << shift;
        shift += 7;
      } while (b >= 0x80);
      off += (int) len;
      ends.add(off);
    }
    return ends;
  }
}
