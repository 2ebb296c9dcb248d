package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.CacheRatios;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.plan.Plan;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.hbase.client.Connection;
import org.junit.jupiter.api.Test;

/**
 * The restart benchmark behind `make bench-restart` (not a test: not matched by *IT): the published
 * restart figures (throughput in the first minute after a RegionServer restart, with and without a
 * persistent BucketCache) on storage where a miss costs what it costs on a remote store. HBase's
 * root dir (HFiles, WALs) is on a {@link SlowStorage} mount: every read of an HFile waits {@code
 * bench.latencyMillis} (30 ms by default: a ranged GET from an object store), uncached. One
 * RegionServer with the operator's own settings for File and for PersistentFile (planned for a 2
 * GiB container, a 1280 MiB L2 on local disk), a table of about 1 GiB, all of it read: more blocks
 * than the storage can serve the client's threads in a minute. For each mode: the cache warmed by a
 * scan, a client reading random rows at a fixed rate (open loop: a read due while others are slow
 * waits and counts its wait) for a warm-up and a measured minute, a graceful restart (SIGTERM, same
 * settings and cache files), and the same client again from the moment every region is online.
 * Writes target/bench/restart.json; bench/restart-report.py turns it into docs/bench-restart.md and
 * a plot.
 */
class RestartBench {

  static final int ROWS = Integer.getInteger("bench.rows", 1_000_000);
  static final Duration LATENCY = Duration.ofMillis(Integer.getInteger("bench.latencyMillis", 30));
  static final int RATE = Integer.getInteger("bench.rate", 1000);
  static final int THREADS = Integer.getInteger("bench.threads", 4);
  static final Duration WARMUP = Duration.ofSeconds(Integer.getInteger("bench.warmupSeconds", 20));
  static final Duration BEFORE = Duration.ofSeconds(Integer.getInteger("bench.beforeSeconds", 60));
  static final Duration AFTER = Duration.ofSeconds(Integer.getInteger("bench.afterSeconds", 180));
  static final Duration SAMPLE = Duration.ofSeconds(5);

  final JmxScraper scraper = new JmxScraper(Duration.ofSeconds(5));

  @Test
  void benchmark() throws Exception {
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("rows", ROWS);
    results.put("valueBytes", TestTable.VALUE_BYTES);
    results.put("rate", RATE);
    results.put("threads", THREADS);
    results.put("beforeSeconds", BEFORE.toSeconds());
    results.put("afterSeconds", AFTER.toSeconds());
    List<Map<String, Object>> restarts = new ArrayList<>();
    Path base =
        Files.createDirectories(
            LocalHBase.IT_DIR.resolve("restart-bench-" + System.currentTimeMillis()));
    try (SlowStorage storage = SlowStorage.mount(base.resolve("slowfs"), LATENCY)) {
      results.put("storage", storage.measure(THREADS, Duration.ofSeconds(10)));
      System.out.printf("STORAGE %s%n", results.get("storage"));
      try (LocalHBase hbase =
          LocalHBase.start("restart-bench", 1, Map.of(), storage.mount.resolve("hbase"))) {
        AdminHBaseCluster admin = hbase.admin();
        Instant loadStart = Instant.now();
        TestTable table = hbase.loadWithLru(admin, "restart", ROWS, 8);
        results.put("loadSeconds", Duration.between(loadStart, Instant.now()).toSeconds());
        for (CacheMode mode : List.of(CacheMode.File, CacheMode.PersistentFile)) {
          restarts.add(restart(hbase, admin, table, mode));
          results.put("restarts", restarts);
          write(results);
        }
      }
    }
    results.put("restarts", restarts);
    write(results);
  }

  private Map<String, Object> restart(
      LocalHBase hbase, AdminHBaseCluster admin, TestTable table, CacheMode mode) throws Exception {
    Plan plan = plan(mode, Files.createDirectories(hbase.dir.resolve("cache-" + mode)));
    int infoPort = hbase.regionServerInfoPort(0);
    hbase.startRegionServer(0, Plans.settings(plan));
    awaitServing(hbase, admin);
    Instant warm = Instant.now();
    table.scanInParallel(0, table.rows, 8);
    long warmSeconds = Duration.between(warm, Instant.now()).toSeconds();
    CacheSample warmed = TestTable.settledSample(scraper, infoPort);

    Map<String, Object> r = new LinkedHashMap<>();
    r.put("mode", mode.name());
    r.put("l2CapacityBytes", warmed.l2CapacityBytes());
    r.put("warmScanSeconds", warmSeconds);
    r.put("l2UsedBytesBefore", warmed.l2UsedBytes());
    Connection client = hbase.connection();
    try (Reader warmup = new Reader(client, table, RATE, THREADS, WARMUP)) {
      Thread.sleep(WARMUP.toMillis()); // the client's JIT, connections and region locations
    }
    r.put("before", read(client, table, infoPort, BEFORE, false));

    Instant stop = Instant.now();
    int exit = hbase.stopRegionServer(0);
    hbase.startRegionServer(0, Plans.settings(plan));
    awaitServing(hbase, admin);
    r.put("restartExit", exit);
    r.put("restartSeconds", Duration.between(stop, Instant.now()).toMillis() / 1000.0);
    r.put("l2UsedBytesAtStart", scraper.scrape(LocalHBase.HOST, infoPort).l2UsedBytes());
    r.put("after", read(client, table, infoPort, AFTER, true));
    r.put("loadAverage", loadAverage());
    hbase.stopRegionServer(0);
    System.out.printf("RESTART %s%n", summary(r));
    return r;
  }

  /** The bench policies: the operator's plan for the mode with a 1280 MiB L2 on local disk. */
  static Plan plan(CacheMode mode, Path cacheDir) {
    BlockCachePolicySpec spec = Plans.policy(mode, cacheDir);
    spec.getMemory().setBucketCache(new Quantity("1280Mi"));
    spec.getStorage().setSize(new Quantity("3Gi")); // the L2 plus the planner's 1Gi for map and fs
    return Plans.plan(spec);
  }

  /**
   * The client at {@link #RATE} reads/s for {@code duration}, with the RegionServer's counters read
   * every {@link #SAMPLE}: per second the reads completed, p50/p99 of the reads due then and
   * failures; per sample the share of data reads served from cache.
   */
  private Map<String, Object> read(
      Connection client, TestTable table, int infoPort, Duration duration, boolean sampleRatios)
      throws Exception {
    Instant start = Instant.now();
    List<Double> ratios = new ArrayList<>();
    CacheSample first = scraper.scrape(LocalHBase.HOST, infoPort);
    List<double[]> perSecond;
    try (Reader reader = new Reader(client, table, RATE, THREADS, duration)) {
      CacheSample previous = first;
      for (int i = 1; i <= duration.toSeconds() / SAMPLE.toSeconds(); i++) {
        long wait = start.plus(SAMPLE.multipliedBy(i)).toEpochMilli() - System.currentTimeMillis();
        if (wait > 0) {
          Thread.sleep(wait);
        }
        if (sampleRatios) {
          CacheSample now = scraper.scrape(LocalHBase.HOST, infoPort);
          ratios.add(
              CacheRatios.dataReadHitRatio(CacheRatios.between(previous, now).data(), now.hasL2()));
          previous = now;
        }
      }
      Thread.sleep(2000); // reads due at the end complete
      perSecond = reader.perSecond(start, (int) duration.toSeconds());
      Reader.Stats stats = reader.stats(start, start.plus(duration));
      CacheSample last = TestTable.settledSample(scraper, infoPort);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("start", start.toString());
      m.put("readsPerSecond", perSecond.stream().map(s -> s[0]).toList());
      m.put("p50Millis", perSecond.stream().map(s -> s[1]).toList());
      m.put("p99Millis", perSecond.stream().map(s -> s[2]).toList());
      m.put("failed", stats.failed());
      m.put("reads", stats.reads());
      m.put("p50MillisAll", stats.p50Micros() / 1000.0);
      m.put("p99MillisAll", stats.p99Micros() / 1000.0);
      m.put(
          "dataReadHitRatio",
          CacheRatios.dataReadHitRatio(CacheRatios.between(first, last).data(), last.hasL2()));
      if (sampleRatios) {
        m.put("sampleSeconds", SAMPLE.toSeconds());
        m.put("dataReadHitRatios", ratios);
      }
      return m;
    }
  }

  @SuppressWarnings("unchecked")
  private static String summary(Map<String, Object> r) {
    Map<String, Object> before = (Map<String, Object>) r.get("before");
    Map<String, Object> after = (Map<String, Object>) r.get("after");
    return String.format(
        "%s: restart %.1f s, L2 at start %d MiB; before %s reads/s p99 %s ms; after: %s reads in"
            + " %d s, p99 %s ms, failed %s",
        r.get("mode"),
        (Double) r.get("restartSeconds"),
        ((Number) r.get("l2UsedBytesAtStart")).longValue() >> 20,
        ((List<Double>) before.get("readsPerSecond"))
                .stream().mapToDouble(Double::doubleValue).sum()
            / BEFORE.toSeconds(),
        before.get("p99MillisAll"),
        after.get("reads"),
        AFTER.toSeconds(),
        after.get("p99MillisAll"),
        after.get("failed"));
  }

  private static void write(Map<String, Object> results) throws Exception {
    Path out = Path.of("target/bench/restart.json");
    Files.createDirectories(out.getParent());
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(out.toFile(), results);
    System.out.println("RESULTS " + out.toAbsolutePath());
  }

  private static double loadAverage() {
    return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }

  private static void awaitServing(LocalHBase hbase, AdminHBaseCluster admin) {
    hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(180));
    LocalHBase.awaitOneServerServing(admin, 9, Duration.ofSeconds(300));
    assertThat(admin.snapshot().live()).hasSize(1);
  }
}
