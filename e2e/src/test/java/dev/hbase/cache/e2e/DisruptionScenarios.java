package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static dev.hbase.cache.e2e.Cluster.tuning;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Steps 10 and 10b (tags {@code disruptions}, {@code fault}): a RegionServer lost in the middle of
 * the operator's roll: killed with SIGKILL while another drains (writerThreads 11 -> 9); then one
 * restarted in its pod with no roll running (frozen until the master reassigned its regions, then
 * killed: the kubelet restarts the container, and the operator sends its cached regions home). The
 * stops that are not the operator's, with no roll running, are {@link WarmStopScenarios}.
 */
@Tag("disruptions")
@Tag("fault")
class DisruptionScenarios extends FaultScenario {
  /**
   * Its start: the suite's operator and policy (writerThreads not 9), the reader, HBase given back,
   * caches warm (step 10b sends cached regions home).
   */
  @Override
  List<Need> needs() {
    return List.of(
        Needs.HBASE_UP,
        Needs.SUITE_OPERATOR,
        Needs.suitePolicy(9),
        Needs.READER,
        Needs.GIVEN_BACK,
        Needs.WARM);
  }

  @Test
  @Order(1)
  void aRegionServerKilledWhileAnotherDrainsHoldsTheRollUntilItIsBack() {
    step(
        "10. a RegionServer killed with SIGKILL while another pod drains (writerThreads 11 -> 9): no pod is deleted while it is"
            + " down, the roll finishes, every pod restarted once by it",
        () -> {
          RollObserver roll =
              observeRoll(
                  "writerThreads 11 -> 9, a RegionServer killed (SIGKILL) while another drains");
          cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(9)));
          RolloutStatus mid =
              roll.awaitRollout(
                  "a pod draining",
                  ro ->
                      ro.getInFlight() != null
                          && ro.getInFlight().stream()
                              .anyMatch(f -> f.getStep() == PodRoll.Step.Draining));
          assertThat(mid).as("a pod draining (the roll finished first)").isNotNull();
          String draining = mid.getInFlight().get(0).getPod();
          String victim =
              java.util.stream.IntStream.range(0, REPLICAS)
                  .mapToObj(Cluster::pod)
                  .filter(p -> !p.equals(draining))
                  .reduce((a, b) -> b)
                  .orElseThrow();
          Pod victimPod = client.pods().inNamespace(cluster.ns).withName(victim).get();
          String victimUid = victimPod.getMetadata().getUid();
          int restartsBefore = containerRestarts(victimPod);
          Instant killed = Instant.now();
          // the JVM is the container's PID 1, which ignores a SIGKILL sent from inside the
          // container: the kill comes from the
          // kind node, through the container runtime's view of the process
          Shell.Result kill = onNode(regionServerPid(victim) + " && kill -9 $pid");
          assertThat(kill.code())
              .as("kill -9 of %s's RegionServer on the node: %s", victim, kill.output())
              .isZero();
          report.line(
              "- `%s` at step %s; killed the RegionServer in `%s` (SIGKILL) at %s",
              draining, mid.getInFlight().get(0).getStep(), victim, killed);
          // the kubelet restarts the killed container in the same pod; the roll deletes that pod
          // later
          // (its turn may come after the kill), so the restart is read from the pod the kill hit
          await(victim + " restarted by the kubelet or replaced")
              .atMost(Duration.ofMinutes(3))
              .pollInterval(Duration.ofSeconds(1))
              .until(
                  () -> {
                    Pod p = client.pods().inNamespace(cluster.ns).withName(victim).get();
                    return p == null
                        || !victimUid.equals(p.getMetadata().getUid())
                        || containerRestarts(p) > restartsBefore;
                  });
          Pod afterKill = client.pods().inNamespace(cluster.ns).withName(victim).get();
          assertThat(afterKill == null ? null : afterKill.getMetadata().getUid())
              .as(
                  "%s is the pod the kill hit (not deleted before the kubelet restarted its container)",
                  victim)
              .isEqualTo(victimUid);
          int restartsAfterKill = containerRestarts(afterKill);
          RollMeasurement m = record(roll.awaitDone());
          // the victim's outage from the kill: no deletion started in it
          List<long[]> outages =
              watch.downtimes().getOrDefault(Cluster.ordinalOf(victim), List.of()).stream()
                  .filter(o -> o[1] >= killed.toEpochMilli())
                  .toList();
          assertThat(outages).as("%s went down after the kill and came back", victim).isNotEmpty();
          long[] outage = outages.get(0);
          // (a delete decided in the moment before the operator saw it down is not the gate's
          // fault: 3 s)
          List<Integer> deletedMeanwhile = watch.deletionsBetween(outage[0] + 3000, outage[1]);
          report.line(
              "- `%s` down from %s to %s (%d s); pods deleted by the roll meanwhile: %s; its container restarts %d -> %d",
              victim,
              Instant.ofEpochMilli(outage[0]),
              Instant.ofEpochMilli(outage[1]),
              (outage[1] - outage[0]) / 1000,
              deletedMeanwhile,
              restartsBefore,
              restartsAfterKill);
          assertThat(deletedMeanwhile).as("pods deleted while %s was down", victim).isEmpty();
          assertThat(restartsAfterKill)
              .as("%s's container restarted once (the kill)", victim)
              .isEqualTo(restartsBefore + 1);
          for (int i = 0; i < REPLICAS; i++) {
            assertThat(m.uids().get(i))
                .as("pod UIDs of ordinal %d: deleted once by the roll", i)
                .hasSize(2);
          }
          assertThat(m.maxDown())
              .as(
                  "RegionServers down at once (%s): the roll's one and the killed one at most",
                  m.maxDownAt())
              .isLessThanOrEqualTo(2);
          assertThat(m.pvcsUnchanged()).as("PVC UIDs unchanged").isTrue();
          // the killed server's regions are closed until the master has reassigned them: reads of
          // them wait or fail meanwhile, counted here, not asserted zero
          summary.add(
              String.format(
                  "RegionServer SIGKILLed while another drained: no delete while it was down (%d s), roll %d s,"
                      + " at most %d down, failed reads %d of %d",
                  (outage[1] - outage[0]) / 1000,
                  Duration.between(m.start(), m.end()).toSeconds(),
                  m.maxDown(),
                  m.during().fail(),
                  m.during().ok() + m.during().fail()));
        });
  }

  @Test
  @Order(2)
  void aRegionServerRestartedInItsPodGetsItsCachedRegionsBack() {
    step(
        "10b. a RegionServer frozen (SIGSTOP) until the master has given its regions to the others, then"
            + " killed (SIGKILL): the kubelet restarts its container in the same pod (no delete, no"
            + " preStop hook) and the operator sends the regions its cache holds home",
        () -> {
          everyServerHoldsRegionsIfOneHoldsNone();
          String victim = notRestartedInItsPod("frozen", 1, 2, 0);
          Pod before = client.pods().inNamespace(cluster.ns).withName(victim).get();
          String uid = before.getMetadata().getUid();
          int restartsBefore = containerRestarts(before);
          // every count read (a /jmx that does not answer, or answers without its Server bean,
          // would make the others hold "all" at once, and the kill land inside the session)
          Map<String, Long> counts = new java.util.TreeMap<>();
          for (int i = 0; i < REPLICAS; i++) {
            counts.put(
                Cluster.pod(i),
                Jmx.awaitUntil(
                        client,
                        cluster.ns,
                        Cluster.pod(i),
                        "regions on " + Cluster.pod(i) + " in its /jmx",
                        Duration.ofMinutes(2),
                        Duration.ofSeconds(2),
                        j -> j.regionCount() > 0)
                    .regionCount());
          }
          long total = counts.values().stream().mapToLong(Long::longValue).sum();
          watch.reset();
          Instant frozen = Instant.now();
          // frozen, not killed at once: a container restarted within the ZooKeeper session (30 s
          // on this chart) registers before the master expires the old instance, and the master
          // then reassigns the regions to the same host itself. A server whose restart outlasts
          // the session (a long pause, a slow start) comes back to find them elsewhere: that case
          Shell.Result stop = onNode(regionServerPid(victim) + " && kill -STOP $pid && echo $pid");
          assertThat(stop.code()).as("SIGSTOP of %s: %s", victim, stop.output()).isZero();
          String pid = stop.output().strip().replaceAll("(?s).*\\n", "");
          assertThat(pid).as("the frozen RegionServer's PID: %s", stop.output()).matches("[0-9]+");
          // SIGKILL only to the process still frozen (state T): not one the kubelet started since
          String stillFrozen = "[ \"$(awk '{print $3}' /proc/" + pid + "/stat 2>/dev/null)\" = T ]";
          Instant killed;
          Instant reassigned;
          try {
            await("the master reassigned " + victim + "'s regions to the others")
                .atMost(Duration.ofMinutes(3))
                .pollInterval(Duration.ofSeconds(2))
                .until(() -> regionsOnOthers(victim) >= total);
            reassigned = Instant.now();
            Shell.Result kill = onNode(stillFrozen + " && kill -9 " + pid);
            assertThat(kill.code())
                .as("SIGKILL of %s's frozen RegionServer (PID %s): %s", victim, pid, kill.output())
                .isZero();
            killed = Instant.now();
          } finally {
            onNode(stillFrozen + " && kill -CONT " + pid); // a step that failed frozen: let it go
          }
          List<io.fabric8.kubernetes.api.model.Event> events = awaitHomecoming(victim, frozen);
          Instant home = Instant.now();
          Pod after = client.pods().inNamespace(cluster.ns).withName(victim).get();
          // /jmx's regionCount is refreshed every second and cached as long; a RegionServer that
          // has just started may answer without its Server bean for a while (seen on kind: -1
          // right after RegionsHome)
          long victimRegions =
              Jmx.awaitUntil(
                      client,
                      cluster.ns,
                      victim,
                      "regions on " + victim + " in its /jmx",
                      Duration.ofMinutes(2),
                      Duration.ofSeconds(2),
                      j -> j.regionCount() > 0)
                  .regionCount();
          Map<String, Long> countsAfter = regionCounts();
          Workload.Stats frozenStats = Workload.stats(workload.log(READER), frozen, killed);
          Workload.Stats homeward = Workload.stats(workload.log(READER), killed, home);
          // a read begun while the server was frozen may still fail up to the reader's operation
          // timeout (30 s) after the kill: those are the freeze's. The moves home are checked from
          // then on, to 10 s after the regions are home
          Instant settled = killed.plus(READER_OPERATION_TIMEOUT).plusSeconds(1);
          Instant checkedUntil = home.plusSeconds(10);
          await("the reader's log past " + checkedUntil)
              .atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofSeconds(1))
              .until(() -> Instant.now().isAfter(checkedUntil.plusSeconds(2)));
          Workload.Stats moves =
              Workload.stats(
                  workload.log(READER), settled.isBefore(home) ? settled : home, checkedUntil);
          report.line(
              "- `%s` frozen at %s; the master had its regions elsewhere after %d s; SIGKILL at %s;"
                  + " RegionsHome after %d s; container restarts %d -> %d; regions per pod %s -> %s",
              victim,
              frozen,
              Duration.between(frozen, reassigned).toSeconds(),
              killed,
              Duration.between(killed, home).toSeconds(),
              restartsBefore,
              containerRestarts(after),
              counts.values(),
              countsAfter.values());
          report.line("- reader while frozen: %s", frozenStats.summary());
          report.line("- reader from the kill to its regions home: %s", homeward.summary());
          report.line(
              "- reader from %s (the kill + the reader's operation timeout, or RegionsHome if"
                  + " sooner) to 10 s after RegionsHome: %s",
              settled.isBefore(home) ? settled : home, moves.summary());
          assertThat(after.getMetadata().getUid()).as("%s not deleted", victim).isEqualTo(uid);
          assertThat(containerRestarts(after))
              .as("%s's container restarted once (the kill)", victim)
              .isEqualTo(restartsBefore + 1);
          assertThat(events)
              .as("the operator's events for %s", victim)
              .extracting(io.fabric8.kubernetes.api.model.Event::getReason)
              .contains("RestartedInPlace", "RegionsHome")
              .doesNotContain("HomecomingEnded");
          assertThat(victimRegions).as("regions on %s once home", victim).isPositive();
          assertThat(watch.maxDown())
              .as("RegionServers down at once (%s)", watch.maxDownAt())
              .isLessThanOrEqualTo(1);
          assertThat(moves.fail())
              .as("reads failed while its regions went home and just after")
              .isZero();
          summary.add(
              String.format(
                  "RegionServer restarted in its pod (frozen %d s, then SIGKILL): regions home %d s after"
                      + " the kill, regions per pod %s -> %s; while its regions went home: failed reads"
                      + " %d, %d s without a successful read, worst second's p99 %.0f ms",
                  Duration.between(frozen, killed).toSeconds(),
                  Duration.between(killed, home).toSeconds(),
                  counts.values(),
                  countsAfter.values(),
                  homeward.fail(),
                  homeward.stalledSeconds(),
                  homeward.worstSecondP99ms()));
        });
  }

  @Test
  @Order(3)
  void aPodNotRolledYetOomKilledWhileTheRollIsPausedComesBackOnItsOwnPlanWithItsCache() {
    step(
        "10c. a paused roll (memory.bucketCache 640Mi -> 768Mi) and a RegionServer it has not"
            + " restarted yet OOM-killed: the kubelet restarts its container in the pod on the plan"
            + " it was rolled onto (its L2 as large as before) with its cache; unpaused, its"
            + " regions come home",
        () -> {
          everyServerHoldsRegionsIfOneHoldsNone();
          String victim = notRestartedInItsPod("OOM-killed", 2, 0, 1);
          Map<Integer, String> uids = cluster.podUids();
          String oldRevision = cluster.revision();
          io.fabric8.kubernetes.api.model.Quantity bucketCache =
              cluster.policy().getSpec().getMemory().getBucketCache();
          cluster.editPolicy(
              x -> {
                if (x.getSpec().getRollout() == null) {
                  x.getSpec().setRollout(new dev.hbase.cache.api.v1alpha1.spec.RolloutSpec());
                }
                x.getSpec().getRollout().setPaused(true);
                x.getSpec()
                    .getMemory()
                    .setBucketCache(new io.fabric8.kubernetes.api.model.Quantity("768Mi"));
              });
          var paused =
              cluster.awaitRollout(
                  "the roll to 768Mi paused with every pod still to restart",
                  Duration.ofMinutes(2),
                  p ->
                      p.getStatus().getRollout().getPhase() == RolloutStatus.Phase.Paused
                          && !oldRevision.equals(p.getStatus().getRollout().getRevision()));
          report.line(
              "- memory.bucketCache %s -> 768Mi with rollout.paused: phase %s, revision %s -> %s: %s",
              bucketCache,
              paused.getStatus().getRollout().getPhase(),
              oldRevision,
              paused.getStatus().getRollout().getRevision(),
              paused.getStatus().getRollout().getMessage());
          // the L2 as the old plan sized it, and full: what a restart on the new plan would drop
          Jmx before =
              Jmx.awaitUntil(
                  client,
                  cluster.ns,
                  victim,
                  victim + "'s /jmx with regions and a filled L2",
                  Duration.ofMinutes(2),
                  Duration.ofSeconds(2),
                  j -> j.regionCount() > 0 && j.l2Used() > 0);
          Pod pod = client.pods().inNamespace(cluster.ns).withName(victim).get();
          int restartsBefore = containerRestarts(pod);
          watch.reset();
          // The kernel's OOM killer, as when the JVM's native memory outgrows the pod's limit:
          // processes in the container take memory until its cgroup has none left, each holding
          // 200 MB (a pipe that does not end: tail keeps its one endless line), fewer than the
          // RegionServer holds, which is made the first choice too (oom_score_adj 1000, set from
          // the node). One process taking it all was chosen over the JVM (seen on kind). The kill
          // is the kernel's; the kubelet reports it.
          Shell.Result first =
              onNode(regionServerPid(victim) + " && echo 1000 > /proc/$pid/oom_score_adj");
          assertThat(first.code())
              .as("oom_score_adj of %s's RegionServer: %s", victim, first.output())
              .isZero();
          Instant killed = Instant.now();
          Shell.Result hog =
              cluster.kubectl(
                  "exec",
                  "-n",
                  cluster.ns,
                  victim,
                  "-c",
                  "regionserver",
                  "--",
                  "timeout",
                  "50",
                  "sh",
                  "-c",
                  "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do"
                      + " (head -c 200m /dev/zero; sleep 60) | tail > /dev/null & done; wait");
          await(victim + "'s container restarted in its pod")
              .atMost(Duration.ofMinutes(3))
              .pollInterval(Duration.ofSeconds(1))
              .until(
                  () ->
                      containerRestarts(
                              client.pods().inNamespace(cluster.ns).withName(victim).get())
                          > restartsBefore);
          Pod restarted = client.pods().inNamespace(cluster.ns).withName(victim).get();
          var terminated =
              restarted.getStatus().getContainerStatuses().stream()
                  .filter(c -> "regionserver".equals(c.getName()))
                  .map(c -> c.getLastState().getTerminated())
                  .filter(java.util.Objects::nonNull)
                  .findFirst()
                  .orElse(null);
          report.line(
              "- `%s` (L2 %s of %s, %d regions) at %s: the memory hog ended with exit %d; the"
                  + " kubelet reported its container %s (exit %s) at %s",
              victim,
              mib(before.l2Used()),
              mib(before.l2Capacity()),
              before.regionCount(),
              killed,
              hog.code(),
              terminated == null ? "?" : terminated.getReason(),
              terminated == null ? "?" : terminated.getExitCode(),
              terminated == null ? "?" : terminated.getFinishedAt());
          // its new instance, while the roll is still paused: the plan it was rolled onto, and
          // its persisted blocks (HBase reads the map before it registers)
          Jmx after =
              Jmx.awaitUntil(
                  client,
                  cluster.ns,
                  victim,
                  victim + "'s new instance with its L2",
                  Duration.ofMinutes(3),
                  Duration.ofSeconds(2),
                  j -> j.startTime() != before.startTime() && j.l2Capacity() > 0);
          Instant back = Instant.now();
          // HBase told at once (issue 51): a figure here, not asserted: in this step's first kind
          // run and in step 10's, the expiry did not come (by hand on the same cluster, 4 kills
          // of 5 were expired within 1.2 s); the operator logs each step's look at debug level
          List<io.fabric8.kubernetes.api.model.Event> crashed =
              cluster
                  .policyEvents(
                      Set.of("RegionServerCrashed"), l -> l.stream().anyMatch(since(killed)))
                  .stream()
                  .filter(since(killed))
                  .toList();
          crashed.forEach(
              e -> report.line("  - %s %s: %s", e.getType(), e.getReason(), e.getMessage()));
          var lastCrash = cluster.policy().getStatus().getLastCrash();
          report.line(
              "- `%s`'s new instance %d s after the kill, the roll still paused: L2 %s of %s"
                  + " (before: %s of %s); status.lastCrash: %s",
              victim,
              Duration.between(killed, back).toSeconds(),
              mib(after.l2Used()),
              mib(after.l2Capacity()),
              mib(before.l2Used()),
              mib(before.l2Capacity()),
              lastCrash == null || !victim.equals(lastCrash.getPod())
                  ? "none for it"
                  : String.format(
                      "reason %s, told HBase %s at %s, regions unavailable %s s",
                      lastCrash.getReason(),
                      lastCrash.getToldHBase(),
                      lastCrash.getToldHBaseAt(),
                      lastCrash.getRegionsUnavailableSeconds()));
          assertThat(terminated).as("%s's container's last termination", victim).isNotNull();
          assertThat(terminated.getReason())
              .as("what the kubelet reported of %s's container", victim)
              .isEqualTo("OOMKilled");
          assertThat(restarted.getMetadata().getUid())
              .as("%s restarted in its pod, not deleted", victim)
              .isEqualTo(uids.get(Cluster.ordinalOf(victim)));
          assertThat(after.l2Capacity())
              .as(
                  "%s's L2 after its restart: the plan it was rolled onto, not the paused one",
                  victim)
              .isEqualTo(before.l2Capacity());
          assertThat(after.l2Used())
              .as("%s's L2 after its restart: its persisted blocks, not a cold cache", victim)
              .isGreaterThanOrEqualTo(before.l2Used() / 2);
          assertThat(cluster.podUids()).as("no pod deleted by the paused roll").isEqualTo(uids);
          // back to the plan every pod runs, unpaused: nothing to restart, and the homecoming
          // (which a paused roll holds, as every move) brings its regions back with its cache
          cluster.editPolicy(
              x -> {
                x.getSpec().getRollout().setPaused(false);
                x.getSpec().getMemory().setBucketCache(bucketCache);
              });
          List<io.fabric8.kubernetes.api.model.Event> events = awaitHomecoming(victim, killed);
          Instant home = Instant.now();
          cluster.awaitRollout(
              "Idle on the old revision again",
              Duration.ofMinutes(2),
              p ->
                  p.getStatus().getRollout().getPhase() == RolloutStatus.Phase.Idle
                      && oldRevision.equals(p.getStatus().getRollout().getRevision()));
          long victimRegions =
              Jmx.awaitUntil(
                      client,
                      cluster.ns,
                      victim,
                      "regions on " + victim + " in its /jmx",
                      Duration.ofMinutes(2),
                      Duration.ofSeconds(2),
                      j -> j.regionCount() > 0)
                  .regionCount();
          Workload.Stats crash = Workload.stats(workload.log(READER), killed, back);
          report.line(
              "- unpaused and reverted: RegionsHome %d s after the kill, %d regions on `%s`; reader"
                  + " from the kill to its new instance: %s",
              Duration.between(killed, home).toSeconds(), victimRegions, victim, crash.summary());
          assertThat(events)
              .as("the operator's events for %s", victim)
              .extracting(io.fabric8.kubernetes.api.model.Event::getReason)
              .contains("RegionsHome")
              .doesNotContain("HomecomingEnded");
          assertThat(victimRegions).as("regions on %s once home", victim).isPositive();
          assertThat(watch.maxDown())
              .as("RegionServers down at once (%s)", watch.maxDownAt())
              .isLessThanOrEqualTo(1);
          assertThat(cluster.podUids()).as("no pod deleted once reverted").isEqualTo(uids);
          // issue 51's figure (a goal, not asserted): the cluster's data reads from cache in the
          // minute after the kill, every RegionServer's /jmx (this suite's samples, every 2 s)
          Instant minute = killed.plusSeconds(60);
          await("a minute after the kill")
              .atMost(Duration.ofSeconds(75))
              .pollInterval(Duration.ofSeconds(1))
              .until(() -> Instant.now().isAfter(minute.plusSeconds(3)));
          Double cached = sampler.servedFromCache(killed, minute);
          report.line(
              "- the cluster's data reads served from cache in the minute after the kill: %s",
              cached == null ? "none read" : String.format("%.4f", cached));
          summary.add(
              String.format(
                  "RegionServer OOM-killed in a paused roll to a larger L2: back in its pod on its"
                      + " own plan (L2 %s, %s of it kept), regions home %d s after the kill; failed"
                      + " reads %d, %d s without a successful read, worst second's p99 %.0f ms; the"
                      + " minute after it %s from cache",
                  mib(after.l2Capacity()),
                  mib(after.l2Used()),
                  Duration.between(killed, home).toSeconds(),
                  crash.fail(),
                  crash.stalledSeconds(),
                  crash.worstSecondP99ms(),
                  cached == null ? "none read" : String.format("%.4f", cached)));
        });
  }

  /**
   * A pod whose RegionServer container has not restarted in it yet, the first of {@code order}: a
   * second restart within the operator's crash-loop window (its run before under 10 min) is left to
   * HBase by design, and step 10 SIGKILLs one pod's (which one follows the roll's order).
   */
  private String notRestartedInItsPod(String what, Integer... order) {
    Map<String, Integer> restarts = new java.util.TreeMap<>();
    for (int i = 0; i < REPLICAS; i++) {
      restarts.put(
          Cluster.pod(i),
          containerRestarts(client.pods().inNamespace(cluster.ns).withName(Cluster.pod(i)).get()));
    }
    String victim =
        java.util.stream.Stream.of(order)
            .map(Cluster::pod)
            .filter(n -> restarts.get(n) == 0)
            .findFirst()
            .orElseThrow(
                () ->
                    new AssertionError(
                        "every RegionServer container restarted in its pod already: " + restarts));
    report.line(
        "- container restarts in their pods before the step: %s; %s: `%s`", restarts, what, victim);
    return victim;
  }

  /**
   * Waits until the operator says the pod's regions are home (RegionsHome) or its homecoming ended,
   * and reports its homecoming's events since {@code from}. The events name the pod
   * (RestartedInPlace, RegionsHome: first; the end of one that could not finish: "the regions of
   * <pod> ...").
   */
  private List<io.fabric8.kubernetes.api.model.Event> awaitHomecoming(String pod, Instant from) {
    java.util.regex.Pattern named =
        java.util.regex.Pattern.compile("\\b" + java.util.regex.Pattern.quote(pod) + "\\b");
    Predicate<io.fabric8.kubernetes.api.model.Event> mine =
        e -> e.getMessage() != null && named.matcher(e.getMessage()).find();
    await(pod + "'s regions home (RegionsHome) or its homecoming ended")
        .atMost(Duration.ofMinutes(6))
        .pollInterval(Duration.ofSeconds(2))
        .until(
            () ->
                cluster.policyEvents(Set.of("RegionsHome", "HomecomingEnded")).stream()
                    .filter(mine)
                    .anyMatch(since(from)));
    List<io.fabric8.kubernetes.api.model.Event> events =
        cluster.policyEvents(Set.of("RestartedInPlace", "RegionsHome", "HomecomingEnded")).stream()
            .filter(mine)
            .filter(since(from))
            .toList();
    events.forEach(e -> report.line("  - %s %s: %s", e.getType(), e.getReason(), e.getMessage()));
    return events;
  }

  private static String mib(long bytes) {
    return String.format("%.1f MiB", bytes / 1048576.0);
  }

  /**
   * The regions the pods other than {@code frozen} serve, by their /jmx (a frozen pod's is not
   * read: its answer would only come at the read's timeout); -1 if one does not answer.
   */
  private long regionsOnOthers(String frozen) {
    long sum = 0;
    for (int i = 0; i < REPLICAS; i++) {
      if (Cluster.pod(i).equals(frozen)) {
        continue;
      }
      try {
        sum += Jmx.read(client, cluster.ns, Cluster.pod(i)).regionCount();
      } catch (java.io.IOException e) {
        return -1;
      }
    }
    return sum;
  }

  /** The e2e reader's hbase.client.operation.timeout (workload/Workload.java). */
  static final Duration READER_OPERATION_TIMEOUT = Duration.ofSeconds(30);

  static int containerRestarts(Pod pod) {
    return pod.getStatus().getContainerStatuses().stream()
        .filter(c -> "regionserver".equals(c.getName()))
        .mapToInt(c -> c.getRestartCount())
        .sum();
  }
}
