package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.metrics.CacheProbe;
import java.io.IOException;
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
 * Reads stay warm through a roll, for the whole cluster: the operator's roller restarts three real
 * RegionServers (PersistentFile, the planner's settings) one after the other while a client reads
 * random rows of the whole table, and the share of data reads served from cache is summed over
 * every server's /jmx for the roll's duration. The first roll drains each server's regions to
 * servers that never had them (prefetched as they open); the second sends them to the same servers,
 * which still cache them: from the second roll on at least 98% of the cluster's reads are cached.
 * No read may fail. Figures on stdout ({@code RESULT}); {@code make bench-roll} runs the same with
 * HBase's own drain beside it.
 *
 * <p>HBase's balancer is <em>on</em>, as clusters run (the roller turns it off while it drains and
 * back on after), with the master configured as the planner configures it for PersistentFile (the
 * {@code CacheAwareLoadBalancer}, its weights) and running every {@link #BALANCER_PERIOD}. After
 * each roll every server comes to hold the mean number of regions within one (what the {@code
 * Balanced} condition says; bound {@link #BALANCE_BOUND}, the time it took is a figure) and stays
 * so for three balancer periods on end (a look between two moves of a balancer run that sees a
 * server short, and how many regions are then on another server than at the roll's end, are
 * figures), and the cluster kept at least 98% of its reads from cache in the three balancer periods
 * after the second roll: a roll can end a region or two off (the system tables' regions follow the
 * drains and are not reloaded), which the balancer's next run evens out with moves of regions
 * cached where they go. With the balancer's region-count weight at 0 ({@code
 * -Dbalancer.site=hbase.master.balancer.stochastic.regionCountCost=0}) a roll's end of 3/3/5 stays
 * and the test fails; {@code -Dbalancer.site=key=value,...} adds master keys to try others.
 */
class WarmRollIT {
  static final int SERVERS = 3;
  static final int ROWS = 48_000;
  static final int REGIONS = 9;
  static final int READS_PER_SECOND = 200;

  /**
   * What this test asserts of the cluster's data reads from cache during the second roll and while
   * the balancer runs: the caches were kept (at most 10% missed; a roll that lost a server's cache
   * misses far more). The goal, 0.98, is a performance figure: printed here (RESULT lines) and by
   * {@code make bench-roll} (docs/bench-roll.md), judged in docs/measurements.md, never a failure
   * of {@code make test-hbase}.
   */
  static final double CLUSTER_CACHED_FLOOR = 0.90;

  /** The reader's steady window before the rolls. */
  static final Duration STEADY = Duration.ofSeconds(10);

  /** hbase.balancer.period here (HBase's default is 5 min). */
  static final Duration BALANCER_PERIOD = Duration.ofSeconds(10);

  /**
   * How long after a roll the cluster may take to be balanced: ten balancer periods, several times
   * what was measured (balanced at the roll's end or after the first run).
   */
  static final Duration BALANCE_BOUND = BALANCER_PERIOD.multipliedBy(10);

  /**
   * The figures of one cluster's steady state and two rolls, and of a RegionServer killed after
   * them ({@code crash}, null when not asked for).
   */
  record Run(
      String drain,
      Double steady,
      Reader.Stats steadyReads,
      List<LocalRoll.Result> rolls,
      List<AfterRoll> afterRolls,
      Crash crash) {}

  /**
   * A RegionServer killed with SIGKILL and started again in its "pod" (as the kubelet restarts a
   * killed container), HBase's balancer off: its regions before the kill, the reads from the kill
   * until its restart (the master reassigning its regions), the roller's loop from the restart on
   * ({@code result}) and from its first move home on ({@code homeward}, null without one), the
   * regions per server at the end and those of the victim its cache holds.
   */
  record Crash(
      LocalRoll.Result result,
      String victim,
      List<String> before,
      Map<String, Integer> after,
      List<String> victimAfter,
      List<String> victimAfterCached,
      Reader.Stats untilRestart,
      Reader.Stats homeward) {

    String summary() {
      return String.format(
          Locale.ROOT,
          "%s: %s held %d regions before the kill; reads from the kill until the master had"
              + " reassigned them and it was started again: %s; regions per server after: %s; %d"
              + " of its %d regions at the end are cached there; reads from the first move home on"
              + " (the reads the kill held end meanwhile): %s; from its restart: %s",
          result.label(),
          victim,
          before.size(),
          untilRestart.summary(),
          after,
          victimAfterCached.size(),
          victimAfter.size(),
          homeward == null ? "no move" : homeward.summary(),
          result.summary());
    }
  }

  /**
   * After a roll: the regions per server at its end and once balanced (or at {@link
   * #BALANCE_BOUND}), how long that took (null: not within the bound), the cluster's reads from
   * cache in the three balancer periods after the roll, and the reader until the last look.
   */
  record AfterRoll(
      String label,
      Map<String, Integer> atEnd,
      Map<String, Integer> after,
      Boolean balancerOn,
      Duration balancedAfter,
      boolean settled,
      String unbalancedAgain,
      long moved,
      Double servedFromCache,
      Reader.Stats reads) {

    boolean balanced() {
      return balanced(after);
    }

    /** Every server holds the mean number of regions within one (the Balanced condition). */
    static boolean balanced(Map<String, Integer> counts) {
      double mean = counts.values().stream().mapToInt(Integer::intValue).average().orElse(0);
      return counts.size() == SERVERS
          && counts.values().stream().allMatch(c -> Math.abs(c - mean) <= 1.0);
    }

    String summary() {
      return String.format(
          Locale.ROOT,
          "%s, after it: regions per server at the roll's end %s, then %s (balanced %s%s);"
              + " regions on another server than at the roll's end: %d; balancer on: %s;"
              + " data reads from cache in the three balancer periods after it %s; reads: %s",
          label,
          atEnd,
          after,
          balancedAfter == null
              ? "not within " + BALANCE_BOUND.toSeconds() + " s"
              : balancedAfter.toMillis() / 1000.0 + " s after the roll's end",
          (unbalancedAgain == null ? "" : "; unbalanced in between, first " + unbalancedAgain)
              + (settled ? "" : "; not balanced for three periods on end"),
          moved,
          balancerOn,
          servedFromCache == null ? "n/a" : String.format(Locale.ROOT, "%.4f", servedFromCache),
          reads.summary());
    }
  }

  /** How the roll's drains and reloads move regions. */
  enum Drain {
    /** HBase's own offload (every region to a random server): what the operator did before. */
    HBASE_OFFLOAD("HBase offload", AdminHBaseCluster.Moves.BATCH),
    /** The operator's drain targets, each batch in one recommission call (before warm moves). */
    TARGETS_BATCH("drain targets, batch moves", AdminHBaseCluster.Moves.BATCH),
    /** The operator's drain targets, one warmed-up move per region (the operator's default). */
    TARGETS_WARM("drain targets, warm moves", AdminHBaseCluster.Moves.WARM);

    final String label;
    final AdminHBaseCluster.Moves moves;

    Drain(String label, AdminHBaseCluster.Moves moves) {
      this.label = label;
      this.moves = moves;
    }
  }

  @Test
  void fromTheSecondRollOnTheClustersReadsStayCachedAndNoneFails() throws Exception {
    Run run = run(Drain.TARGETS_WARM, true);
    // a RegionServer restarted in its pod without a delete (SIGKILL): HBase's master reassigned
    // its regions and its balancer is off, so only the roller can have sent them back
    Crash crash = run.crash();
    assertThat(crash.victimAfter())
        .as("regions on the killed server once the roller settled: %s", crash.summary())
        .isNotEmpty();
    assertThat(crash.victimAfterCached())
        .as("each region sent back is cached there: %s", crash.summary())
        .containsExactlyInAnyOrderElementsOf(crash.victimAfter());
    assertThat(AfterRoll.balanced(crash.after()))
        .as("every server within one region of the mean: %s", crash.summary())
        .isTrue();
    assertThat(crash.result().events())
        .as("the roller's events: %s", crash.summary())
        .anyMatch(e -> e.startsWith("RestartedInPlace: "))
        .anyMatch(e -> e.startsWith("RegionsHome: "))
        .noneMatch(e -> e.startsWith("RestartingPod: "));
    LocalRoll.Result first = run.rolls().get(0);
    LocalRoll.Result second = run.rolls().get(1);
    for (LocalRoll.Result r : run.rolls()) {
      assertThat(r.reads().failed())
          .as("failed reads in %s: %s", r.label(), r.reads().errors())
          .isZero();
      assertThat(r.lastRoll().getRestarts()).as("restarts in %s", r.label()).isEqualTo(SERVERS);
      assertThat(r.podSeconds()).as("pods restarted in %s", r.label()).hasSize(SERVERS);
    }
    assertThat(run.steady()).as("steady state before the rolls").isGreaterThanOrEqualTo(0.99);
    assertThat(second.servedFromCache())
        .as(
            "the cluster's data reads served from cache during the second roll (first: %s)",
            first.servedFromCache())
        .isGreaterThanOrEqualTo(CLUSTER_CACHED_FLOOR);
    for (AfterRoll a : run.afterRolls()) {
      assertThat(a.reads().failed()).as("failed reads: %s", a.summary()).isZero();
      assertThat(a.balancerOn()).as("HBase's balancer on: %s", a.summary()).isTrue();
      assertThat(a.balanced())
          .as(
              "every server within one region of the mean within %d s: %s",
              BALANCE_BOUND.toSeconds(), a.summary())
          .isTrue();
      assertThat(a.settled())
          .as(
              "balanced for three balancer periods on end within %d s: %s",
              BALANCE_BOUND.toSeconds(), a.summary())
          .isTrue();
    }
    assertThat(run.afterRolls().get(1).servedFromCache())
        .as("reads from cache while the balancer ran: %s", run.afterRolls().get(1).summary())
        .isGreaterThanOrEqualTo(CLUSTER_CACHED_FLOOR);
  }

  /** Three RegionServers, a table warm in their caches, a reader, then two rolls. */
  static Run run(Drain variant) throws Exception {
    return run(variant, false);
  }

  /** Same, and a RegionServer killed after the rolls when {@code crash}. */
  static Run run(Drain variant, boolean crash) throws Exception {
    return run(
        variant, LocalHBase.Security.NONE, new JmxScraper(Duration.ofSeconds(3))::scrape, crash);
  }

  /** Same, on a cluster secured as {@code security} says, /jmx read over plain HTTP. */
  static Run run(Drain variant, LocalHBase.Security security) throws Exception {
    return run(variant, security, new JmxScraper(Duration.ofSeconds(3))::scrape);
  }

  /**
   * Same, /jmx read through {@code probe} (SecuredRollBench: over HTTPS with SPNEGO, as a policy's
   * {@code spec.hbase.tls} reads it).
   */
  static Run run(Drain variant, LocalHBase.Security security, CacheProbe probe) throws Exception {
    return run(variant, security, probe, false);
  }

  static Run run(Drain variant, LocalHBase.Security security, CacheProbe probe, boolean crash)
      throws Exception {
    String drain =
        variant.label + (security == LocalHBase.Security.NONE ? "" : ", Kerberos-secured");
    // the master as the operator configures it for PersistentFile (masterRef set)
    Map<String, String> master =
        new TreeMap<>(
            Plans.plan(CacheMode.PersistentFile, Files.createTempDirectory("plan")).masterSite());
    master.put("hbase.balancer.period", Long.toString(BALANCER_PERIOD.toMillis()));
    master.putAll(site("balancer.site"));
    String name = "roll-" + variant.name().toLowerCase(Locale.ROOT);
    try (LocalHBase hbase =
        (security == LocalHBase.Security.NONE
                ? LocalHBase.start(name, SERVERS, master)
                : LocalHBase.startSecured(name, SERVERS, master, security))
            .withHostPerRegionServer()) {
      LocalHBase.RegionServerSettings[] settings = new LocalHBase.RegionServerSettings[SERVERS];
      AdminHBaseCluster admin =
          hbase.admin(AdminHBaseCluster.Options.defaults().withMoves(variant.moves));
      for (int i = 0; i < SERVERS; i++) {
        settings[i] = planned(hbase, i);
        hbase.startRegionServer(i, settings[i]);
      }
      for (int i = 0; i < SERVERS; i++) {
        hbase.awaitRegionServerReported(admin, i, Duration.ofSeconds(120));
      }
      admin.balancer(true); // as clusters run: the roller turns it off and back on
      TestTable table = TestTable.create(hbase.connection(), "warmroll", ROWS, REGIONS);
      assertThat(table.scanAll()).isEqualTo(ROWS);
      LocalRoll roll = new LocalRoll(hbase, admin, settings, "rev-0", probe);
      roll.hbaseOffload = variant == Drain.HBASE_OFFLOAD;
      Map<String, String> readerSite = site("reader.site");
      if (!readerSite.isEmpty()) {
        System.out.println("RESULT the reader's client keys: " + readerSite);
      }
      try (Reader reader =
          new Reader(
              hbase.connection(readerSite), table, READS_PER_SECOND, 4, Duration.ofMinutes(20))) {
        Thread.sleep(15_000); // every block read once at least (prefetch, the scan and the reader)
        Instant steadyFrom = Instant.now();
        // the steady window: 2,000 reads at 200/s (it was 20 s; a figure beside the rolls', and
        // the >= 0.99 asserted on it is the cache the rolls start from)
        Thread.sleep(STEADY.toMillis());
        Instant steadyTo = Instant.now();
        Double steady = roll.servedFromCache(steadyFrom, steadyTo);
        Reader.Stats steadyReads = reader.stats(steadyFrom, steadyTo);
        System.out.printf(
            Locale.ROOT,
            "RESULT %s: steady state (%d s before the rolls): data reads from cache %.4f; reads: %s%n",
            drain,
            STEADY.toSeconds(),
            steady,
            steadyReads.summary());
        List<LocalRoll.Result> rolls = new ArrayList<>();
        List<AfterRoll> afterRolls = new ArrayList<>();
        for (String rev : List.of("rev-1", "rev-2")) {
          LocalRoll.Result r =
              roll.roll(
                  drain + ", " + (rev.equals("rev-1") ? "first" : "second") + " roll",
                  rev,
                  reader,
                  Duration.ofMinutes(8));
          System.out.println("RESULT " + r.summary());
          r.events().forEach(e -> System.out.println("  event " + e));
          roll.timeline().forEach(e -> System.out.println("  at " + e));
          reader
              .slowSeconds(r.start(), r.end(), 200_000)
              .forEach(e -> System.out.println("  slow second " + e));
          rolls.add(r);
          ClusterSnapshot endState = admin.snapshot();
          Map<String, Integer> atEnd = regionsPerServer(endState);
          // three balancer periods at least (the window of the cache figure), and until balanced
          // within BALANCE_BOUND: how long it took is a figure, the bound only a behaviour bound
          Instant windowEnd = r.end().plus(BALANCER_PERIOD.multipliedBy(3));
          Instant bound = r.end().plus(BALANCE_BOUND);
          ClusterSnapshot later = admin.snapshot();
          Instant balancedAt = null;
          String unbalancedAgain = null; // the first look, once balanced, that was not
          boolean settled = false; // balanced for three periods on end within the bound
          while (true) {
            boolean balanced = AfterRoll.balanced(regionsPerServer(later));
            if (balancedAt == null && balanced) {
              balancedAt = Instant.now();
            } else if (balancedAt != null && !balanced) {
              // a balancer run in progress: its moves go one by one, so a look between two of
              // them can see a server short (the CI run on 1e9adec saw 3/4/4, then 1/5/4 at 10 s,
              // then 3/4/4 again, 5 regions moved, reads from cache 1.0000): a figure; what must
              // hold is a balanced cluster that stays so for three periods within the bound
              if (unbalancedAgain == null) {
                unbalancedAgain =
                    Duration.between(r.end(), Instant.now()).toSeconds()
                        + " s after the roll's end: "
                        + regionsPerServer(later);
              }
              balancedAt = null;
            }
            // once balanced, three more periods at least: a balancer run that undoes it shows
            if (balancedAt != null
                && !Instant.now().isBefore(windowEnd)
                && !Instant.now().isBefore(balancedAt.plus(BALANCER_PERIOD.multipliedBy(3)))) {
              settled = true;
              break;
            }
            if (Instant.now().isAfter(bound)) {
              break;
            }
            Thread.sleep(1000);
            later = admin.snapshot();
          }
          Instant now = Instant.now();
          AfterRoll a =
              new AfterRoll(
                  r.label(),
                  atEnd,
                  regionsPerServer(later),
                  later.balancerOn(),
                  balancedAt == null ? null : Duration.between(r.end(), balancedAt),
                  settled,
                  unbalancedAgain,
                  moved(endState, later),
                  roll.servedFromCache(r.end(), windowEnd),
                  reader.stats(r.end(), now));
          System.out.println("RESULT " + a.summary());
          afterRolls.add(a);
        }
        return new Run(
            drain,
            steady,
            steadyReads,
            rolls,
            afterRolls,
            crash ? crash(hbase, admin, roll, reader) : null);
      } finally {
        roll.close();
      }
    }
  }

  /**
   * RegionServer {@code i}'s settings as the operator renders them for PersistentFile (the
   * planner's env and site keys, its cache file under the cluster's directory), with a 10 s
   * ZooKeeper session: a killed server's instance expires 10 s after the kill, not 40.
   */
  static LocalHBase.RegionServerSettings planned(LocalHBase hbase, int i) throws IOException {
    return planned(hbase, i, true);
  }

  /** Same, without prefetch on open when not {@code prefetch}. */
  static LocalHBase.RegionServerSettings planned(LocalHBase hbase, int i, boolean prefetch)
      throws IOException {
    Path dir = Files.createDirectories(hbase.dir.resolve("cache-rs" + i));
    LocalHBase.RegionServerSettings planned =
        Plans.settings(
            prefetch
                ? Plans.plan(CacheMode.PersistentFile, dir)
                : Plans.planWithoutPrefetch(CacheMode.PersistentFile, dir));
    Map<String, String> site = new TreeMap<>(planned.site());
    site.put("zookeeper.session.timeout", "10000");
    return new LocalHBase.RegionServerSettings(planned.env(), site);
  }

  /**
   * After the rolls: HBase's balancer off (so that only the roller can send regions back), a
   * RegionServer that does not host hbase:meta killed and started again in its "pod".
   */
  static Crash crash(LocalHBase hbase, AdminHBaseCluster admin, LocalRoll roll, Reader reader)
      throws Exception {
    admin.balancer(false);
    ClusterSnapshot before = admin.snapshot();
    int victim =
        java.util.stream.IntStream.range(0, SERVERS)
            .filter(
                i ->
                    before
                        .liveAt(hbase.regionServerHost(i), hbase.regionServerPort(i))
                        .map(x -> !before.hostsMeta(x.id()))
                        .orElse(false))
            .findFirst()
            .orElseThrow();
    String host = hbase.regionServerHost(victim);
    int port = hbase.regionServerPort(victim);
    List<String> regionsBefore = before.liveAt(host, port).orElseThrow().regions();
    Instant killed = Instant.now();
    LocalRoll.Result r =
        roll.crash(
            "a RegionServer killed (SIGKILL) and restarted in its pod",
            victim,
            "rev-2",
            reader,
            Duration.ofMinutes(3));
    ClusterSnapshot after = admin.snapshot();
    var server = after.liveAt(host, port);
    List<String> victimAfter = server.map(x -> x.regions()).orElse(List.of());
    Crash c =
        new Crash(
            r,
            "rs-" + victim,
            regionsBefore,
            regionsPerServer(after),
            victimAfter,
            victimAfter.stream().filter(x -> server.get().cachedMb(x) > 0).toList(),
            reader.stats(killed, r.start()),
            r.moves().stream()
                .map(m -> m.finished().minusMillis(m.millis()))
                .min(Instant::compareTo)
                .map(from -> reader.stats(from, r.end()))
                .orElse(null));
    System.out.println("RESULT " + c.summary());
    r.events().forEach(e -> System.out.println("  event " + e));
    roll.timeline().forEach(e -> System.out.println("  at " + e));
    return c;
  }

  /** How many regions are on another server in {@code later} than in {@code before}. */
  static long moved(ClusterSnapshot before, ClusterSnapshot later) {
    Map<String, ServerId> was = before.locations();
    return later.locations().entrySet().stream()
        .filter(e -> was.containsKey(e.getKey()) && !was.get(e.getKey()).sameEndpoint(e.getValue()))
        .count();
  }

  /** Regions per server, every region (as the Balanced condition counts them). */
  static Map<String, Integer> regionsPerServer(ClusterSnapshot s) {
    Map<String, Integer> out = new TreeMap<>();
    s.live().forEach(x -> out.put(x.id().host(), x.regionCount()));
    return out;
  }

  /**
   * Keys from a system property {@code key=value,...}: {@code balancer.site} for the master (other
   * balancer weights), {@code reader.site} for the reader's client ({@code hbase.client.pause}).
   */
  private static Map<String, String> site(String property) {
    Map<String, String> out = new TreeMap<>();
    for (String kv : System.getProperty(property, "").split(",")) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        out.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
      }
    }
    return out;
  }
}
