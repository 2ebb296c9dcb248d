package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.CacheDelta;
import dev.hbase.cache.operator.hbase.CacheRatios;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.RecommissionResult;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.render.PodHooks;
import dev.hbase.cache.operator.roll.DrainTargets;
import dev.hbase.cache.operator.roll.RollModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The roller's DrainAndReload on two real RegionServers with PersistentFile settings, through
 * {@link AdminHBaseCluster}: remember the server's regions, decommission it with offload, stop it
 * (SIGTERM), start it again, recommission it with the same regions. The same regions come back to
 * the same host:port (new start code), the old decommission mark is gone, and their blocks are
 * still cached there. The server drained is the hbase:meta host, so meta's deliberate moves are
 * covered too. Last, with the master stopped, admin calls fail within seconds.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DrainAndReloadIT {

  static final int ROWS = 64_000;
  static final int REGIONS = 6;

  LocalHBase hbase;
  AdminHBaseCluster admin;
  TestTable table;
  final JmxScraper scraper = new JmxScraper(Duration.ofSeconds(5));
  final LocalHBase.RegionServerSettings[] settings = new LocalHBase.RegionServerSettings[2];

  @BeforeAll
  void startCluster() throws Exception {
    hbase = LocalHBase.start("drain", 2);
    for (int i = 0; i < 2; i++) {
      settings[i] =
          Plans.settings(
              Plans.plan(
                  Plans.persistentOrFile(), // File on 2.5: no persistent cache there
                  Files.createDirectories(hbase.dir.resolve("cache-rs" + i))));
      hbase.startRegionServer(i, settings[i]);
    }
    admin = hbase.admin();
    hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
    hbase.awaitRegionServerReported(admin, 1, Duration.ofSeconds(90));
    table = TestTable.create(hbase.connection(), "drain", ROWS, REGIONS);
    assertThat(table.scanAll()).isEqualTo(ROWS);
  }

  @AfterAll
  void stopCluster() {
    if (hbase != null) {
      hbase.close();
    }
  }

  /**
   * Runs the RegionServer pod's preStop hook as the kubelet would ({@code bash -c <warm-stop.sh>
   * warm-stop <info port> <bound> <stall bound>}), here against this server's info port: seconds
   * until it returned (with status 0).
   */
  static double warmStopHook(int infoPort, long boundSeconds, long stallSeconds) throws Exception {
    long t0 = System.nanoTime();
    Process p =
        new ProcessBuilder(
                "bash",
                "-c",
                PodHooks.WARM_STOP_SCRIPT,
                PodHooks.WARM_STOP,
                Integer.toString(infoPort),
                Long.toString(boundSeconds),
                Long.toString(stallSeconds))
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor()).as("the hook's exit status (output: %s)", out).isZero();
    return (System.nanoTime() - t0) / 1e9;
  }

  @Test
  @Order(1)
  void drainRestartAndReloadBringsTheSameRegionsBackWarm() throws Exception {
    ClusterSnapshot start = awaitHealthy();
    assertThat(start.metaServer()).isNotNull();
    int victim = start.metaServer().port() == hbase.regionServerPort(0) ? 0 : 1;
    int infoPort = hbase.regionServerInfoPort(victim);
    ServerId old = start.liveAt(LocalHBase.HOST, hbase.regionServerPort(victim)).orElseThrow().id();
    List<String> regions = start.live(old).orElseThrow().regions();
    assertThat(regions).as("the meta host also serves table regions").hasSizeGreaterThan(1);
    boolean balancerWasOn = admin.balancer(false);

    List<String> victimRows = rowsServedBy(old, start);
    assertThat(victimRows).hasSizeGreaterThan(50);
    CacheSample warm = TestTable.settledSample(scraper, infoPort);

    // the pod's preStop hook (warm-stop.sh) holds a server that still serves regions: to its bound.
    // Its clock is bash's SECONDS, whole seconds of the wall clock, so a bound of N s ends between
    // N - 1 and N s after the hook's start (a cold CI machine saw 2.03 s for 3)
    assertThat(warmStopHook(infoPort, 3, 60))
        .as(
            "seconds the warm-stop hook held %s while it served %d regions (bound 3 s)",
            old, regions.size())
        .isGreaterThanOrEqualTo(2.0);
    // but not while nothing drains it (no operator): its region count must fall within the stall
    // bound
    assertThat(warmStopHook(infoPort, 60, 6))
        .as("seconds the hook held %s with no drain (stall bound 6 s, bound 60 s)", old)
        .isBetween(5.0, 20.0);

    // drain to the other server: meta first and alone, then the rest, in the background
    ServerState other =
        start.live().stream().filter(x -> !x.id().equals(old)).findFirst().orElseThrow();
    Map<String, ServerId> targets = DrainTargets.plan(regions, List.of(other));
    assertThat(targets).containsOnlyKeys(regions).containsValue(other.id());
    admin.drain(old, targets);
    assertThat(admin.decommissioned()).containsExactly(old);
    ClusterSnapshot drained =
        awaitSnapshot(
            "drained",
            s -> s.regionsInTransition() == 0 && s.live(old).orElseThrow().regionCount() == 0);
    assertThat(drained.metaServer()).isNotNull().matches(m -> m.equals(other.id()));
    assertThat(drained.live(other.id()).orElseThrow().regions()).containsAll(regions);
    // the other server lists a region as cached once its prefetch on open has finished: before the
    // regions leave it (a prefetch a move cuts short lists nothing; seen on a loaded CI machine,
    // the
    // check after the reload below then waited in vain)
    if (LocalHBase.line25()) {
      // HBase 2.5's load reports carry no cached sizes (regionCachedInfo is 2.6's): the drain
      // targets fall back to rendezvous hashing there
      assertThat(drained.live(other.id()).orElseThrow().cachedMb())
          .as("HBase %s: cached sizes in the load report", LocalHBase.SERVER_VERSION)
          .isEmpty();
    } else {
      awaitSnapshot(
          "the other server's load report lists the drained regions as cached while it serves"
              + " them",
          s ->
              regions.stream()
                  .filter(r -> !r.equals(RollModel.META_REGION))
                  .allMatch(r -> s.live(other.id()).orElseThrow().cachedMb(r) > 0),
          Duration.ofMinutes(3));
    }

    // drained: the hook lets it stop once its /jmx shows no region (HBase refreshes that figure
    // every 5 s), far before its bound
    double heldDrained = warmStopHook(infoPort, 60, 60);
    assertThat(heldDrained)
        .as("seconds the hook held the drained server (bound 60 s)")
        .isLessThan(20);

    Instant stop = Instant.now();
    assertThat(hbase.stopRegionServer(victim)).isEqualTo(143);
    // a server whose /jmx does not answer (stopped, hung) is not held either
    assertThat(warmStopHook(infoPort, 60, 60))
        .as("seconds the hook held a stopped server")
        .isLessThan(5);
    List<String> marksWhileDown = hbase.zkChildren("/hbase/draining");
    List<ServerId> listedWhileDown = admin.decommissioned();
    hbase.startRegionServer(victim, settings[victim]);

    // called as soon as the port is open, the way the roller does: recommission refuses until the
    // first load report (NotReady), then sends and returns at once; call again until every region
    // is there, sending stragglers again only when nothing is in transition
    RecommissionResult result = null;
    int calls = 0;
    Instant deadline = Instant.now().plusSeconds(90);
    while (result == null || !result.complete()) {
      assertThat(Instant.now()).as("regions back within 90 s, last: " + result).isBefore(deadline);
      try {
        if (result == null || admin.snapshot().regionsInTransition() == 0) {
          result = admin.recommission(old, regions);
          calls++;
        }
      } catch (HBaseClusterException.NotReady e) {
        // not registered or not reported yet
      }
      Thread.sleep(250);
    }
    Duration reload = Duration.between(stop, Instant.now());
    System.out.printf(
        "RESULT recommission: %s after %d calls, %s from SIGTERM to regions back; while down: draining"
            + " znodes %s, listed decommissioned %s%n",
        result, calls, reload, marksWhileDown, listedWhileDown);

    assertThat(result.complete()).as("every region back").isTrue();
    // each region went back as a warm move: the master opened it on the restarted server before
    // closing it elsewhere (hbase:meta's region name does not carry its encoded name)
    String masterLog = Files.readString(hbase.dir.resolve("logs").resolve("master.log"));
    for (String r : regions) {
      if (!r.equals(RollModel.META_REGION)) {
        assertThat(masterLog)
            .as("the master's log: %s warmed up on %s before its move back", r, result.server())
            .containsPattern(
                Pattern.quote(r) + ".*warming up region on " + Pattern.quote(result.server() + ""));
      }
    }
    assertThat(result.server()).matches(s -> s.sameEndpoint(old)).isNotEqualTo(old);
    assertThat(result.onServer()).containsExactlyInAnyOrderElementsOf(regions);
    assertThat(result.unknown()).isEmpty();
    assertThat(result.marksCleared()).contains(old);
    assertThat(admin.decommissioned()).as("no decommission mark left").isEmpty();
    assertThat(hbase.zkChildren("/hbase/draining")).as("no draining znode left").isEmpty();

    ClusterSnapshot after = awaitHealthy();
    assertThat(after.live(result.server()).orElseThrow().regions())
        .containsExactlyInAnyOrderElementsOf(regions);
    assertThat(after.hostsMeta(result.server())).as("hbase:meta back too").isTrue();

    // what the next drain's targets rest on: the other server reports the blocks of the regions it
    // held during the drain (prefetched on open) after they left it
    ClusterSnapshot reported =
        LocalHBase.line25()
            ? after
            : awaitSnapshot(
                "the other server's load report lists the drained regions as cached",
                s ->
                    regions.stream()
                        .filter(r -> !r.equals(RollModel.META_REGION))
                        .allMatch(r -> s.live(other.id()).orElseThrow().cachedMb(r) > 0));
    System.out.printf(
        "RESULT HBase %s: cached on the drain target after the regions went back: %s%n",
        LocalHBase.SERVER_VERSION, reported.live(other.id()).orElseThrow().cachedMb());

    if (LocalHBase.line25()) {
      // File on 2.5: the restarted server's L2 starts empty, by design; the moves are the point
      assertThat(admin.balancer(balancerWasOn)).isFalse();
      return;
    }
    // their blocks are still cached there: the L2 came back and reads hit it
    CacheSample back =
        TestTable.awaitSample(
            scraper,
            infoPort,
            Duration.ofSeconds(60),
            s -> s.l2UsedBytes() >= 0.95 * warm.l2UsedBytes());
    CacheSample s0 = TestTable.settledSample(scraper, infoPort);
    table.get(victimRows);
    TestTable.awaitSample(
        scraper,
        infoPort,
        Duration.ofSeconds(30),
        s -> CacheRatios.between(s0, s).data().hits() >= victimRows.size() * 0.9);
    CacheDelta reads = CacheRatios.between(s0, TestTable.settledSample(scraper, infoPort));
    System.out.printf(
        "RESULT drain/reload: L2 used before %d after %d (%.4f); reads on the reloaded server %s%n",
        warm.l2UsedBytes(),
        back.l2UsedBytes(),
        CacheRatios.retainedFraction(warm.l2UsedBytes(), back.l2UsedBytes()),
        reads);
    assertThat(reads.restarts()).isZero();
    assertThat(reads.data().ratioOrNull())
        .as("data hit ratio after reload")
        .isGreaterThanOrEqualTo(0.95);

    assertThat(admin.balancer(balancerWasOn)).isFalse();
  }

  /**
   * What the operator does to a stopping pod whose grace period would not leave HBase its own
   * shutdown time after the warm stop's hold (StopDeadlines): {@code stopServer}, HBase's own stop
   * over RPC. The RegionServer stops by itself as after SIGTERM: its regions go to the other
   * server, it writes its cache map and its process exits; started again on the same cache
   * directory, it restores its L2 from that map.
   */
  @Test
  @Order(2)
  void stopServerIsTheGracefulStopOfSigterm() throws Exception {
    ClusterSnapshot start = awaitHealthy();
    int victim = start.metaServer().port() == hbase.regionServerPort(0) ? 1 : 0;
    ServerId id = start.liveAt(LocalHBase.HOST, hbase.regionServerPort(victim)).orElseThrow().id();
    int regions = start.live(id).orElseThrow().regionCount();
    int total = start.live().stream().mapToInt(ServerState::regionCount).sum();
    assertThat(regions).isPositive();
    Path map = hbase.dir.resolve("cache-rs" + victim).resolve("bucketcache.map");
    long mapBefore = Files.exists(map) ? Files.getLastModifiedTime(map).toMillis() : 0;
    HBaseProcess rs = hbase.regionServer(victim);
    long logFrom = Files.size(rs.log);

    Instant asked = Instant.now();
    admin.stopServer(id, "StopDeadlinesTest");
    await("the RegionServer exits by itself")
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> !rs.alive());
    Duration stopped = Duration.between(asked, Instant.now());
    String log = since(rs.log, logFrom);
    int exit = hbase.stopRegionServer(victim);
    assertThat(log).contains("STOPPED").doesNotContain("ABORTING region server");
    // on the 2.5 line these servers run File (Plans.persistentOrFile: the planner refuses
    // PersistentFile there), so no map is written: the stop itself is what is checked there
    boolean persists = !LocalHBase.line25();
    if (persists) {
      assertThat(map).as("the cache map written at the stop").exists();
      assertThat(Files.getLastModifiedTime(map).toMillis()).isGreaterThan(mapBefore);
      assertThat(Files.size(map)).isGreaterThan(20);
    }
    ClusterSnapshot after =
        await("its regions on the other server")
            .atMost(Duration.ofSeconds(60))
            .until(
                admin::snapshot,
                s ->
                    s.masterReachable()
                        && s.regionsInTransition() == 0
                        && s.live().size() == 1
                        && s.live().get(0).regionCount() == total);
    // HBase keeps a stopped server on its dead list after its regions have moved, until a server
    // registers at its host and port (below) or an administrator clears it: after a permanent
    // scale-down, for good (issue 50 point 3: the roll's gate does not count it, ClusterGate)
    Thread.sleep(5000);
    assertThat(admin.snapshot().dead())
        .as("HBase's dead servers 5 s after the stopped server's regions moved")
        .contains(id);

    long restartFrom = Files.size(rs.log);
    hbase.startRegionServer(victim, settings[victim]);
    hbase.awaitRegionServerReported(admin, victim, Duration.ofSeconds(90));
    assertThat(admin.snapshot().dead())
        .as("cleared by the new instance at its endpoint")
        .doesNotContain(id);
    if (persists) {
      assertThat(since(hbase.regionServer(victim).log, restartFrom))
          .as("started again, it restores its L2 from the map")
          .contains("Bucket cache retrieved from file successfully");
    }
    System.out.printf(
        "RESULT stopServer (HBase %s): %s with %d regions exited by itself %s after the request"
            + " (exit %d); its map %d bytes; the other server holds %d regions%n",
        LocalHBase.SERVER_VERSION,
        id,
        regions,
        stopped,
        exit,
        Files.exists(map) ? Files.size(map) : -1,
        after.live().get(0).regionCount());
    awaitHealthy();
  }

  /** A log from {@code offset} bytes on (a RegionServer started again appends to its log). */
  static String since(Path log, long offset) throws java.io.IOException {
    byte[] all = Files.readAllBytes(log);
    return new String(
        all, (int) offset, all.length - (int) offset, java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  @Order(3)
  void deadMasterMakesCallsFailFast() throws Exception {
    ServerId someone = admin.snapshot().live().get(0).id();
    hbase.master().stop(60);

    Instant t0 = Instant.now();
    ClusterSnapshot s = admin.snapshot();
    Duration snapshotTook = Duration.between(t0, Instant.now());
    assertThat(s.masterReachable()).isFalse();
    assertThat(s.error()).isNotBlank();

    Instant t1 = Instant.now();
    assertThatThrownBy(() -> admin.drain(someone, Map.of()))
        .isInstanceOf(HBaseClusterException.class);
    Duration decommissionTook = Duration.between(t1, Instant.now());
    System.out.printf(
        "RESULT dead master: snapshot failed in %s (%s), decommission in %s%n",
        snapshotTook, s.error(), decommissionTook);
    assertThat(snapshotTook).isLessThan(Duration.ofSeconds(30));
    assertThat(decommissionTook).isLessThan(Duration.ofSeconds(30));
  }

  /** One row per distinct block, kept if its region is on the server. */
  private List<String> rowsServedBy(ServerId server, ClusterSnapshot snap) throws Exception {
    Set<String> regions = Set.copyOf(snap.live(server).orElseThrow().regions());
    List<String> rows = new ArrayList<>();
    try (RegionLocator locator = hbase.connection().getRegionLocator(table.name)) {
      for (String row : table.rowsInDistinctBlocks(0, ROWS / TestTable.STRIDE, 3)) {
        String encoded =
            locator.getRegionLocation(Bytes.toBytes(row), true).getRegion().getEncodedName();
        if (regions.contains(encoded)) {
          rows.add(row);
        }
      }
    }
    return rows;
  }

  private ClusterSnapshot awaitHealthy() {
    return awaitSnapshot(
        "healthy",
        s -> s.healthy(2) && s.live().stream().allMatch(ClusterSnapshot.ServerState::reported));
  }

  private ClusterSnapshot awaitSnapshot(
      String what, java.util.function.Predicate<ClusterSnapshot> ok) {
    return awaitSnapshot(what, ok, Duration.ofSeconds(90));
  }

  private ClusterSnapshot awaitSnapshot(
      String what, java.util.function.Predicate<ClusterSnapshot> ok, Duration atMost) {
    ClusterSnapshot[] last = new ClusterSnapshot[1];
    await(what)
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              last[0] = admin.snapshot();
              return last[0].masterReachable() && ok.test(last[0]);
            });
    return last[0];
  }
}
