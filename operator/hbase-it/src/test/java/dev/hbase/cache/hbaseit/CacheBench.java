package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.CacheDelta;
import dev.hbase.cache.operator.hbase.CacheRatios;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.Planner;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;

/**
 * The cache benchmark behind `make bench-cache` (not a test: not matched by *IT). One RegionServer
 * per mode, planned for a 2 GiB container with a ~256 MiB block cache, a table of ~3x that size,
 * and time-bounded random gets from 4 client threads: a working set that fits in the cache (the
 * first half-cache of rows) and one several times the cache (every row). For File and
 * PersistentFile, the throughput of the first minute after a graceful restart too. Every
 * measurement follows a warm-up of the same random gets (JIT of client and server). HBase's root
 * dir is on {@link SlowStorage} (every HFile read waits {@code bench.latencyMillis}, 30 ms by
 * default, uncached; 0: the local filesystem), so a miss costs what it costs on a remote store; the
 * RegionServer's GC time (JMX) and its pauses (GC log) are measured per run. Writes
 * target/bench/results.json.
 */
class CacheBench {

  static final int ROWS = Integer.getInteger("bench.rows", 780_000);
  static final int FITS_ROWS = Integer.getInteger("bench.fitsRows", 120_000);
  static final Duration WARMUP = Duration.ofSeconds(Integer.getInteger("bench.warmupSeconds", 20));

  /** How long the cache counters may take to settle: prefetch on open runs on the slow storage. */
  static final Duration SETTLE = Duration.ofMinutes(8);

  static final Duration MEASURE =
      Duration.ofSeconds(Integer.getInteger("bench.measureSeconds", 30));
  static final Duration AFTER_RESTART =
      Duration.ofSeconds(Integer.getInteger("bench.restartSeconds", 60));
  static final Duration BUCKET = Duration.ofSeconds(5);
  static final int THREADS = 4;

  /** The wait of each HFile read on {@link SlowStorage}; 0: the local filesystem, page cache on. */
  static final int LATENCY_MILLIS = Integer.getInteger("bench.latencyMillis", 30);

  final JmxScraper scraper = new JmxScraper(Duration.ofSeconds(5));

  /** The GC log of the running RegionServer. */
  private Path gcLog;

  @Test
  void benchmark() throws Exception {
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("rows", ROWS);
    results.put("valueBytes", TestTable.VALUE_BYTES);
    results.put("fitsRows", FITS_ROWS);
    results.put("threads", THREADS);
    results.put("measureSeconds", MEASURE.toSeconds());
    results.put("warmupSeconds", WARMUP.toSeconds());
    results.put("latencyMillis", LATENCY_MILLIS);
    List<Map<String, Object>> runs = new ArrayList<>();
    List<Map<String, Object>> restarts = new ArrayList<>();
    results.put("runs", runs);
    results.put("restarts", restarts);

    Path base =
        Files.createDirectories(LocalHBase.IT_DIR.resolve("bench-" + System.currentTimeMillis()));
    try (SlowStorage storage =
            LATENCY_MILLIS > 0
                ? SlowStorage.mount(base.resolve("slowfs"), Duration.ofMillis(LATENCY_MILLIS))
                : null;
        LocalHBase hbase =
            LocalHBase.start(
                "bench", 1, Map.of(), storage == null ? null : storage.mount.resolve("hbase"))) {
      if (storage != null) {
        results.put("storage", storage.measure(THREADS, Duration.ofSeconds(10)));
      }
      hbase.startRegionServer(0, Plans.settings(plan(CacheMode.Lru, hbase.dir)));
      AdminHBaseCluster admin = hbase.admin();
      hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
      Instant loadStart = Instant.now();
      TestTable table = TestTable.create(hbase.connection(), "bench", ROWS, 8);
      results.put("loadSeconds", Duration.between(loadStart, Instant.now()).toSeconds());
      hbase.stopRegionServer(0);
      Connection connection = hbase.connection();
      int infoPort = hbase.regionServerInfoPort(0);

      for (CacheMode mode : CacheMode.values()) {
        Path cacheDir = Files.createDirectories(hbase.dir.resolve("cache-" + mode));
        Plan plan = plan(mode, cacheDir);
        startRegionServer(hbase, mode, plan);
        awaitServing(hbase, admin);
        long capacity = cacheCapacity(TestTable.settledSample(scraper, infoPort, SETTLE), plan);

        // working set that fits: warm it with a scan of its rows, then random gets
        table.scanInParallel(0, FITS_ROWS, 8);
        runs.add(run(mode, "fits", capacity, connection, table, FITS_ROWS, infoPort, WARMUP));

        if (mode.isFile()) {
          hbase.stopRegionServer(0);
          startRegionServer(hbase, mode, plan);
          awaitServing(hbase, admin);
          restarts.add(afterRestart(mode, connection, table, infoPort));
        }

        // working set several times the cache: every row
        runs.add(run(mode, "large", capacity, connection, table, ROWS, infoPort, WARMUP));
        hbase.stopRegionServer(0);
      }
      admin.close();
    }
    Path out = Path.of("target/bench/results.json");
    Files.createDirectories(out.getParent());
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(out.toFile(), results);
    System.out.println("RESULTS " + out.toAbsolutePath());
  }

  /** Starts RegionServer 0 with the plan's settings, its GC logged to a new {@link #gcLog}. */
  private void startRegionServer(LocalHBase hbase, CacheMode mode, Plan plan) throws Exception {
    gcLog = hbase.dir.resolve("logs").resolve("gc-" + mode + "-" + System.nanoTime() + ".log");
    LocalHBase.RegionServerSettings s = Plans.settings(plan);
    Map<String, String> env = new LinkedHashMap<>(s.env());
    env.put("SERVER_GC_OPTS", GcLog.option(gcLog));
    hbase.startRegionServer(0, new LocalHBase.RegionServerSettings(env, s.site()));
  }

  /** The bench policies: a block cache of about 256 MiB in every mode but MetaOnly. */
  static Plan plan(CacheMode mode, Path cacheDir) {
    BlockCachePolicySpec spec = Plans.policy(mode, cacheDir);
    switch (mode) {
      case Lru -> spec.setMemory(new MemorySpec().setHeap(new Quantity("640Mi")));
      case Offheap -> spec.getMemory().setBucketCache(new Quantity("256Mi"));
      case File, PersistentFile -> spec.getMemory().setBucketCache(new Quantity("256Mi"));
      default -> {}
    }
    return (Plan) Planner.plan(spec, Plans.MEMORY_LIMIT, null);
  }

  private static long cacheCapacity(CacheSample s, Plan plan) {
    return plan.bucketCache() > 0 ? s.l2CapacityBytes() : s.l1CapacityBytes();
  }

  private Map<String, Object> run(
      CacheMode mode,
      String loading,
      long capacity,
      Connection c,
      TestTable table,
      int rows,
      int infoPort,
      Duration warmup)
      throws Exception {
    if (!warmup.isZero()) {
      load(c, table, rows, warmup);
    }
    CacheSample before = TestTable.settledSample(scraper, infoPort, SETTLE);
    long gcBefore = scraper.gcTimeMillis(LocalHBase.HOST, infoPort);
    Instant from = Instant.now();
    long[] buckets = load(c, table, rows, MEASURE);
    Instant to = Instant.now();
    long gcAfter = scraper.gcTimeMillis(LocalHBase.HOST, infoPort);
    CacheSample after = TestTable.settledSample(scraper, infoPort, SETTLE);
    CacheDelta d = CacheRatios.between(before, after);
    long ops = java.util.Arrays.stream(buckets).sum();
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("mode", mode.name());
    r.put("loading", loading);
    r.put("cacheBytes", capacity);
    r.put("workingSetBytes", (long) rows * (TestTable.VALUE_BYTES + 48));
    r.put("opsPerSecond", ops / (double) MEASURE.toSeconds());
    r.put("dataHitRatio", d.data().ratioOrNull());
    r.put("dataReadHitRatio", CacheRatios.dataReadHitRatio(d.data(), after.hasL2()));
    r.put("l1HitRatio", d.l1().ratioOrNull());
    r.put("l2HitRatio", d.l2().ratioOrNull());
    r.put("evictions", d.evictions());
    r.put("failedInsertions", d.failedInsertions());
    r.put("l2UsedBytes", after.l2UsedBytes());
    r.put("gcTimeFraction", (gcAfter - gcBefore) / (double) Duration.between(from, to).toMillis());
    r.putAll(GcLog.pauses(gcLog, from, to));
    r.put("loadAverage", loadAverage());
    System.out.printf("RUN %s%n", r);
    return r;
  }

  private Map<String, Object> afterRestart(
      CacheMode mode, Connection c, TestTable table, int infoPort) throws Exception {
    // the load runs in the background; every BUCKET the RegionServer's counters are read, so the
    // hit ratio of each 5 s (lagging the reads by up to the 1 s metrics period) is known too
    CacheSample first = scraper.scrape(LocalHBase.HOST, infoPort);
    ExecutorService loader = Executors.newSingleThreadExecutor();
    long start = System.nanoTime();
    Future<long[]> load = loader.submit(() -> load(c, table, FITS_ROWS, AFTER_RESTART));
    List<Double> ratios = new ArrayList<>();
    CacheSample previous = first;
    for (int i = 1; i <= AFTER_RESTART.toSeconds() / BUCKET.toSeconds(); i++) {
      long wait = start + i * BUCKET.toNanos() - System.nanoTime();
      if (wait > 0) {
        Thread.sleep(wait / 1_000_000);
      }
      CacheSample now = scraper.scrape(LocalHBase.HOST, infoPort);
      ratios.add(
          CacheRatios.dataReadHitRatio(CacheRatios.between(previous, now).data(), now.hasL2()));
      previous = now;
    }
    long[] buckets = load.get();
    loader.shutdown();
    CacheSample after = TestTable.settledSample(scraper, infoPort, SETTLE);
    CacheDelta d = CacheRatios.between(first, after);
    List<Double> opsPerSecond = new ArrayList<>();
    for (long b : buckets) {
      opsPerSecond.add(b / (double) BUCKET.toSeconds());
    }
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("mode", mode.name());
    r.put("bucketSeconds", BUCKET.toSeconds());
    r.put("opsPerSecond", opsPerSecond);
    r.put("dataReadHitRatios", ratios);
    r.put(
        "meanOpsPerSecond",
        java.util.Arrays.stream(buckets).sum() / (double) AFTER_RESTART.toSeconds());
    r.put("dataHitRatio", d.data().ratioOrNull());
    r.put("dataReadHitRatio", CacheRatios.dataReadHitRatio(d.data(), after.hasL2()));
    r.put("l2UsedBytesAtStart", first.l2UsedBytes());
    r.put("loadAverage", loadAverage());
    System.out.printf("RESTART %s%n", r);
    return r;
  }

  /** The machine's 1-minute load average: other work on the machine skews the numbers. */
  private static double loadAverage() {
    return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }

  /** Random gets over rows [0, rows) from THREADS threads for the duration; ops per BUCKET. */
  private static long[] load(Connection c, TestTable table, int rows, Duration duration)
      throws Exception {
    int n = (int) (duration.toSeconds() / BUCKET.toSeconds());
    AtomicLongArray buckets = new AtomicLongArray(n);
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        futures.add(
            pool.submit(
                () -> {
                  try (Table tb = c.getTable(table.name)) {
                    for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
                      int row = ThreadLocalRandom.current().nextInt(rows);
                      tb.get(new Get(Bytes.toBytes(TestTable.row(row))));
                      int b = (int) ((System.nanoTime() - start) / BUCKET.toNanos());
                      if (b < n) {
                        buckets.incrementAndGet(b);
                      }
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      out[i] = buckets.get(i);
    }
    return out;
  }

  private static void awaitServing(LocalHBase hbase, AdminHBaseCluster admin) {
    hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(120));
    LocalHBase.awaitOneServerServing(admin, 9, Duration.ofSeconds(120));
    assertThat(admin.snapshot().live()).hasSize(1);
  }
}
