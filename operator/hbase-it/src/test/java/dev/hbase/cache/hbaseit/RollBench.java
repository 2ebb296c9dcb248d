package dev.hbase.cache.hbaseit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * {@code make bench-roll}: {@link WarmRollIT}'s two rolls three times, each on a fresh cluster:
 * with HBase's own drain (decommission with offload: each region to a random server, what the
 * operator did before), with the operator's drain targets sent in one batch per target ({@code
 * recommissionRegionServer}, what it did before warm moves), and with its drain targets sent as one
 * warmed-up move per region (the default). Writes {@code target/bench/roll.md}; the make target
 * copies it to {@code docs/bench-roll.md}. Not a test: it asserts nothing the ITs do not.
 */
class RollBench {

  @Test
  void hbaseOffloadAgainstTheOperatorsDrainTargets() throws Exception {
    List<WarmRollIT.Run> runs = new ArrayList<>();
    for (WarmRollIT.Drain d : WarmRollIT.Drain.values()) {
      runs.add(WarmRollIT.run(d));
    }
    StringBuilder md =
        new StringBuilder(
            "# Rolls on real RegionServers: how the drain and the reload move regions\n\n"
                + "`make bench-roll` (operator/hbase-it `RollBench`): the operator's `Roller` restarts"
                + " three local RegionServers one after the other, twice, while a client reads random"
                + " rows of the whole table. Each drain is HBase's own offload (every region to a"
                + " random server: what the operator did first), or the operator's drain targets"
                + " (each region to the server that caches it best, else the same server every roll)"
                + " sent in one `recommissionRegionServer` batch per target (what it did before warm"
                + " moves), or sent as one `Admin.move` per region, which has the master warm the"
                + " region up on its target before closing it (the default). Each variant on a fresh"
                + " cluster. The share of reads served from cache is summed over every server's /jmx"
                + " for the roll's duration (a cold read counted once). A region move's time is the"
                + " master's own (`TransitRegionStateProcedure ... in N msec` in its log: close on"
                + " one server to open on the other, what a read of the region waits), for the"
                + " drains' moves and the reloads' (back onto the restarted server).\n\n");
    md.append(
        String.format(
            Locale.ROOT,
            "Machine: %d cores, %s; load average at the end %s; HBase 2.6.4, 3 RegionServers"
                + " (PersistentFile, the planner's settings for a 2 GiB container), %d rows x 1000 B"
                + " in %d regions, a reader of random rows at %d/s (4 threads; latency from each"
                + " read's scheduled time).%n%n",
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("os.name") + " " + System.getProperty("os.version"),
            Files.readString(Path.of("/proc/loadavg")).trim(),
            WarmRollIT.ROWS,
            WarmRollIT.REGIONS,
            WarmRollIT.READS_PER_SECOND));
    md.append(
        "| drain | roll | seconds | data reads from cache, all servers | delete -> regions home (s) |"
            + " drain moves | reload moves | reads | over 100 ms | p99 | worst second's p99 |"
            + " seconds with p99 > 200 ms | failed |\n"
            + "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (WarmRollIT.Run run : runs) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | steady state (%d s) | | %.4f | | | | %d | %d | %.0f ms | %.0f ms | %d | %d |%n",
              run.drain(),
              WarmRollIT.STEADY.toSeconds(),
              run.steady(),
              run.steadyReads().reads(),
              run.steadyReads().slow(),
              run.steadyReads().p99Micros() / 1000.0,
              run.steadyReads().worstSecondP99Micros() / 1000.0,
              run.steadyReads().secondsOverTarget(),
              run.steadyReads().failed()));
      for (LocalRoll.Result r : run.rolls()) {
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %d | %.4f | %s | %s | %s | %d | %d | %.0f ms | %.0f ms | %d | %d |%n",
                run.drain(),
                r.label().substring(r.label().lastIndexOf(", ") + 2),
                Duration.between(r.start(), r.end()).toSeconds(),
                r.servedFromCache(),
                r.podSeconds().values(),
                RegionMoves.summary(r.moves(), true),
                RegionMoves.summary(r.moves(), false),
                r.reads().reads(),
                r.reads().slow(),
                r.reads().p99Micros() / 1000.0,
                r.reads().worstSecondP99Micros() / 1000.0,
                r.reads().secondsOverTarget(),
                r.reads().failed()));
      }
    }
    Path out = Path.of("target/bench/roll.md");
    Files.createDirectories(out.getParent());
    Files.writeString(out, md.toString());
    System.out.println(md);
  }
}
