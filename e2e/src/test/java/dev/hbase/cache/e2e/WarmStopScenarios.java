package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static dev.hbase.cache.e2e.Cluster.isTrue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Steps 11 and 11b (tags {@code stops}, {@code fault}): RegionServers stopped by someone other than
 * the operator, with no roll running: a node drain through the Eviction API and a plain {@code
 * kubectl delete pod}, each a warm stop (regions moved before the JVM stops, home after); a
 * scale-down and back up (the removed server's regions go back to it on its kept cache).
 */
@Tag("stops")
@Tag("fault")
class WarmStopScenarios extends FaultScenario {
  /**
   * Its start: the suite's operator and policy, the reader, HBase given back, caches warm (the
   * stops assert the reads cached).
   */
  @Override
  List<Need> needs() {
    return List.of(
        Needs.HBASE_UP,
        Needs.SUITE_OPERATOR,
        Needs.suitePolicy(),
        Needs.READER,
        Needs.GIVEN_BACK,
        Needs.WARM);
  }

  @Test
  @Order(1)
  void aNodeDrainEvictsASecondRegionServerOnlyOnceTheFirstIsBack() {
    // every stop a warm stop: the operator drains an evicted or deleted server while its preStop
    // hook holds it, and sends its regions home when it is back
    step(
        "11. a node drain (Eviction API), then kubectl delete pod: a second RegionServer is evicted only once the first is"
            + " back and Ready; each stopped server's regions move before it stops and come home",
        () -> {
          String pdb =
              awaitDisruptionsAllowed(
                  1, "before the drain", Duration.ofMinutes(2), Duration.ofSeconds(1));
          // a server with no region has nothing to move: each gets its share of the table first
          // (HBase left one with none after the SIGKILL of step 10)
          everyServerHoldsRegions();
          Map<Integer, String> uids = cluster.podUids();
          Map<String, Long> before = regionCounts();
          watch.reset();
          // fabric8 retries a 429 itself (10 times, after the Retry-After of 10 s the Eviction API
          // sends): evict() would block until the budget allows it and look allowed at once. Each
          // refusal is counted here with a client that does not retry.
          try (KubernetesClient once = withoutRetries()) {
            Instant t0 = Instant.now();
            assertThat(once.pods().inNamespace(cluster.ns).withName(Cluster.pod(2)).evict())
                .as("the first eviction (the budget allows one)")
                .isTrue();
            // what `kubectl drain` does: ask again every few hundred ms until the budget allows it
            int refused = 0;
            Instant allowedAt = null;
            Instant deadline = t0.plus(Duration.ofMinutes(4));
            while (allowedAt == null && Instant.now().isBefore(deadline)) {
              if (once.pods().inNamespace(cluster.ns).withName(Cluster.pod(1)).evict()) {
                allowedAt = Instant.now();
              } else {
                refused++;
                Thread.sleep(250);
              }
            }
            assertThat(allowedAt)
                .as("the second eviction allowed within 4 min (once the first server is back)")
                .isNotNull();
            Pod back = client.pods().inNamespace(cluster.ns).withName(Cluster.pod(2)).get();
            Instant backReady = readySince(back);
            report.line(
                "- Eviction API on `%s` at %s -> evicted; then on `%s` every 250 ms: refused %d times (429), allowed at %s;"
                    + " `%s` (new uid %s) Ready since %s (PodDisruptionBudget `%s`, maxUnavailable 1)",
                Cluster.pod(2),
                t0,
                Cluster.pod(1),
                refused,
                allowedAt,
                Cluster.pod(2),
                back.getMetadata().getUid(),
                backReady,
                pdb);
            assertThat(refused)
                .as("evictions of a second RegionServer refused while the first was down")
                .isPositive();
            assertThat(back.getMetadata().getUid())
                .as("%s is a new instance", Cluster.pod(2))
                .isNotEqualTo(uids.get(2));
            assertThat(backReady)
                .as(
                    "%s Ready (API time, whole seconds) no later than the second eviction",
                    Cluster.pod(2))
                .isNotNull()
                .isBeforeOrEqualTo(allowedAt);
            await("both evicted RegionServers back and the policy Ready")
                .atMost(Duration.ofMinutes(5))
                .pollInterval(Duration.ofSeconds(2))
                .until(
                    () -> {
                      Map<Integer, String> now = cluster.podUids();
                      return !Objects.equals(now.get(1), uids.get(1))
                          && !Objects.equals(now.get(2), uids.get(2))
                          && client
                              .pods()
                              .inNamespace(cluster.ns)
                              .withLabel("app.kubernetes.io/component", "regionserver")
                              .list()
                              .getItems()
                              .stream()
                              .allMatch(PodWatch::ready)
                          && isTrue(cluster.policy(), "Ready");
                    });
            report.line(
                "- RegionServers not Ready at the same time, at most: %d (%s)",
                watch.maxDown(), watch.maxDownAt());
            assertThat(watch.maxDown())
                .as("RegionServers down at once during the drain")
                .isLessThanOrEqualTo(1);
            Workload.Stats s = Workload.stats(workload.log(READER), t0, Instant.now());
            report.line(
                "- both back after %d s; reader meanwhile: %s",
                Duration.between(t0, Instant.now()).toSeconds(), s.summary());
            Instant drained = Instant.now();
            String home =
                warmStops(
                    List.of(Cluster.pod(2), Cluster.pod(1)), "EvictionByEvictionAPI", t0, before);
            assertThat(s.fail()).as("reads failed during the drain").isZero();
            String figures = StopFigures.after(this, "node drain", t0, drained);
            summary.add(
                String.format(
                    "node drain: 2nd eviction refused %d times until the 1st server was Ready again; at most %d down;"
                        + " reads failed meanwhile: %d; %d s without a successful read; worst second's p99 %.0f ms;"
                        + " regions home %s; %s",
                    refused,
                    watch.maxDown(),
                    s.fail(),
                    s.stalledSeconds(),
                    s.worstSecondP99ms(),
                    home,
                    figures));
          }
          // a plain delete (kubectl delete pod): no eviction, no budget asked
          Map<Integer, String> uidsBefore = cluster.podUids();
          Map<String, Long> beforeDelete = regionCounts();
          watch.reset();
          Instant t1 = Instant.now();
          client.pods().inNamespace(cluster.ns).withName(Cluster.pod(0)).delete();
          await(Cluster.pod(0) + " back and the policy Ready")
              .atMost(Duration.ofMinutes(5))
              .pollInterval(Duration.ofSeconds(2))
              .until(
                  () -> {
                    Pod p = client.pods().inNamespace(cluster.ns).withName(Cluster.pod(0)).get();
                    return p != null
                        && !p.getMetadata().getUid().equals(uidsBefore.get(0))
                        && PodWatch.ready(p)
                        && isTrue(cluster.policy(), "Ready")
                        && cluster.policy().getStatus().getRollout().getInFlight().isEmpty();
                  });
          Instant deletedBack = Instant.now();
          Workload.Stats d = Workload.stats(workload.log(READER), t1, deletedBack);
          report.line(
              "- `kubectl delete pod %s` at %s: back after %d s, at most %d down; reader meanwhile: %s",
              Cluster.pod(0),
              t1,
              Duration.between(t1, Instant.now()).toSeconds(),
              watch.maxDown(),
              d.summary());
          String home = warmStops(List.of(Cluster.pod(0)), "Deleted", t1, beforeDelete);
          assertThat(watch.maxDown()).as("RegionServers down at once").isLessThanOrEqualTo(1);
          assertThat(d.fail()).as("reads failed during the delete").isZero();
          String figures = StopFigures.after(this, "kubectl delete pod", t1, deletedBack);
          summary.add(
              String.format(
                  "kubectl delete pod: reads failed %d, %d s without a successful read, worst second's p99 %.0f ms;"
                      + " regions home %s; %s",
                  d.fail(), d.stalledSeconds(), d.worstSecondP99ms(), home, figures));
        });
  }

  @Test
  @Order(2)
  void aScaleDownMovesTheRemovedServersRegionsAndAScaleUpBringsThemBack() {
    step(
        "11b. a scale-down 3 -> 2 and back to 3: the removed server's regions move before it stops,"
            + " its cache volume is kept, and the scale-up brings them back to it",
        () -> {
          everyServerHoldsRegions();
          Map<String, String> pvcs = cluster.pvcUids();
          Map<String, Long> before = regionCounts();
          String leaving = Cluster.pod(REPLICAS - 1);
          watch.reset();
          Instant t0 = Instant.now();
          client
              .apps()
              .statefulSets()
              .inNamespace(cluster.ns)
              .withName(Cluster.RS)
              .scale(REPLICAS - 1);
          await(leaving + " gone and the policy Idle")
              .atMost(Duration.ofMinutes(5))
              .pollInterval(Duration.ofSeconds(2))
              .until(
                  () -> {
                    var ro = cluster.policy().getStatus().getRollout();
                    return client.pods().inNamespace(cluster.ns).withName(leaving).get() == null
                        && ro.getInFlight().isEmpty()
                        && ro.getScaledDown() != null
                        && !ro.getScaledDown().isEmpty();
                  });
          Instant down = Instant.now();
          Workload.Stats sd = Workload.stats(workload.log(READER), t0, down);
          var ro = cluster.policy().getStatus().getRollout();
          report.line(
              "- scaled to %d at %s: `%s` gone after %d s; status.rollout.cacheVolumesWhenScaled %s, scaledDown %s; reader: %s",
              REPLICAS - 1,
              t0,
              leaving,
              Duration.between(t0, down).toSeconds(),
              ro.getCacheVolumesWhenScaled(),
              ro.getScaledDown().stream()
                  .map(r -> r.getPod() + " " + r.getRegions().size() + " regions")
                  .toList(),
              sd.summary());
          List<io.fabric8.kubernetes.api.model.Event> scaledDown =
              cluster.policyEvents(
                  java.util.Set.of("WarmStop", "ScaledDown"),
                  es -> es.stream().anyMatch(e -> e.getReason().equals("ScaledDown")));
          scaledDown.stream()
              .filter(since(t0)) // not step 11's eviction of the same pod
              .filter(e -> e.getMessage().startsWith(leaving + " "))
              .forEach(e -> report.line("  - %s: %s", e.getReason(), e.getMessage()));
          assertThat(scaledDown)
              .as("the WarmStop (ScaledDown) event of %s", leaving)
              .anyMatch(
                  e ->
                      e.getReason().equals("WarmStop")
                          && e.getMessage().startsWith(leaving + " ")
                          && e.getMessage().contains("(ScaledDown)"));
          assertThat(ro.getCacheVolumesWhenScaled()).isEqualTo("Retain");
          assertThat(sd.fail()).as("reads failed during the scale-down").isZero();
          // only the scale-down's own seconds (its server does not come back until the scale-up),
          // and no settle: the figures ten minutes later are the scale-up's
          String downFigures = StopFigures.after(this, "scale-down", t0, down, false);

          watch.reset();
          Instant t1 = Instant.now();
          client.apps().statefulSets().inNamespace(cluster.ns).withName(Cluster.RS).scale(REPLICAS);
          await(leaving + " back, its regions home and the policy Ready")
              .atMost(Duration.ofMinutes(5))
              .pollInterval(Duration.ofSeconds(2))
              .until(
                  () -> {
                    Pod p = client.pods().inNamespace(cluster.ns).withName(leaving).get();
                    var r = cluster.policy().getStatus().getRollout();
                    return p != null
                        && PodWatch.ready(p)
                        && r.getInFlight().isEmpty()
                        && r.getScaledDown() == null
                        && isTrue(cluster.policy(), "Ready");
                  });
          Instant upHome = Instant.now();
          Workload.Stats su = Workload.stats(workload.log(READER), t1, upHome);
          report.line(
              "- scaled to %d at %s: `%s` back and its regions home after %d s, at most %d down; reader: %s",
              REPLICAS,
              t1,
              leaving,
              Duration.between(t1, Instant.now()).toSeconds(),
              watch.maxDown(),
              su.summary());
          String home = warmStops(List.of(leaving), "ScaledDown", t0, before);
          assertThat(cluster.pvcUids())
              .as("PVC UIDs (the kept cache volume reused)")
              .isEqualTo(pvcs);
          assertThat(watch.maxDown()).as("RegionServers down at once").isLessThanOrEqualTo(1);
          assertThat(su.fail()).as("reads failed during the scale-up").isZero();
          String upFigures = StopFigures.after(this, "scale-up", t1, upHome);
          summary.add(
              String.format(
                  "scale 3 -> 2 -> 3: reads failed %d + %d, %d + %d s without a successful read,"
                      + " worst second's p99 %.0f + %.0f ms; the removed server's regions home after the"
                      + " scale-up %s; scale-down %s; scale-up %s",
                  sd.fail(),
                  su.fail(),
                  sd.stalledSeconds(),
                  su.stalledSeconds(),
                  sd.worstSecondP99ms(),
                  su.worstSecondP99ms(),
                  home,
                  downFigures,
                  upFigures));
        });
  }

  /**
   * Every stop a warm stop: for each pod stopped since {@code since} by {@code cause}, the
   * operator's WarmStop event (its regions moved before its RegionServer stopped) and its
   * PodRestarted event counting every region home; the region count per server after, reported.
   * Returns the seconds from each stop to its regions home, for the summary.
   */
  private String warmStops(
      List<String> pods, String cause, Instant since, Map<String, Long> regionsBefore) {
    java.util.function.Predicate<io.fabric8.kubernetes.api.model.Event> recent = since(since);
    List<io.fabric8.kubernetes.api.model.Event> events =
        cluster.policyEvents(
            java.util.Set.of("WarmStop", "PodRestarted", "PodRestartedCold"),
            es ->
                pods.stream()
                    .filter(pod -> regionsBefore.getOrDefault(pod, 1L) != 0)
                    .allMatch(
                        pod ->
                            es.stream()
                                .filter(recent)
                                .anyMatch(
                                    e ->
                                        e.getReason().startsWith("PodRestarted")
                                            && e.getMessage().startsWith(pod + " "))));
    Map<String, String> home = new java.util.TreeMap<>();
    for (String pod : pods) {
      List<io.fabric8.kubernetes.api.model.Event> mine =
          events.stream().filter(recent).filter(e -> e.getMessage().startsWith(pod + " ")).toList();
      mine.forEach(e -> report.line("  - %s: %s", e.getReason(), e.getMessage()));
      if (regionsBefore.getOrDefault(pod, 1L) == 0 && mine.isEmpty()) {
        // HBase's balancer had given it none (the skew the Balanced condition reports): nothing
        // to move, no stop to take in flight
        home.put(pod, "held no region before its stop: nothing to move");
        continue;
      }
      assertThat(mine)
          .as("the operator's WarmStop event for %s (%s)", pod, cause)
          .anyMatch(
              e -> e.getReason().equals("WarmStop") && e.getMessage().contains("(" + cause + ")"));
      var back = mine.stream().filter(e -> e.getReason().startsWith("PodRestarted")).findFirst();
      assertThat(back).as("%s back (PodRestarted event)", pod).isPresent();
      // a server may hold no region of its own when it stops (HBase's balancer gave it none, or
      // what it held were another restarting pod's, which go home there): then nothing comes back
      var m = RollObserver.HOME_IN_EVENT.matcher(back.get().getMessage());
      if (m.find()) {
        assertThat(m.group(1))
            .as("every region of %s home: %s", pod, back.get().getMessage())
            .isEqualTo(m.group(2));
        home.put(pod, m.group(3) + " s (" + m.group(2) + " regions)");
      } else {
        home.put(pod, "no region of its own");
      }
    }
    // HBase refreshes a server's regionCount every second here (the chart's metricsPeriodSeconds,
    // and as long again for the JMX cache): a count read at once may predate the moves
    try {
      Thread.sleep(3000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    String counts =
        regionCounts().entrySet().stream()
            .map(e -> e.getKey() + " " + (e.getValue() < 0 ? "?" : e.getValue()))
            .collect(java.util.stream.Collectors.joining(", "));
    String balanced = StopFigures.balanced(this);
    report.line(
        "- stop -> every region home: %s; regions per server now (/jmx): %s; condition Balanced: %s",
        home, counts, balanced);
    return home.toString();
  }
}
