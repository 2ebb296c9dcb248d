package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.Zone;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the roller sees of real pod objects (statuses as the kubelet writes them). */
class PodViewTest {
  static Pod pod(String status) {
    return Serialization.unmarshal(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: rs-1\n  uid: u1\n  annotations:\n    cache.hbase.dev/config-hash: abc\n"
            + "spec:\n  containers: [{name: regionserver, image: x}]\nstatus:\n"
            + status,
        Pod.class);
  }

  @Test
  void runningReadyPod() {
    PodView v =
        Observer.podView(
            pod(
                "  phase: Running\n  podIP: 10.244.0.7\n  conditions: [{type: Ready, status: 'True'}]\n"
                    + "  containerStatuses: [{name: regionserver, ready: true, restartCount: 0, image: x, imageID: x,"
                    + " state: {running: {startedAt: '2026-11-21T08:00:00Z'}}}]\n"),
            1,
            false,
            false,
            "regionserver",
            new Zone("hbase", "cluster.local").podName("rs-1", "hbase-regionserver"));
    assertThat(v.fqdn()).isEqualTo("rs-1.hbase-regionserver.hbase.svc.cluster.local");
    assertThat(v.ready()).isTrue();
    assertThat(v.stuck()).isNull();
    assertThat(v.revision()).isEqualTo("abc");
    assertThat(v.ip()).isEqualTo("10.244.0.7");
    assertThat(v.servesAs("rs-1.hbase-regionserver.hbase.svc.cluster.local")).isTrue();
    assertThat(v.servesAs("rs-10.hbase-regionserver.hbase.svc.cluster.local")).isFalse();
    assertThat(v.servesAs("rs-1.hbase-regionserver.other.svc.cluster.local")).isFalse();
    assertThat(v.servesAs("10.244.0.7")).isTrue();
  }

  @Test
  void aTerminatingPodSaysWhatStopsIt() {
    Pod evicted =
        pod(
            "  phase: Running\n  conditions: [{type: Ready, status: 'True'},"
                + " {type: DisruptionTarget, status: 'True', reason: EvictionByEvictionAPI}]\n");
    evicted.getMetadata().setDeletionTimestamp("2026-11-27T06:00:00Z");
    assertThat(Observer.podView(evicted, 1).stopCause()).isEqualTo("EvictionByEvictionAPI");
    Pod deleted = pod("  phase: Running\n  conditions: [{type: Ready, status: 'True'}]\n");
    deleted.getMetadata().setDeletionTimestamp("2026-11-27T06:00:00Z");
    assertThat(Observer.podView(deleted, 1).stopCause()).isEqualTo("Deleted");
    assertThat(Observer.podView(deleted, 1).terminating()).isTrue();
    Pod running = pod("  phase: Running\n  conditions: [{type: Ready, status: 'True'}]\n");
    assertThat(Observer.podView(running, 1).stopCause()).isNull();
  }

  @Test
  void crashLoopingPodIsStuck() {
    PodView v =
        Observer.podView(
            pod(
                "  phase: Running\n  conditions: [{type: Ready, status: 'False'}]\n"
                    + "  containerStatuses: [{name: regionserver, ready: false, restartCount: 4, image: x, imageID: x,"
                    + " state: {waiting: {reason: CrashLoopBackOff}}}]\n"),
            1);
    assertThat(v.ready()).isFalse();
    assertThat(v.stuck()).isEqualTo("CrashLoopBackOff");
  }

  @Test
  void startingContainerIsNotStuck() {
    PodView v =
        Observer.podView(
            pod(
                "  phase: Pending\n  containerStatuses: [{name: regionserver, ready: false, restartCount: 0, image: x, imageID: x,"
                    + " state: {waiting: {reason: ContainerCreating}}}]\n"),
            1);
    assertThat(v.stuck()).isNull();
    assertThat(v.ready()).isFalse();
  }

  @Test
  void unschedulablePodIsStuck() {
    PodView v =
        Observer.podView(
            pod(
                "  phase: Pending\n  conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]\n"),
            1);
    assertThat(v.stuck()).isEqualTo("Unschedulable");
  }

  @Test
  void terminatedOldInstanceIsTerminatingNotStuck() {
    // a clean SIGTERM stop exits 143 and shows phase Failed for a moment: not a failure
    Pod p =
        pod(
            "  phase: Failed\n  containerStatuses: [{name: regionserver, ready: false, restartCount: 0, image: x, imageID: x,"
                + " state: {terminated: {exitCode: 143, reason: Error}}}]\n");
    p.getMetadata().setDeletionTimestamp("2026-11-21T08:00:00Z");
    PodView v = Observer.podView(p, 1);
    assertThat(v.terminating()).isTrue();
    assertThat(v.stuck()).isNull();
  }

  @Test
  void podWithoutTheClaimVolumeOfATemplateIsFlagged() {
    // the StatefulSet controller's storageMatches: volume <template> on claim
    // <template>-<sts>-<ordinal>
    io.fabric8.kubernetes.api.model.apps.StatefulSet sts =
        Serialization.unmarshal(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: rs}\nspec:\n  volumeClaimTemplates: [{metadata: {name: bucketcache}}]\n",
            io.fabric8.kubernetes.api.model.apps.StatefulSet.class);
    Pod old = pod("  phase: Running\n");
    assertThat(Observer.missingClaimVolumes(sts, old, 1)).isTrue();
    Pod recreated = pod("  phase: Running\n");
    recreated
        .getSpec()
        .getVolumes()
        .add(
            new io.fabric8.kubernetes.api.model.VolumeBuilder()
                .withName("bucketcache")
                .withNewPersistentVolumeClaim()
                .withClaimName("bucketcache-rs-1")
                .endPersistentVolumeClaim()
                .build());
    assertThat(Observer.missingClaimVolumes(sts, recreated, 1)).isFalse();
    assertThat(Observer.missingClaimVolumes(sts, recreated, 2)).isTrue();
    sts.getSpec().setVolumeClaimTemplates(null);
    assertThat(Observer.missingClaimVolumes(sts, old, 1)).isFalse();
  }

  static io.fabric8.kubernetes.api.model.apps.StatefulSet sts(
      long generation, Long observed, String updateRevision) {
    return Serialization.unmarshal(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: rs\n  generation: "
            + generation
            + "\nspec: {}\nstatus:\n  replicas: 3\n"
            + (observed == null ? "" : "  observedGeneration: " + observed + "\n")
            + (updateRevision == null ? "" : "  updateRevision: " + updateRevision + "\n"),
        io.fabric8.kubernetes.api.model.apps.StatefulSet.class);
  }

  static Pod podAt(String controllerRevision) {
    Pod p = pod("  phase: Running\n");
    if (controllerRevision != null) {
      p.getMetadata().setLabels(java.util.Map.of("controller-revision-hash", controllerRevision));
    }
    return p;
  }

  @Test
  void aPodOnAnOlderTemplateThanTheStatefulSetsIsTemplateChanged() {
    assertThat(Observer.templateChanged(sts(4, 4L, "rs-7d9"), podAt("rs-5c4"))).isTrue();
    assertThat(Observer.templateChanged(sts(4, 4L, "rs-7d9"), podAt("rs-7d9"))).isFalse();
    assertThat(Observer.templateChanged(sts(5, 4L, "rs-7d9"), podAt("rs-5c4")))
        .as("the controller has not seen the latest template yet: unknown")
        .isFalse();
    assertThat(Observer.templateChanged(sts(4, 4L, null), podAt("rs-5c4"))).isFalse();
    assertThat(Observer.templateChanged(sts(4, 4L, "rs-7d9"), podAt(null))).isFalse();
    PodView v = Observer.podView(podAt("rs-5c4"), 1, false, true);
    assertThat(v.outdated("abc")).as("same revision, older template").isTrue();
    assertThat(Observer.podView(podAt("rs-7d9"), 1, false, false).outdated("abc")).isFalse();
    assertThat(Observer.podView(podAt("rs-7d9"), 1, false, false).outdated("def")).isTrue();
  }

  @Test
  void aContainerRestartedInThePodSaysWhenItStartedAgain() {
    PodView restarted =
        Observer.podView(
            pod(
                "  phase: Running\n  conditions: [{type: Ready, status: 'True'}]\n"
                    + "  containerStatuses: [{name: regionserver, ready: true, restartCount: 1, image: x, imageID: x,"
                    + " state: {running: {startedAt: '2026-11-28T15:00:07Z'}},"
                    + " lastState: {terminated: {exitCode: 137, reason: Error}}}]\n"),
            1);
    assertThat(restarted.restartedInPlaceAt()).hasToString("2026-11-28T15:00:07Z");
    PodView never =
        Observer.podView(
            pod(
                "  phase: Running\n  conditions: [{type: Ready, status: 'True'}]\n"
                    + "  containerStatuses: [{name: regionserver, ready: true, restartCount: 0, image: x, imageID: x,"
                    + " state: {running: {startedAt: '2026-11-28T15:00:07Z'}}}]\n"),
            1);
    assertThat(never.restartedInPlaceAt()).as("its first start").isNull();
    PodView waiting =
        Observer.podView(
            pod(
                "  phase: Running\n  conditions: [{type: Ready, status: 'False'}]\n"
                    + "  containerStatuses: [{name: regionserver, ready: false, restartCount: 3, image: x, imageID: x,"
                    + " state: {waiting: {reason: CrashLoopBackOff}}}]\n"),
            1);
    assertThat(waiting.restartedInPlaceAt()).as("not running again yet").isNull();
  }

  @Test
  void aSidecarsRestartIsNoRestartOfTheRegionServer() {
    // a metrics sidecar restarted, the RegionServer did not: nothing for the roller to look at
    Pod p =
        pod(
            "  phase: Running\n  conditions: [{type: Ready, status: 'True'}]\n"
                + "  containerStatuses: [{name: regionserver, ready: true, restartCount: 0, image: x, imageID: x,"
                + " state: {running: {startedAt: '2026-11-28T14:00:00Z'}}},"
                + " {name: exporter, ready: true, restartCount: 1, image: x, imageID: x,"
                + " state: {running: {startedAt: '2026-11-28T15:00:07Z'}},"
                + " lastState: {terminated: {exitCode: 137, reason: Error}}}]\n");
    assertThat(Observer.podView(p, 1, false, false, "regionserver").restartedInPlaceAt()).isNull();
    assertThat(Observer.podView(p, 1, false, false, "exporter").restartedInPlaceAt())
        .hasToString("2026-11-28T15:00:07Z");
  }

  @Test
  void aContainerThatKeepsDyingGivesNoRestartTime() {
    // its run before this one lasted 3 minutes, and it had restarted before that: regions sent
    // back to it would move again at its next death
    PodView looping =
        Observer.podView(
            pod(
                "  phase: Running\n  conditions: [{type: Ready, status: 'True'}]\n"
                    + "  containerStatuses: [{name: regionserver, ready: true, restartCount: 2, image: x, imageID: x,"
                    + " state: {running: {startedAt: '2026-11-28T15:03:07Z'}},"
                    + " lastState: {terminated: {exitCode: 137, reason: OOMKilled,"
                    + " startedAt: '2026-11-28T15:00:07Z', finishedAt: '2026-11-28T15:03:05Z'}}}]\n"),
            1);
    assertThat(looping.restartedInPlaceAt()).as("a crash loop").isNull();
    // the same second restart after a run of an hour is no loop
    PodView once =
        Observer.podView(
            pod(
                "  phase: Running\n  conditions: [{type: Ready, status: 'True'}]\n"
                    + "  containerStatuses: [{name: regionserver, ready: true, restartCount: 2, image: x, imageID: x,"
                    + " state: {running: {startedAt: '2026-11-28T16:00:07Z'}},"
                    + " lastState: {terminated: {exitCode: 137, reason: OOMKilled,"
                    + " startedAt: '2026-11-28T15:00:07Z', finishedAt: '2026-11-28T16:00:05Z'}}}]\n"),
            1);
    assertThat(once.restartedInPlaceAt()).hasToString("2026-11-28T16:00:07Z");
  }

  @Test
  void theKubeletsReportOfATerminatedRegionServerContainerIsItsLastTermination() {
    // killed and not started again yet: its current state
    PodView down =
        Observer.podView(
            pod(
                "  phase: Running\n  conditions: [{type: Ready, status: 'False'}]\n"
                    + "  containerStatuses: [{name: regionserver, ready: false, restartCount: 0, image: x, imageID: x,"
                    + " state: {terminated: {exitCode: 137, reason: OOMKilled,"
                    + " startedAt: '2026-11-28T15:00:07Z', finishedAt: '2026-11-28T15:03:05Z'}}}]\n"),
            1,
            false,
            false,
            "regionserver");
    assertThat(down.lastTermination().reason()).isEqualTo("OOMKilled");
    assertThat(down.lastTermination().exitCode()).isEqualTo(137);
    assertThat(down.lastTermination().startedAt()).hasToString("2026-11-28T15:00:07Z");
    assertThat(down.lastTermination().finishedAt()).hasToString("2026-11-28T15:03:05Z");
    // started again: its last state; and waiting in a back-off, the same
    for (String state :
        List.of(
            "state: {running: {startedAt: '2026-11-28T15:03:06Z'}}",
            "state: {waiting: {reason: CrashLoopBackOff}}")) {
      PodView again =
          Observer.podView(
              pod(
                  "  phase: Running\n  conditions: [{type: Ready, status: 'False'}]\n"
                      + "  containerStatuses: [{name: regionserver, ready: false, restartCount: 1, image: x, imageID: x, "
                      + state
                      + ", lastState: {terminated: {exitCode: 1, reason: Error,"
                      + " finishedAt: '2026-11-28T15:03:05Z'}}}]\n"),
              1,
              false,
              false,
              "regionserver");
      assertThat(again.lastTermination().reason()).as(state).isEqualTo("Error");
      assertThat(again.lastTermination().startedAt()).as(state).isNull();
      assertThat(again.lastTermination().finishedAt()).hasToString("2026-11-28T15:03:05Z");
    }
  }

  @Test
  void noTerminationWhileTheRegionServerRunsNorForASidecarNorWithoutTheContainersName() {
    // unready, even frozen: running is no termination
    Pod unready =
        pod(
            "  phase: Running\n  conditions: [{type: Ready, status: 'False'}]\n"
                + "  containerStatuses: [{name: regionserver, ready: false, restartCount: 0, image: x, imageID: x,"
                + " state: {running: {startedAt: '2026-11-28T14:00:00Z'}}}]\n");
    assertThat(Observer.podView(unready, 1, false, false, "regionserver").lastTermination())
        .isNull();
    Pod sidecarDied =
        pod(
            "  phase: Running\n  conditions: [{type: Ready, status: 'True'}]\n"
                + "  containerStatuses: [{name: regionserver, ready: true, restartCount: 0, image: x, imageID: x,"
                + " state: {running: {startedAt: '2026-11-28T14:00:00Z'}}},"
                + " {name: exporter, ready: true, restartCount: 1, image: x, imageID: x,"
                + " state: {running: {startedAt: '2026-11-28T15:00:07Z'}},"
                + " lastState: {terminated: {exitCode: 137, reason: OOMKilled,"
                + " finishedAt: '2026-11-28T15:00:05Z'}}}]\n");
    assertThat(Observer.podView(sidecarDied, 1, false, false, "regionserver").lastTermination())
        .as("a sidecar's death is not the RegionServer's")
        .isNull();
    assertThat(Observer.podView(sidecarDied, 1, false, false, null).lastTermination())
        .as("with no container named, no termination at all: it could be a sidecar's")
        .isNull();
    assertThat(Observer.podView(sidecarDied, 1, false, false, "exporter").lastTermination())
        .isNotNull();
  }
}
