package dev.hbase.cache.operator.roll;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class DrainTargetsTest {

  static ServerState server(String host, long startCode, Map<String, Integer> cachedMb) {
    return new ServerState(
        new ServerId(host, 16020, startCode), 16030, List.of(), true, false, cachedMb, Map.of());
  }

  static List<String> regions(int n) {
    return IntStream.range(0, n).mapToObj(i -> String.format("r%02d", i)).toList();
  }

  @Test
  void aRegionGoesWhereMostOfItIsCached() {
    ServerState a = server("a", 1, Map.of("r00", 5, "r01", 30));
    ServerState b = server("b", 1, Map.of("r00", 20));
    Map<String, ServerId> t = DrainTargets.plan(List.of("r00", "r01"), List.of(a, b));
    assertThat(t).containsOnly(Map.entry("r00", b.id()), Map.entry("r01", a.id()));
  }

  @Test
  void noServerTakesMoreThanItsShareEvenIfItCachesEverything() {
    Map<String, Integer> all = new HashMap<>();
    regions(9).forEach(r -> all.put(r, 10));
    ServerState warm = server("warm", 1, all);
    ServerState b = server("b", 1, Map.of());
    ServerState c = server("c", 1, Map.of());
    Map<String, ServerId> t = DrainTargets.plan(regions(9), List.of(warm, b, c));
    assertThat(t).hasSize(9);
    assertThat(count(t.values(), warm.id())).isEqualTo(3);
    assertThat(count(t.values(), b.id())).isEqualTo(3);
    assertThat(count(t.values(), c.id())).isEqualTo(3);
  }

  @Test
  void withNothingCachedTheSpreadIsEvenAndTheSameWhateverTheStartCodesAndOrder() {
    List<ServerState> servers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      servers.add(server("rs-" + i, 100 + i, Map.of()));
    }
    Map<String, ServerId> first = DrainTargets.plan(regions(20), servers);
    List<ServerState> restarted = new ArrayList<>();
    for (int i = 3; i >= 0; i--) {
      restarted.add(server("rs-" + i, 900 + i, Map.of()));
    }
    Map<String, ServerId> again = DrainTargets.plan(regions(20), restarted);
    first.forEach((r, s) -> assertThat(again.get(r).sameEndpoint(s)).as(r).isTrue());
    for (ServerState s : servers) {
      assertThat(count(first.values(), s.id())).isEqualTo(5);
    }
  }

  static ServerState holding(String host, int regions) {
    List<String> held = IntStream.range(0, regions).mapToObj(i -> host + "-r" + i).toList();
    return new ServerState(
        new ServerId(host, 16020, 1), 16030, held, true, false, Map.of(), Map.of());
  }

  @Test
  void hbaseMetaGoesToTheCandidateWithTheFewestRegionsNotWhereItsNameHashes() {
    // it never goes home and its blocks live in the L1: by hash it always went to the same
    // server, which ended the roll one over its share (4 / 2 / 2 on kind)
    List<ServerState> none = List.of(holding("rs-0", 0), holding("rs-1", 0), holding("rs-2", 0));
    ServerId hashed =
        DrainTargets.plan(List.of(RollModel.META_REGION), none).get(RollModel.META_REGION);
    // the server the hash picks holds the most regions, another the fewest
    List<ServerState> loaded = new ArrayList<>();
    int fewest = -1;
    for (int i = 0; i < 3; i++) {
      String host = "rs-" + i;
      boolean isHashed = hashed.host().equals(host);
      if (!isHashed && fewest < 0) {
        fewest = i;
      }
      loaded.add(holding(host, isHashed ? 4 : fewest == i ? 1 : 3));
    }
    Map<String, ServerId> t = DrainTargets.plan(List.of(RollModel.META_REGION), loaded);
    assertThat(t.get(RollModel.META_REGION).host()).isEqualTo("rs-" + fewest);
    assertThat(t.get(RollModel.META_REGION)).isNotEqualTo(hashed);
  }

  @Test
  void hbaseMetaGoesByWhatTheCandidatesHoldNotWhatTheDrainLendsThem() {
    // the drained server holds meta, x and y; x and y are cached on c, which takes both (its
    // share): they go home after the restart, meta does not, so meta goes to c too (2 + 1
    // after, against b's 3), not to b (was: 4 / 2 / 2)
    ServerState b = holding("b", 3);
    ServerState c =
        new ServerState(
            new ServerId("c", 16020, 1),
            16030,
            List.of("c-r0", "c-r1"),
            true,
            false,
            Map.of("x", 30, "y", 30),
            Map.of());
    Map<String, ServerId> t =
        DrainTargets.plan(List.of(RollModel.META_REGION, "x", "y"), List.of(b, c));
    assertThat(t)
        .containsOnly(
            Map.entry("x", c.id()),
            Map.entry("y", c.id()),
            Map.entry(RollModel.META_REGION, c.id()));
  }

  @Test
  void nobodyToTakeThemIsAnEmptyPlan() {
    assertThat(DrainTargets.plan(regions(3), List.of())).isEmpty();
  }

  static long count(Collection<ServerId> ids, ServerId id) {
    return ids.stream().filter(id::equals).count();
  }
}
