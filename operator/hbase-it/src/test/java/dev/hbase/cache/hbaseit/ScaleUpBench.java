package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ServerId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@code make bench-scale-up}: a RegionServer of an ordinal never seen before joins a warm cluster
 * (a StatefulSet scaled 3 -> 4), with a reader over the whole table throughout. Its cache is empty,
 * so no region is cached there: the operator claims nothing for it (a homecoming needs cached
 * regions) and HBase's balancer, configured as the planner configures it for PersistentFile (the
 * {@code CacheAwareLoadBalancer}), gives it its share. That balancer paces such moves itself: after
 * each move onto a server without the region cached it sleeps {@code
 * hbase.master.balancer.move.throttlingMillis} (60 s, HBase's default, which the planner keeps),
 * and a run ends at {@code hbase.balancer.max.balancing} (the period by default): about one region
 * a minute. Measured, per variant on a fresh cluster: how long until its first region and until
 * every server holds the mean within one, how many regions moved and how long each move took (the
 * master's log), and over the same {@link #WINDOW} from the new server's report for every variant
 * the cluster's reads from cache and the reader; at the end, how many of its regions its cache
 * holds (80% of the region's blocks or more). Variants: the planner's settings; the same unpaced
 * ({@code throttlingMillis} 0: every move of a run at once); the planner's settings without
 * prefetch on open. Writes {@code target/bench/scale-up.md} (the make target copies it to {@code
 * docs/bench-scale-up.md}; with {@code -Dbench.regions=N}, {@code scale-up-N-regions.md} to {@code
 * docs/bench-scale-up-N-regions.md}), with a row for a variant that failed. Not a test: it checks
 * only that it measured (no read failed, the new server got regions), after writing the report.
 */
class ScaleUpBench {
  static final int SERVERS = 3;

  /**
   * The table's regions: 12 ({@code docs/bench-scale-up.md}), or {@code -Dbench.regions=N} for a
   * cluster of more regions per server (the windows below grow with the new server's share).
   */
  static final int REGIONS = Integer.getInteger("bench.regions", 12);

  /** The new server's share of every region, the table's and HBase's own two, rounded up. */
  static final int SHARE = (REGIONS + 2 + SERVERS) / (SERVERS + 1);

  /** The balancer's period here, as in {@link WarmRollIT} (HBase's default is 5 min). */
  static final Duration PERIOD = WarmRollIT.BALANCER_PERIOD;

  /**
   * HBase's {@code hbase.master.balancer.move.throttlingMillis} default, which the planner keeps.
   */
  static final Duration THROTTLE = Duration.ofSeconds(60);

  /**
   * The window of the cache and reader figures, the same for every variant: from the new server's
   * report, as many paced moves as the new server's share (four of the 14 regions at least).
   */
  static final Duration WINDOW = THROTTLE.plus(PERIOD).multipliedBy(Math.max(4, SHARE));

  /** How long after the new server's report the bench waits for balance. */
  static final Duration BOUND = THROTTLE.plus(PERIOD).multipliedBy(Math.max(6, SHARE + 2));

  enum Variant {
    PLANNED("the planner's settings (paced: 60 s after a move)", Map.of(), true),
    UNPACED(
        "unpaced (throttlingMillis 0)",
        Map.of("hbase.master.balancer.move.throttlingMillis", "0"),
        true),
    NO_PREFETCH("the planner's settings without prefetch on open", Map.of(), false);

    final String label;
    final Map<String, String> master;
    final boolean prefetch;

    Variant(String label, Map<String, String> master, boolean prefetch) {
      this.label = label;
      this.master = master;
      this.prefetch = prefetch;
    }
  }

  /** One variant's figures. */
  record Result(
      Variant variant,
      Double steady,
      Reader.Stats steadyReads,
      Duration firstRegionAfter,
      Duration balancedAfter,
      String unbalancedAgain,
      Map<String, Integer> before,
      Map<String, Integer> after,
      long moved,
      RegionMoves.Summary moves,
      int newServerRegions,
      int newServerCached,
      Double servedFromCache,
      Reader.Stats reads) {}

  @Test
  void aFourthRegionServerJoinsAWarmCluster() throws Exception {
    List<Result> results = new ArrayList<>();
    Map<Variant, String> failed = new TreeMap<>();
    // -Dbench.variants=PLANNED,UNPACED: only those (all by default); a name that is none fails
    String only = System.getProperty("bench.variants", "");
    List<Variant> chosen =
        only.isBlank()
            ? List.of(Variant.values())
            : java.util.Arrays.stream(only.split(","))
                .map(x -> Variant.valueOf(x.trim().toUpperCase(Locale.ROOT)))
                .toList();
    for (Variant v : chosen) {
      try {
        results.add(run(v));
      } catch (Exception | AssertionError e) {
        failed.put(v, e.toString());
        e.printStackTrace(System.out);
      }
    }
    String md = report(results, failed);
    // the 12-region report is docs/bench-scale-up.md; another count's goes beside it
    Path out =
        Path.of(
            REGIONS == 12
                ? "target/bench/scale-up.md"
                : "target/bench/scale-up-" + REGIONS + "-regions.md");
    Files.createDirectories(out.getParent());
    Files.writeString(out, md);
    System.out.println(md);
    assertThat(failed).as("variants that failed").isEmpty();
    for (Result r : results) { // after the report: a variant that failed is in it too
      assertThat(r.reads().failed()).as("failed reads: %s", line(r)).isZero();
      assertThat(r.newServerRegions()).as("regions on the new server: %s", line(r)).isPositive();
    }
  }

  static Result run(Variant v) throws Exception {
    Map<String, String> master =
        new TreeMap<>(
            Plans.plan(CacheMode.PersistentFile, Files.createTempDirectory("plan")).masterSite());
    master.put("hbase.balancer.period", Long.toString(PERIOD.toMillis()));
    master.putAll(v.master);
    String name = "scaleup-" + v.name().toLowerCase(Locale.ROOT);
    try (LocalHBase hbase = LocalHBase.start(name, SERVERS + 1, master).withHostPerRegionServer()) {
      AdminHBaseCluster admin = hbase.admin();
      LocalHBase.RegionServerSettings[] settings = new LocalHBase.RegionServerSettings[SERVERS + 1];
      for (int i = 0; i <= SERVERS; i++) {
        settings[i] = WarmRollIT.planned(hbase, i, v.prefetch);
      }
      for (int i = 0; i < SERVERS; i++) {
        hbase.startRegionServer(i, settings[i]);
      }
      for (int i = 0; i < SERVERS; i++) {
        hbase.awaitRegionServerReported(admin, i, Duration.ofSeconds(120));
      }
      admin.balancer(true);
      TestTable table = TestTable.create(hbase.connection(), "scaleup", WarmRollIT.ROWS, REGIONS);
      assertThat(table.scanAll()).isEqualTo(WarmRollIT.ROWS);
      // the sampler of every server's /jmx (the new one's answers once it is up); nothing is rolled
      LocalRoll sampler = new LocalRoll(hbase, admin, settings, "rev-0");
      try (Reader reader =
          new Reader(
              hbase.connection(),
              table,
              WarmRollIT.READS_PER_SECOND,
              4,
              // the settling (up to BOUND), the steady window, then up to BOUND after the join
              BOUND.multipliedBy(2).plus(Duration.ofMinutes(5)))) {
        // the three servers settled first: nothing in transition, the mean within one
        org.awaitility.Awaitility.await("three servers balanced, nothing in transition")
            .atMost(BOUND)
            .pollInterval(Duration.ofSeconds(1))
            .until(
                () -> {
                  ClusterSnapshot x = admin.snapshot();
                  return x.regionsInTransition() == 0
                      && WarmRollIT.AfterRoll.balanced(WarmRollIT.regionsPerServer(x));
                });
        Thread.sleep(15_000); // every block read once at least (prefetch, the scan and the reader)
        Instant steadyFrom = Instant.now();
        Thread.sleep(WarmRollIT.STEADY.toMillis());
        Instant steadyTo = Instant.now();
        ClusterSnapshot before = admin.snapshot();
        Instant started = Instant.now();
        hbase.startRegionServer(SERVERS, settings[SERVERS]);
        ServerId joined = hbase.awaitRegionServerReported(admin, SERVERS, Duration.ofSeconds(120));
        Instant reported = Instant.now();
        Instant windowEnd = reported.plus(WINDOW);
        Instant firstRegion = null;
        Instant balancedAt = null;
        String unbalancedAgain = null; // the first look, once balanced, that was not
        ClusterSnapshot now = admin.snapshot();
        while (true) {
          int onNew = regionsOn(now, joined);
          boolean balanced =
              onNew > 0
                  && now.regionsInTransition() == 0
                  && balanced(WarmRollIT.regionsPerServer(now));
          if (firstRegion == null && onNew > 0) {
            firstRegion = Instant.now();
          }
          if (balancedAt == null && balanced) {
            balancedAt = Instant.now();
          } else if (balancedAt != null && !balanced && unbalancedAgain == null) {
            unbalancedAgain =
                Duration.between(reported, Instant.now()).toSeconds()
                    + " s after the report: "
                    + WarmRollIT.regionsPerServer(now);
          }
          Instant t = Instant.now();
          if ((balancedAt != null
                  && !t.isBefore(windowEnd)
                  && t.isAfter(balancedAt.plus(PERIOD.multipliedBy(3))))
              || t.isAfter(reported.plus(BOUND))) {
            break;
          }
          Thread.sleep(1000);
          now = admin.snapshot();
        }
        Instant end = Instant.now();
        var server = now.live(joined);
        List<String> mine = server.map(ClusterSnapshot.ServerState::regions).orElse(List.of());
        int cached =
            (int)
                mine.stream()
                    .filter(x -> server.get().cachedRatio().getOrDefault(x, 0f) >= 0.8f)
                    .count();
        Result r =
            new Result(
                v,
                sampler.servedFromCache(steadyFrom, steadyTo),
                reader.stats(steadyFrom, steadyTo),
                firstRegion == null ? null : Duration.between(reported, firstRegion),
                balancedAt == null ? null : Duration.between(reported, balancedAt),
                unbalancedAgain,
                WarmRollIT.regionsPerServer(before),
                WarmRollIT.regionsPerServer(now),
                WarmRollIT.moved(before, now),
                RegionMoves.summary(
                    RegionMoves.read(
                        hbase.dir.resolve("logs").resolve("master.log"), started, end, List.of()),
                    false),
                mine.size(),
                cached,
                sampler.servedFromCache(reported, windowEnd),
                reader.stats(reported, windowEnd));
        System.out.println("RESULT " + line(r));
        reader
            .slowSeconds(reported, end, 200_000)
            .forEach(e -> System.out.println("  slow second " + e));
        return r;
      } finally {
        sampler.close();
      }
    }
  }

  static int regionsOn(ClusterSnapshot s, ServerId id) {
    return s.live(id).map(ClusterSnapshot.ServerState::regionCount).orElse(0);
  }

  /** Every server within one region of the mean (the Balanced condition), four servers. */
  static boolean balanced(Map<String, Integer> counts) {
    double mean = counts.values().stream().mapToInt(Integer::intValue).average().orElse(0);
    return counts.size() == SERVERS + 1
        && counts.values().stream().allMatch(c -> Math.abs(c - mean) <= 1.0);
  }

  static String ratio(Double r) {
    return r == null ? "n/a" : String.format(Locale.ROOT, "%.4f", r);
  }

  /** Whole seconds: the looks are a second apart. */
  static String seconds(Duration d) {
    return d == null ? "not within " + BOUND.toSeconds() + " s" : d.toSeconds() + " s";
  }

  static String line(Result r) {
    return String.format(
        Locale.ROOT,
        "%s: first region on the new server %s after its report, balanced %s after it%s; regions"
            + " per server %s -> %s (%d moved; moves %s); %d of its %d regions cached there at"
            + " the end; in the %d s from its report: data reads from cache, all servers, %s;"
            + " reads: %s",
        r.variant().label,
        seconds(r.firstRegionAfter()),
        seconds(r.balancedAfter()),
        r.unbalancedAgain() == null ? "" : " (then unbalanced again " + r.unbalancedAgain() + ")",
        r.before(),
        r.after(),
        r.moved(),
        r.moves(),
        r.newServerCached(),
        r.newServerRegions(),
        WINDOW.toSeconds(),
        ratio(r.servedFromCache()),
        r.reads().summary());
  }

  static String report(List<Result> results, Map<Variant, String> failed)
      throws java.io.IOException {
    StringBuilder md =
        new StringBuilder(
            "# A RegionServer never seen before joins a warm cluster\n\n"
                + "`make bench-scale-up` (operator/hbase-it `ScaleUpBench`): three local"
                + " RegionServers (PersistentFile, the planner's settings for a 2 GiB container)"
                + " serve a table whose blocks they cache; a client reads random rows of the whole"
                + " table throughout. A fourth RegionServer, with an empty cache, starts (a"
                + " StatefulSet scaled 3 -> 4 to an ordinal it never had). The operator claims no"
                + " region for it (a homecoming needs regions cached there); HBase's balancer,"
                + " configured as the planner configures it for PersistentFile and running every "
                + PERIOD.toSeconds()
                + " s here (HBase's default is 5 min), gives it its share. That balancer paces"
                + " such moves itself: after a move onto a server that does not cache the region it"
                + " sleeps `hbase.master.balancer.move.throttlingMillis` (60 s by default, which the"
                + " planner keeps), and a run ends at `hbase.balancer.max.balancing` (the period by"
                + " default): about one region a minute. Timed from the new server's first report"
                + " to the master: its first region, and every server holding the mean number of"
                + " regions within one with nothing in transition (looked at every second). The"
                + " cache and reader figures cover the same "
                + WINDOW.toSeconds()
                + " s from that report for every variant. A region move's time is the master's own"
                + " (close on one server to open on the other, what a read of the region waits)."
                + " A region counts as cached on the new server with 80% of its blocks or more."
                + " Each variant on a fresh cluster, the three servers balanced and idle of"
                + " transitions before the fourth starts.\n\n");
    md.append(
        String.format(
            Locale.ROOT,
            "Machine: %d cores, %s; load average at the end %s; HBase 2.6.4, %d rows x 1000 B in %d"
                + " regions, a reader of random rows at %d/s (4 threads; latency from each read's"
                + " scheduled time).%n%n",
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("os.name") + " " + System.getProperty("os.version"),
            Files.readString(Path.of("/proc/loadavg")).trim(),
            WarmRollIT.ROWS,
            REGIONS,
            WarmRollIT.READS_PER_SECOND));
    md.append(
        "| variant | steady: from cache / worst second's p99 | first region (s) | balanced (s) |"
            + " unbalanced again |"
            + " regions per server before -> after | moved | moves | new server's regions cached"
            + " there | data reads from cache, all servers | reads | over 100 ms | p99 | worst"
            + " second's p99 | max | seconds with p99 > 200 ms | failed |\n"
            + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Result r : results) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %.4f / %.0f ms | %s | %s | %s | %s -> %s | %d | %s | %d of %d | %s | %d | %d |"
                  + " %.0f"
                  + " ms | %.0f ms | %.0f ms | %d | %d |%n",
              r.variant().label,
              r.steady(),
              r.steadyReads().worstSecondP99Micros() / 1000.0,
              r.firstRegionAfter() == null ? "-" : r.firstRegionAfter().toSeconds(),
              r.balancedAfter() == null
                  ? "not within " + BOUND.toSeconds()
                  : r.balancedAfter().toSeconds(),
              r.unbalancedAgain() == null ? "no" : r.unbalancedAgain(),
              r.before().values(),
              r.after().values(),
              r.moved(),
              r.moves(),
              r.newServerCached(),
              r.newServerRegions(),
              ratio(r.servedFromCache()),
              r.reads().reads(),
              r.reads().slow(),
              r.reads().p99Micros() / 1000.0,
              r.reads().worstSecondP99Micros() / 1000.0,
              r.reads().maxMicros() / 1000.0,
              r.reads().secondsOverTarget(),
              r.reads().failed()));
    }
    failed.forEach(
        (v, e) ->
            md.append("| ")
                .append(v.label)
                .append(" | failed: ")
                .append(e.replace('|', '/').replace('\n', ' '))
                .append(" |\n"));
    return md.toString();
  }
}
