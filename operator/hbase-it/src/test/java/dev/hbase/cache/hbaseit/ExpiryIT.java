package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ExpireResult;
import dev.hbase.cache.operator.hbase.ServerId;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link AdminHBaseCluster#expire} on real HBase processes (issue 51): a live RegionServer is never
 * expired (the check finds it answering as itself), nor a name with another start code; a SIGKILLed
 * one is, at once, and its regions serve again well before its ZooKeeper session would have ended.
 * The same kill without the expiry is measured beside it (the figure before).
 */
class ExpiryIT {
  /** The RegionServers' ZooKeeper session: what a crash costs without the expiry. */
  static final Duration SESSION = Duration.ofSeconds(30);

  @Test
  void aKilledRegionServerIsExpiredAtOnceAndALiveOneNever() throws Exception {
    try (LocalHBase hbase = LocalHBase.start("expiry", 3)) {
      AdminHBaseCluster admin = hbase.admin();
      ServerId[] ids = new ServerId[3];
      for (int i = 0; i < 3; i++) {
        LocalHBase.RegionServerSettings planned =
            Plans.settings(
                Plans.plan(
                    CacheMode.Lru, Files.createDirectories(hbase.dir.resolve("cache-rs" + i))));
        Map<String, String> site = new TreeMap<>(planned.site());
        site.put("zookeeper.session.timeout", Long.toString(SESSION.toMillis()));
        hbase.startRegionServer(i, new LocalHBase.RegionServerSettings(planned.env(), site));
        ids[i] = hbase.awaitRegionServerReported(admin, i, Duration.ofMinutes(3));
      }
      TestTable table = TestTable.create(hbase.connection(), "expiry", 600, 9);
      ClusterSnapshot before = awaitSettled(admin, Duration.ofMinutes(2));
      // two victims that hold regions and not hbase:meta (meta's own recovery is another figure)
      List<Integer> victims =
          java.util.stream.IntStream.range(0, 3)
              .filter(i -> !before.hostsMeta(ids[i]))
              .filter(i -> before.live(ids[i]).map(s -> s.regionCount() > 0).orElse(false))
              .boxed()
              .toList();
      assertThat(victims).as("servers without meta holding regions: %s", before).hasSize(2);
      int survivor =
          java.util.stream.IntStream.range(0, 3)
              .filter(i -> !victims.contains(i))
              .findFirst()
              .orElseThrow();

      // the guard: a live instance answers as itself and is refused; a name with another start
      // code is not live, and nothing is sent
      ExpireResult live = admin.expire(ids[survivor]);
      assertThat(live.outcome()).as("%s", live).isEqualTo(ExpireResult.Outcome.ALIVE);
      assertThat(live.refused()).isTrue();
      ServerId older =
          new ServerId(ids[survivor].host(), ids[survivor].port(), ids[survivor].startCode() - 1);
      assertThat(admin.expire(older).outcome()).isEqualTo(ExpireResult.Outcome.NOT_LIVE);
      Thread.sleep(3000); // an expiry, had one been sent, would have taken it out by now
      assertThat(admin.snapshot().live(ids[survivor])).as("never expired").isPresent();

      // before: SIGKILL, nothing told HBase; its regions wait for the ZooKeeper session
      Duration without = killAndAwaitServing(hbase, admin, victims.get(0), ids, false);
      // after: SIGKILL, the expiry at once, as the operator sends it on the kubelet's report
      Duration with = killAndAwaitServing(hbase, admin, victims.get(1), ids, true);
      System.out.printf(
          "RESULT a SIGKILLed RegionServer's regions serving again: %.1f s without the expiry"
              + " (zookeeper.session.timeout %d s), %.1f s with it%n",
          without.toMillis() / 1000.0, SESSION.toSeconds(), with.toMillis() / 1000.0);
      assertThat(with).as("with the expiry, before the session could end").isLessThan(SESSION);
      assertThat(with).as("with against without").isLessThan(without);
      assertThat(table.scanAll()).as("every row reads on the survivor").isEqualTo(600);
      assertThat(admin.expire(ids[victims.get(1)]).outcome())
          .as("expired already: nothing sent again")
          .isEqualTo(ExpireResult.Outcome.NOT_LIVE);
    }
  }

  /**
   * Kills RegionServer {@code i} (SIGKILL), expires it at once when {@code expire}, and returns the
   * time from the kill until every region it held is open on a live server, nothing in transition.
   */
  static Duration killAndAwaitServing(
      LocalHBase hbase, AdminHBaseCluster admin, int i, ServerId[] ids, boolean expire)
      throws Exception {
    List<String> held = admin.snapshot().live(ids[i]).orElseThrow().regions();
    Instant killed = Instant.now();
    hbase.regionServer(i).kill();
    if (expire) {
      // the process is gone: the check finds its port refusing connections
      await("the killed process's port closed")
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> !LocalHBase.portOpen(hbase.regionServerHost(i), hbase.regionServerPort(i)));
      ExpireResult r = admin.expire(ids[i]);
      System.out.println("RESULT " + r);
      assertThat(r.outcome()).as("%s", r).isEqualTo(ExpireResult.Outcome.EXPIRED);
    }
    await("the regions of " + ids[i] + " serving again")
        .atMost(SESSION.multipliedBy(6))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> {
              ClusterSnapshot s = admin.snapshot();
              Map<String, ServerId> where = s.locations();
              return s.masterReachable()
                  && s.live(ids[i]).isEmpty()
                  && s.regionsInTransition() == 0
                  && held.stream()
                      .allMatch(r -> where.containsKey(r) && !where.get(r).equals(ids[i]));
            });
    return Duration.between(killed, Instant.now());
  }

  static ClusterSnapshot awaitSettled(AdminHBaseCluster admin, Duration timeout) {
    ClusterSnapshot[] last = new ClusterSnapshot[1];
    await("every region open")
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              last[0] = admin.snapshot();
              return last[0].masterReachable()
                  && last[0].regionsInTransition() == 0
                  && last[0].live().stream()
                          .mapToInt(ClusterSnapshot.ServerState::regionCount)
                          .sum()
                      >= 10;
            });
    return last[0];
  }
}
