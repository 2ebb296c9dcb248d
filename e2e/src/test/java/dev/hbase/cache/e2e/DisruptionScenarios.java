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
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Step 10 (tag {@code fault}): a RegionServer lost in the middle of the operator's roll: killed
 * with SIGKILL while another drains (writerThreads 11 -> 9). The stops that are not the operator's,
 * with no roll running, are {@link WarmStopScenarios}.
 */
@Order(4)
class DisruptionScenarios extends FaultScenario {
  @Test
  @Order(11)
  @Tag("fault")
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

  static int containerRestarts(Pod pod) {
    return pod.getStatus().getContainerStatuses().stream()
        .filter(c -> "regionserver".equals(c.getName()))
        .mapToInt(c -> c.getRestartCount())
        .sum();
  }
}
