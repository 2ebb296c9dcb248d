package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.controller.StopDeadlines.Due;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.render.PodHooks;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Which stopping pods get their RegionServer stopped through HBase, and when: the warm stop's hold
 * must not eat the time HBase needs for its own stop, whatever grace period the stop was given.
 */
class StopDeadlinesTest {
  static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

  /** HBase's own shutdown time, as the planner gives it (its minimum). */
  static final Duration SHUTDOWN = Duration.ofSeconds(120);

  final SimulatedHBase hbase = new SimulatedHBase(() -> NOW.minusSeconds(60));
  final Map<String, Pod> pods = new java.util.HashMap<>();
  final List<PodView> views = new ArrayList<>();

  StopDeadlinesTest() {
    hbase.reportDelay = Duration.ZERO;
  }

  /** A RegionServer pod with the operator's warm stop, serving {@code regions}. */
  PodBuilder pod(String name, int regions) {
    List<String> r = new ArrayList<>();
    for (int i = 0; i < regions; i++) {
      r.add(name + "-r" + i);
    }
    hbase.register(name, name + ".rs.ns.svc.cluster.local", "10.0.0." + (10 + views.size()), r);
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withUid(name + "-uid")
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("regionserver")
        .withNewLifecycle()
        .withNewPreStop()
        .withNewExec()
        .withCommand("bash", "-c", "...", PodHooks.WARM_STOP, "16030", "90", "20")
        .endExec()
        .endPreStop()
        .endLifecycle()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPodIP("10.0.0." + (10 + views.size()))
        .endStatus();
  }

  void add(Pod p) {
    pods.put(p.getMetadata().getName(), p);
    // its DNS name in the policy's namespace: how its RegionServer is known to be its (OwnCluster)
    views.add(
        Observer.podView(
            p,
            views.size(),
            false,
            false,
            null,
            p.getMetadata().getName() + ".rs.ns.svc.cluster.local"));
  }

  /** Deleted {@code before} ago with this grace period: its deletionTimestamp is the SIGKILL. */
  static PodBuilder deleted(PodBuilder b, Duration grace, Duration before) {
    return b.editMetadata()
        .withDeletionTimestamp(NOW.minus(before).plus(grace).toString())
        .withDeletionGracePeriodSeconds(grace.toSeconds())
        .endMetadata();
  }

  static PodBuilder byKubelet(PodBuilder b) {
    return b.editStatus()
        .addNewCondition()
        .withType("DisruptionTarget")
        .withStatus("True")
        .withReason("TerminationByKubelet")
        .endCondition()
        .endStatus();
  }

  Due due(Set<String> released) {
    return due(hbase.snapshot(), released);
  }

  Due due(ClusterSnapshot snapshot, Set<String> released) {
    return StopDeadlines.due(
        views,
        name -> Optional.ofNullable(pods.get(name)),
        "regionserver",
        snapshot,
        SHUTDOWN,
        NOW,
        released);
  }

  @Test
  void aGracePeriodShorterThanHBasesOwnTimeStopsTheRegionServerAtOnce() {
    // kubectl delete --grace-period=30: the hook would hold up to 90 s, HBase needs 120
    add(deleted(pod("rs-0", 3), Duration.ofSeconds(30), Duration.ofSeconds(1)).build());
    Due d = due(Set.of());
    assertThat(d.now()).singleElement();
    assertThat(d.now().get(0).pod()).isEqualTo("rs-0");
    assertThat(d.now().get(0).regions()).isEqualTo(3);
    assertThat(d.now().get(0).left()).isEqualTo(Duration.ofSeconds(29));
    assertThat(d.next()).isNull();
    assertThat(StopDeadlines.message(d.now().get(0), SHUTDOWN))
        .contains("SIGKILL is due in 29 s")
        .contains("HBase's own 120 s")
        .contains("with 3 regions still on it");
  }

  @Test
  void thePodsOwnGracePeriodLetsTheHookHoldUntilHBasesTimeIsLeft() {
    // the rendered grace period: HBase's 120 s plus the hook's 90 s
    add(deleted(pod("rs-0", 3), Duration.ofSeconds(210), Duration.ofSeconds(10)).build());
    Due d = due(Set.of());
    assertThat(d.now()).isEmpty();
    assertThat(d.next()).as("210 - 120 - 5 - 10").isEqualTo(Duration.ofSeconds(75));
    // 76 s later: due, 5 s before the hook's own bound would let it go
    add(deleted(pod("rs-1", 2), Duration.ofSeconds(210), Duration.ofSeconds(86)).build());
    assertThat(due(Set.of()).now()).extracting(StopDeadlines.Release::pod).containsExactly("rs-1");
  }

  @Test
  void aStopOfTheKubeletsOwnShowsNoDeadlineAndIsReleasedAtOnce() {
    add(byKubelet(pod("rs-0", 2)).build());
    Due d = due(Set.of());
    assertThat(d.now()).singleElement().satisfies(r -> assertThat(r.left()).isNull());
    assertThat(StopDeadlines.message(d.now().get(0), SHUTDOWN)).contains("TerminationByKubelet");
  }

  @Test
  void nothingForPodsThatDoNotStopOrDoNotRunTheWarmStop() {
    add(pod("rs-0", 2).build()); // running
    Pod own =
        deleted(pod("rs-1", 2), Duration.ofSeconds(10), Duration.ZERO)
            .editSpec()
            .editFirstContainer()
            .editLifecycle()
            .editPreStop()
            .editExec()
            .withCommand("/hbase/bin/graceful_stop.sh")
            .endExec()
            .endPreStop()
            .endLifecycle()
            .endContainer()
            .endSpec()
            .build();
    add(own); // the template's own preStop: its timing is its own
    PodBuilder gone = deleted(pod("rs-2", 1), Duration.ofSeconds(10), Duration.ZERO);
    hbase.unregister("rs-2"); // its RegionServer has stopped already
    add(gone.build());
    assertThat(due(Set.of()).now()).isEmpty();
  }

  @Test
  void oncePerPodAndNothingWhileHBaseIsUnreachable() {
    add(deleted(pod("rs-0", 3), Duration.ofSeconds(30), Duration.ZERO).build());
    assertThat(due(Set.of("rs-0-uid")).now()).isEmpty();
    assertThat(due(ClusterSnapshot.unreachable(NOW, "down"), Set.of()).now()).isEmpty();
  }

  @Test
  void theReleaseStopsTheServerThroughHBaseOnceAndNotWithoutTheLease() {
    add(deleted(pod("rs-0", 3), Duration.ofSeconds(30), Duration.ZERO).build());
    add(deleted(pod("rs-1", 3), Duration.ofSeconds(30), Duration.ZERO).build());
    BlockCachePolicy policy =
        Serialization.unmarshal(
            "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata:\n  name: p\n"
                + "  namespace: ns\n  uid: u\nspec:\n  targetRef:\n    name: rs\n"
                + "  hbaseSiteConfigMap: hbase-site\n",
            BlockCachePolicy.class);
    boolean[] leading = {false};
    StopDeadlines deadlines = new StopDeadlines(new Events(Clock.systemUTC()), () -> leading[0]);
    Runnable release =
        () ->
            deadlines.release(
                null,
                policy,
                views,
                name -> Optional.ofNullable(pods.get(name)),
                "regionserver",
                hbase.snapshot(),
                () -> hbase,
                SHUTDOWN,
                NOW);
    release.run();
    assertThat(hbase.stopped).as("an operator that does not lead stops nothing").isEmpty();
    leading[0] = true;
    var rs0 = hbase.servers.get("rs-0").id;
    var rs1 = hbase.servers.get("rs-1").id;
    release.run();
    assertThat(hbase.stopped).containsExactlyInAnyOrder(rs0, rs1);
    hbase.register("rs-0", "rs-0.rs.ns.svc.cluster.local", "10.0.0.10", List.of()); // still up
    release.run();
    assertThat(hbase.stopped).as("once per pod").hasSize(2);
  }
}
