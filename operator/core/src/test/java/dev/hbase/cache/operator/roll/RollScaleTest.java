package dev.hbase.cache.operator.roll;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * How a roll's length grows with the cluster, on the simulated cluster in virtual time (the
 * roller's own decisions, a restart of 20 s, a first load report 3 s later): 3, 30 and 200
 * RegionServers with 20 regions each, one at a time and 10% at a time. The time per server is the
 * same at every size (linear growth, a constant per server), and N at a time divides it by about N,
 * within the same guarantees: each pod restarted once, never more than maxUnavailable down, every
 * region back home. The table goes to {@code target/roll-scale.md} (docs/roll-scale.md keeps a
 * copy).
 */
class RollScaleTest {
  static final int REGIONS_PER_SERVER = 20;

  record Run(int servers, int maxUnavailable, Duration took, int maxDown, int steps) {
    double secondsPerServer() {
      return took.toMillis() / 1000.0 / servers;
    }
  }

  static Run roll(int servers, int maxUnavailable) {
    FakeCluster c = new FakeCluster(servers, "rev-old");
    for (int i = 0; i < servers; i++) {
      String[] regions = new String[REGIONS_PER_SERVER];
      for (int r = 0; r < REGIONS_PER_SERVER; r++) {
        regions[r] = String.format("s%03dr%02d", i, r);
      }
      c.regions("rs-" + i, regions);
    }
    c.meta("rs-0");
    RollModel.Settings s =
        RollerTest.with(
            FakeCluster.settings(RollerTest.NEW),
            RolloutSpec.Strategy.DrainAndReload,
            maxUnavailable,
            false);
    Instant start = c.now;
    List<Roller.Decision> log = new ArrayList<>();
    RolloutStatus end =
        c.run(null, s, 200_000, st -> st.getPhase() == Phase.Idle && c.allAt(RollerTest.NEW), log);
    assertThat(end.getPhase()).isEqualTo(Phase.Idle);
    assertThat(c.restarts).hasSize(servers).allSatisfy((pod, n) -> assertThat(n).isEqualTo(1));
    assertThat(c.maxDown).isLessThanOrEqualTo(Roller.budget(maxUnavailable, servers));
    for (int i = 0; i < servers; i++) {
      String prefix = String.format("s%03d", i);
      assertThat(c.hbase.servers.get("rs-" + i).regions)
          .as("rs-%d's regions home", i)
          .filteredOn(r -> r.startsWith(prefix))
          .hasSize(REGIONS_PER_SERVER);
    }
    return new Run(servers, maxUnavailable, Duration.between(start, c.now), c.maxDown, log.size());
  }

  @Test
  void aRollGrowsLinearlyWithTheClusterAndParallelRestartsDivideIt() throws IOException {
    Map<String, Run> runs = new LinkedHashMap<>();
    for (int n : new int[] {3, 30, 200}) {
      runs.put(n + "/1", roll(n, 1));
      int tenth = Math.max(1, n / 10);
      runs.put(n + "/" + tenth, roll(n, tenth));
    }
    StringBuilder table =
        new StringBuilder(
            "| RegionServers | maxUnavailable | roll (virtual time) | per server | most down at once | roller steps |\n"
                + "|---|---|---|---|---|---|\n");
    runs.values()
        .forEach(
            r ->
                table.append(
                    String.format(
                        Locale.ROOT,
                        "| %d | %d | %d s | %.1f s | %d | %d |%n",
                        r.servers(),
                        r.maxUnavailable(),
                        r.took().toSeconds(),
                        r.secondsPerServer(),
                        r.maxDown(),
                        r.steps())));
    Path out = Path.of("target/roll-scale.md");
    Files.createDirectories(out.getParent());
    Files.writeString(out, table.toString());
    System.out.print(table);

    // one at a time: the same seconds per server at 3, 30 and 200 servers (a constant each)
    double perServer = runs.get("30/1").secondsPerServer();
    assertThat(runs.get("3/1").secondsPerServer()).isCloseTo(perServer, within(perServer * 0.15));
    assertThat(runs.get("200/1").secondsPerServer()).isCloseTo(perServer, within(perServer * 0.15));
    // ten at a time is about ten times faster; twenty about twenty (some steps are shared)
    assertThat(runs.get("30/3").took().toSeconds())
        .isLessThan(runs.get("30/1").took().toSeconds() / 2);
    assertThat(runs.get("200/20").secondsPerServer() * 20)
        .isCloseTo(perServer, within(perServer * 0.5));
    assertThat(runs.get("200/20").maxDown()).isEqualTo(20);
  }
}
