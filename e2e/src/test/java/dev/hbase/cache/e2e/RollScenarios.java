package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.MASTER_POD;
import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static dev.hbase.cache.e2e.Cluster.condition;
import static dev.hbase.cache.e2e.Cluster.tuning;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Steps 6-9 (tags {@code rolls}, {@code fault}): a roll disturbed from the control side: helm
 * upgrades of charts/hbase while idle and mid-roll, the HMaster deleted, the policy made invalid
 * mid-roll and the operator killed while that roll holds. writerThreads goes 4 -> 6 -> 7 -> 8. (The
 * operator killed mid-roll was a roll of its own, step 5, until it joined step 9's held roll: one
 * roll less in the suite, ~100 s, and the successor now also has to take over a held roll.)
 */
@Tag("rolls")
@Tag("fault")
class RollScenarios extends FaultScenario {
  /**
   * Its start: the suite's operator and policy (writerThreads none of 6, 7, 8), the reader, HBase
   * given back, caches warm (step 6 asserts the cluster's reads cached).
   */
  @Override
  List<Need> needs() {
    return List.of(
        Needs.HBASE_UP,
        Needs.SUITE_OPERATOR,
        Needs.suitePolicy(6, 7, 8),
        Needs.READER,
        Needs.GIVEN_BACK,
        Needs.WARM);
  }

  @Test
  @Order(1)
  void helmUpgradeOfTheHBaseChartRollsThroughTheOperator() {
    step(
        "6. helm upgrade of charts/hbase (a pod annotation, fields handed to the operator) while Idle: the operator rolls the pods,"
            + " the HMaster keeps running; then HBase's balancer, run three times as its chore would: balanced, reads cached",
        () -> {
          String oldUpdateRevision = cluster.regionServers().getStatus().getUpdateRevision();
          Pod master = client.pods().inNamespace(cluster.ns).withName(MASTER_POD).get();
          RollObserver roll =
              observeRoll(
                      "helm upgrade charts/hbase --reuse-values --set blockCachePolicy="
                          + Cluster.POLICY
                          + " --set-string regionserver.podAnnotations.team=search")
                  .untilTemplateRolled(oldUpdateRevision);
          Shell.Result up =
              cluster.helm(
                  300,
                  "upgrade \"$HBASE_RELEASE\" charts/hbase -n \"$HBASE_NAMESPACE\""
                      + " --reuse-values --set blockCachePolicy="
                      + Cluster.POLICY
                      + " --set-string regionserver.podAnnotations.team=search");
          assertThat(up.code()).as("helm upgrade: %s", up.output()).isZero();
          assertThat(cluster.regionServers().getSpec().getUpdateStrategy().getType())
              .as("update strategy after helm upgrade")
              .isEqualTo("OnDelete");
          RollMeasurement m = record(roll.awaitDone());
          List<Event> started =
              cluster
                  .policyEvents(
                      Set.of("RollStarted"),
                      l -> l.stream().anyMatch(e -> e.getMessage().contains("older pod template")))
                  .stream()
                  .filter(e -> e.getMessage().contains("older pod template"))
                  .toList();
          report.line(
              "- RollStarted: %s",
              started.isEmpty() ? "none" : started.get(started.size() - 1).getMessage());
          assertThat(started)
              .as("a RollStarted event that names the pod template change")
              .isNotEmpty();
          assertOneAtATimeWithTheCacheKept(m);
          assertTheClustersReadsStayedCached(m);
          assertEveryPodHomeWithin(m);
          for (int i = 0; i < REPLICAS; i++) {
            assertThat(
                    client
                        .pods()
                        .inNamespace(cluster.ns)
                        .withName(Cluster.pod(i))
                        .get()
                        .getMetadata()
                        .getAnnotations())
                .as("the chart's change reached %s", Cluster.pod(i))
                .containsEntry("team", "search");
          }
          Pod masterAfter = client.pods().inNamespace(cluster.ns).withName(MASTER_POD).get();
          report.line(
              "- HMaster pod `%s`: uid %s before, %s after (the chart renders the operator's master ConfigMap:"
                  + " helm put nothing back)",
              MASTER_POD, master.getMetadata().getUid(), masterAfter.getMetadata().getUid());
          assertThat(masterAfter.getMetadata().getUid())
              .as("the HMaster pod was not restarted by the helm upgrade")
              .isEqualTo(master.getMetadata().getUid());
          String balancer = BalancerRuns.afterTheRoll(this);
          summary.add(
              String.format(
                  "helm upgrade (pod annotation, blockCachePolicy=%s): rolled by the operator in %d s, HMaster kept;"
                      + " then HBase's balancer: %s",
                  Cluster.POLICY, Duration.between(m.start(), m.end()).toSeconds(), balancer));
        });
  }

  @Test
  @Order(2)
  void helmUpgradeWhileARollRunsEndsWithEveryPodOnTheNewestTemplate() {
    step(
        "7. helm upgrade of charts/hbase (another pod annotation) while a roll runs (writerThreads 4 -> 6): one pod down at a time,"
            + " every pod ends on the newest template and revision, none restarted after the upgrade more than once",
        () -> {
          RollObserver roll =
              observeRoll("writerThreads 4 -> 6, helm upgrade (pod annotation) mid-roll");
          cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(6)));
          RolloutStatus mid =
              roll.awaitRollout(
                  "one pod updated and the next in flight",
                  ro ->
                      ro.getUpdated() != null
                          && ro.getUpdated() >= 1
                          && ro.getInFlight() != null
                          && !ro.getInFlight().isEmpty());
          assertThat(mid)
              .as("a pod in flight after one was updated (the roll finished first)")
              .isNotNull();
          String oldUpdateRevision = cluster.regionServers().getStatus().getUpdateRevision();
          Instant upgraded = Instant.now();
          Shell.Result up =
              cluster.helm(
                  300,
                  "upgrade \"$HBASE_RELEASE\" charts/hbase -n \"$HBASE_NAMESPACE\""
                      + " --reuse-values --set-string regionserver.podAnnotations.team=ads");
          assertThat(up.code()).as("helm upgrade: %s", up.output()).isZero();
          // the pod in flight when helm began may be deleted for the spec change while helm still
          // runs, and then once more for the new template (seen on a loaded machine: rs-2, draining
          // when helm began, deleted 3 s later, then again): that one pod may have two deletes from
          // helm's start if one of them came before helm returned; every other pod one at most
          Instant templateIn = Instant.now();
          String inFlight = mid.getInFlight().get(0).getPod();
          report.line(
              "- helm upgrade at %s while `%s` was at step %s (%d/%d updated)",
              upgraded,
              mid.getInFlight().get(0).getPod(),
              mid.getInFlight().get(0).getStep(),
              mid.getUpdated(),
              mid.getTotal());
          RollMeasurement m = record(roll.untilTemplateRolled(oldUpdateRevision).awaitDone());
          assertThat(m.maxDown())
              .as("RegionServers down at once (%s)", m.maxDownAt())
              .isLessThanOrEqualTo(1);
          assertThat(m.pvcsUnchanged()).as("PVC UIDs unchanged").isTrue();
          for (int i = 0; i < REPLICAS; i++) {
            Pod p = client.pods().inNamespace(cluster.ns).withName(Cluster.pod(i)).get();
            assertThat(p.getMetadata().getAnnotations())
                .as("the upgrade's annotation on %s", Cluster.pod(i))
                .containsEntry("team", "ads");
            // restarted once for the spec change, once more at most for the template (a pod the
            // roll restarted before the upgrade)
            assertThat(m.uids().get(i)).as("pod UIDs of ordinal %d", i).hasSizeBetween(2, 3);
            int ordinal = Cluster.ordinalOf(p.getMetadata().getName());
            long deletesAfter =
                watch
                    .deletionsBetween(upgraded.toEpochMilli(), Instant.now().toEpochMilli())
                    .stream()
                    .filter(o -> o == ordinal)
                    .count();
            long duringHelm =
                watch.deletionsBetween(upgraded.toEpochMilli(), templateIn.toEpochMilli()).stream()
                    .filter(o -> o == ordinal)
                    .count();
            assertThat(deletesAfter)
                .as(
                    "deletes of %s after the upgrade began (%d of them before helm returned;"
                        + " in flight then: %s)",
                    Cluster.pod(i), duringHelm, inFlight)
                .isLessThanOrEqualTo(Cluster.pod(i).equals(inFlight) && duringHelm > 0 ? 2 : 1);
          }
          assertThat(m.during().fail())
              .as("failed reads during the roll: %s", m.during().errors())
              .isZero();
          summary.add(
              String.format(
                  "helm upgrade mid-roll: done in %d s, at most %d down, pods restarted %s, failed reads %d",
                  Duration.between(m.start(), m.end()).toSeconds(),
                  m.maxDown(),
                  sizes(m.uids()),
                  m.during().fail()));
        });
  }

  @Test
  @Order(3)
  void theHMasterDeletedMidRollHoldsTheRollUntilItIsBack() {
    step(
        "8. HMaster pod deleted mid-roll (writerThreads 6 -> 7): the roll waits for the new master and goes on",
        () -> {
          RollObserver roll =
              observeRoll("writerThreads 6 -> 7, HMaster pod deleted while the first pod drains");
          cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(7)));
          RolloutStatus mid =
              roll.awaitRollout(
                  "a pod in flight", ro -> ro.getInFlight() != null && !ro.getInFlight().isEmpty());
          assertThat(mid).as("a pod in flight (the roll finished first)").isNotNull();
          Pod master = client.pods().inNamespace(cluster.ns).withName(MASTER_POD).get();
          Instant killed = Instant.now();
          client.pods().inNamespace(cluster.ns).withName(MASTER_POD).delete();
          PodRoll f = mid.getInFlight().get(0);
          report.line(
              "- deleted `%s` (uid %s) at %s while %s was at step %s",
              MASTER_POD, master.getMetadata().getUid(), killed, f.getPod(), f.getStep());
          RollMeasurement m = record(roll.awaitDone());
          Pod after = client.pods().inNamespace(cluster.ns).withName(MASTER_POD).get();
          Instant masterReady = readySince(after);
          report.line(
              "- new HMaster pod uid %s, Ready since %s (%s s after the delete)",
              after.getMetadata().getUid(),
              masterReady,
              masterReady == null ? "?" : Duration.between(killed, masterReady).toSeconds());
          assertThat(after.getMetadata().getUid())
              .as("the HMaster pod was replaced")
              .isNotEqualTo(master.getMetadata().getUid());
          // a region caught mid-move when the master went away stays closed until the new master
          // finishes its move: reads of it may fail, counted here, not asserted zero
          assertOneAtATimeWithTheCacheKept(m, false);
          summary.add(
              String.format(
                  "HMaster deleted mid-roll: roll done in %d s, at most %d RegionServer down, reads failed: %d of %d",
                  Duration.between(m.start(), m.end()).toSeconds(),
                  m.maxDown(),
                  m.during().fail(),
                  m.during().ok() + m.during().fail()));
        });
  }

  @Test
  @Order(4)
  void aPolicyMadeInvalidMidRollHoldsTheRollAndItResumesWhenValid() {
    step(
        "9. the policy made invalid mid-roll (writerThreads 7 -> 8, then bucketCache 64Gi): the roll holds with HBase's balancer on;"
            + " the operator pod killed while it holds; made valid again, the new operator finishes it without restarting a pod twice",
        () -> {
          RollObserver roll =
              observeRoll(
                  "writerThreads 7 -> 8, invalid mid-roll, operator killed, then valid again");
          cluster.editPolicy(x -> x.getSpec().setTuning(tuning(x).setWriterThreads(8)));
          RolloutStatus mid =
              roll.awaitRollout(
                  "a pod in flight", ro -> ro.getInFlight() != null && !ro.getInFlight().isEmpty());
          assertThat(mid).as("a pod in flight (the roll finished first)").isNotNull();
          Boolean balancerRolling = cluster.balancerOn();
          String rollingUnread = cluster.balancerUnread;
          Instant t0 = Instant.now();
          cluster.editPolicy(x -> x.getSpec().getMemory().setBucketCache(new Quantity("64Gi")));
          BlockCachePolicy held =
              roll.awaitRollout(
                          "held: phase Blocked, Degraded=True reason PolicyInvalid",
                          ro -> {
                            BlockCachePolicy p = cluster.policy();
                            Condition d = condition(p, "Degraded");
                            return ro.getPhase() == RolloutStatus.Phase.Blocked
                                && d != null
                                && "True".equals(d.getStatus())
                                && "PolicyInvalid".equals(d.getReason());
                          })
                      == null
                  ? null
                  : cluster.policy();
          assertThat(held).as("the roll held (it finished first)").isNotNull();
          Boolean balancerHeld = cluster.balancerOn();
          String heldUnread = cluster.balancerUnread;
          List<Event> heldEvents = cluster.policyEvents(Set.of("RollHeld"), l -> !l.isEmpty());
          report.line(
              "- `%s` at step %s when memory.bucketCache went to 64Gi; held after %d s: phase %s, in flight %s, message: %s",
              mid.getInFlight().get(0).getPod(),
              mid.getInFlight().get(0).getStep(),
              Duration.between(t0, Instant.now()).toSeconds(),
              held.getStatus().getRollout().getPhase(),
              held.getStatus().getRollout().getInFlight().stream().map(PodRoll::getPod).toList(),
              held.getStatus().getRollout().getMessage());
          report.line(
              "- HBase's balancer (the master's status page): %s while rolling%s, %s while held%s; events RollHeld: %s",
              balancerRolling,
              rollingUnread.isEmpty() ? "" : " (" + rollingUnread + ")",
              balancerHeld,
              heldUnread.isEmpty() ? "" : " (" + heldUnread + ")",
              heldEvents.isEmpty() ? "none" : heldEvents.get(heldEvents.size() - 1).getMessage());
          assertThat(heldEvents).as("a RollHeld event").isNotEmpty();
          assertThat(balancerRolling)
              .as("the balancer is off while the roll drains %s", rollingUnread)
              .isFalse();
          assertThat(balancerHeld)
              .as("the balancer is on while the roll is held %s", heldUnread)
              .isTrue();
          // the operator killed while the roll holds a pod in flight: its successor takes the roll
          // from status.rollout (the only place it lives) and the finished roll restarted every pod
          // once, one at a time (assertOneAtATimeWithTheCacheKept below)
          Pod op = cluster.operatorPod();
          Instant killedAt = Instant.now();
          cluster.killOperatorPod(op);
          Pod next = awaitNewOperatorPod(op);
          long readyAfter = Duration.between(killedAt, Instant.now()).toSeconds();
          // the successor leads (the lease the killed pod held expires first) and finds the roll
          // held: only then is the policy made valid, so that it is the one that takes over
          String lease = awaitLeader(next);
          BlockCachePolicy underSuccessor = cluster.policy();
          report.line(
              "- killed operator pod %s (grace period 0) while held; new operator pod `%s` Ready %d s later, leading (%s)"
                  + " %d s later; the roll then: phase %s, in flight %s",
              op.getMetadata().getName(),
              next.getMetadata().getName(),
              readyAfter,
              lease,
              Duration.between(killedAt, Instant.now()).toSeconds(),
              underSuccessor.getStatus().getRollout().getPhase(),
              underSuccessor.getStatus().getRollout().getInFlight().stream()
                  .map(PodRoll::getPod)
                  .toList());
          assertThat(underSuccessor.getStatus().getRollout().getPhase())
              .as("the roll still held under the successor")
              .isEqualTo(RolloutStatus.Phase.Blocked);
          cluster.editPolicy(x -> x.getSpec().getMemory().setBucketCache(new Quantity("640Mi")));
          RollMeasurement m = record(roll.awaitDone());
          assertOneAtATimeWithTheCacheKept(m);
          assertTheClustersReadsStayedCached(m);
          summary.add(
              String.format(
                  "invalid mid-roll: held (balancer on, RollHeld), operator killed while held, resumed by its successor when valid;"
                      + " roll %d s in all, failed reads %d",
                  Duration.between(m.start(), m.end()).toSeconds(), m.during().fail()));
        });
  }

  /**
   * Waits until {@code pod} holds the operator's leader lease (its {@code LEADER_ELECTION_LEASE},
   * in the operator's namespace); returns how it was told: the lease's name, or "no leader
   * election".
   */
  private String awaitLeader(Pod pod) {
    var env = pod.getSpec().getContainers().get(0).getEnv();
    String elect =
        env.stream()
            .filter(e -> "LEADER_ELECTION".equals(e.getName()))
            .findFirst()
            .map(e -> e.getValue())
            .orElse("false");
    if (!"true".equals(elect)) {
      return "no leader election";
    }
    String lease =
        env.stream()
            .filter(e -> "LEADER_ELECTION_LEASE".equals(e.getName()))
            .findFirst()
            .map(e -> e.getValue())
            .orElse("hbase-cache-operator");
    await("operator pod " + pod.getMetadata().getName() + " holds the lease " + lease)
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () -> {
              var l = client.leases().inNamespace(cluster.opNs).withName(lease).get();
              return l != null
                  && l.getSpec() != null
                  && pod.getMetadata().getName().equals(l.getSpec().getHolderIdentity());
            });
    return "lease " + lease;
  }

  /** The operator's Deployment has a Ready pod other than {@code old}; that pod. */
  private Pod awaitNewOperatorPod(Pod old) {
    AtomicReference<Pod> next = new AtomicReference<>();
    await("an operator pod other than " + old.getMetadata().getName() + " Ready")
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofSeconds(2))
        .until(
            () -> {
              cluster.operatorPods().stream()
                  .filter(p -> !p.getMetadata().getName().equals(old.getMetadata().getName()))
                  .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                  .filter(PodWatch::ready)
                  .findFirst()
                  .ifPresent(next::set);
              return next.get() != null;
            });
    return next.get();
  }
}
