package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 */
class WarmRollIT {
  static final int SERVERS = 3;
  static final int ROWS = 48_000;
  static final int REGIONS = 9;
  static final int READS_PER_SECOND = 200;

  /** The figures of one cluster's steady state and two rolls. */
  record Run(String drain, Double steady, Reader.Stats steadyReads, List<LocalRoll.Result> rolls) {}

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
    Run run = run(Drain.TARGETS_WARM);
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
        .isGreaterThanOrEqualTo(0.98);
  }

  /** Three RegionServers, a table warm in their caches, a reader, then two rolls. */
  static Run run(Drain variant) throws Exception {
    return run(variant, LocalHBase.Security.NONE);
  }

  /** Same, on a cluster secured as {@code security} says (SecuredRollBench). */
  static Run run(Drain variant, LocalHBase.Security security) throws Exception {
    String drain =
        variant.label + (security == LocalHBase.Security.NONE ? "" : ", Kerberos-secured");
    // the master as the operator configures it for PersistentFile (masterRef set)
    Map<String, String> master =
        Plans.plan(CacheMode.PersistentFile, Files.createTempDirectory("plan")).masterSite();
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
        settings[i] =
            Plans.settings(
                Plans.plan(
                    CacheMode.PersistentFile,
                    Files.createDirectories(hbase.dir.resolve("cache-rs" + i))));
        hbase.startRegionServer(i, settings[i]);
      }
      for (int i = 0; i < SERVERS; i++) {
        hbase.awaitRegionServerReported(admin, i, Duration.ofSeconds(120));
      }
      // the CacheAwareLoadBalancer would move regions between the rolls: off, and the roller
      // leaves it as it found it
      admin.balancer(false);
      TestTable table = TestTable.create(hbase.connection(), "warmroll", ROWS, REGIONS);
      assertThat(table.scanAll()).isEqualTo(ROWS);
      LocalRoll roll = new LocalRoll(hbase, admin, settings, "rev-0");
      roll.hbaseOffload = variant == Drain.HBASE_OFFLOAD;
      try (Reader reader =
          new Reader(hbase.connection(), table, READS_PER_SECOND, 4, Duration.ofMinutes(20))) {
        Thread.sleep(15_000); // every block read once at least (prefetch, the scan and the reader)
        Instant steadyFrom = Instant.now();
        Thread.sleep(20_000);
        Instant steadyTo = Instant.now();
        Double steady = roll.servedFromCache(steadyFrom, steadyTo);
        Reader.Stats steadyReads = reader.stats(steadyFrom, steadyTo);
        System.out.printf(
            Locale.ROOT,
            "RESULT %s: steady state (20 s before the rolls): data reads from cache %.4f; reads: %s%n",
            drain,
            steady,
            steadyReads.summary());
        List<LocalRoll.Result> rolls = new ArrayList<>();
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
          Thread.sleep(10_000);
        }
        return new Run(drain, steady, steadyReads, rolls);
      } finally {
        roll.close();
      }
    }
  }
}
