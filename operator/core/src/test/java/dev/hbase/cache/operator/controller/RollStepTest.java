package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.connection.HBaseClusters;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.metrics.MetricsCollector;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.RollModel.DeletePod;
import dev.hbase.cache.operator.roll.RollModel.SwitchBalancer;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The roll's pod delete on a real API server. The roller decides on the pod the informer showed;
 * the delete goes without reading the pod again, conditional on that version, so that neither a pod
 * changed since nor a successor with the same name is deleted.
 */
@EnableKubeAPIServer
class RollStepTest {
  static KubernetesClient client;

  final AtomicReference<Pod> informer = new AtomicReference<>();
  final AtomicBoolean leading = new AtomicBoolean(true);
  final RollStep step =
      new RollStep(
          new HBaseClusters((settings, login) -> null),
          new MetricsCollector(),
          new Events(Clock.systemUTC()),
          leading::get);
  final Function<ResourceID, Optional<Pod>> cachedPod = id -> Optional.ofNullable(informer.get());

  static BlockCachePolicy policy() {
    BlockCachePolicy p = new BlockCachePolicy();
    p.setMetadata(
        new ObjectMetaBuilder().withName("p").withNamespace("default").withUid("uid-p").build());
    return p;
  }

  static Pod create(String name) {
    return client
        .pods()
        .inNamespace("default")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("rs")
                .withImage("hbase")
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  static Pod live(String name) {
    return client.pods().inNamespace("default").withName(name).get();
  }

  /**
   * A restarted pod at the warm gate is asked for its cache as soon as its new RegionServer has
   * registered, before its readiness probe passes; a pod still starting is not asked.
   */
  @Test
  void aPodAtTheWarmGateIsAskedBeforeItIsReady() {
    List<RollModel.PodView> pods =
        List.of(
            new RollModel.PodView(
                "rs-0", "u0", 0, "rev", true, false, null, "10.0.0.1", false, false),
            new RollModel.PodView(
                "rs-1", "u1", 1, "rev", false, false, null, "10.0.0.2", false, false),
            new RollModel.PodView(
                "rs-2", "u2", 2, "rev", false, false, null, "10.0.0.3", false, false));
    var o = new Observation.Observed(policy(), null, null, null, null, pods, List.of());
    var previous =
        new dev.hbase.cache.api.v1alpha1.status.RolloutStatus()
            .setInFlight(
                new java.util.ArrayList<>(
                    List.of(
                        new dev.hbase.cache.api.v1alpha1.status.PodRoll()
                            .setPod("rs-1")
                            .setStep(dev.hbase.cache.api.v1alpha1.status.PodRoll.Step.WarmGate)
                            .setNewServer("rs-1.x,16020,2"),
                        new dev.hbase.cache.api.v1alpha1.status.PodRoll()
                            .setPod("rs-2")
                            .setStep(
                                dev.hbase.cache.api.v1alpha1.status.PodRoll.Step.WaitingReady))));
    var hbase =
        dev.hbase.cache.operator.hbase.ClusterSnapshot.unreachable(java.time.Instant.now(), "-");
    assertThat(RollStep.serving(o, hbase, previous))
        .extracting(RollModel.PodView::name)
        .containsExactly("rs-0", "rs-1");
    assertThat(RollStep.serving(o, hbase, null))
        .extracting(RollModel.PodView::name)
        .containsExactly("rs-0");
  }

  @Test
  void deletesThePodAsTheInformerShowedIt() {
    Pod pod = create("rs-0");
    informer.set(pod);

    assertThat(
            step.execute(
                client, policy(), cachedPod, null, new DeletePod("rs-0", uid(pod)), x -> {}))
        .isTrue();
    assertThat(live("rs-0")).as("an unscheduled pod goes at once").isNull();
  }

  @Test
  void aPodChangedSinceTheInformerShowedItIsNotDeleted() {
    Pod seen = create("rs-1");
    client
        .pods()
        .inNamespace("default")
        .withName("rs-1")
        .edit(p -> new PodBuilder(p).editMetadata().addToLabels("x", "y").endMetadata().build());
    informer.set(seen); // the informer has not caught up yet

    assertThat(
            step.execute(
                client, policy(), cachedPod, null, new DeletePod("rs-1", uid(seen)), x -> {}))
        .as("not done: decided again on the changed pod")
        .isFalse();
    assertThat(live("rs-1")).isNotNull();
  }

  @Test
  void aSuccessorWithTheSameNameIsNotDeleted() {
    Pod old = create("rs-2");
    client.pods().inNamespace("default").withName("rs-2").delete();
    Pod successor = create("rs-2");
    informer.set(old); // still the old instance in the informer

    assertThat(
            step.execute(
                client, policy(), cachedPod, null, new DeletePod("rs-2", uid(old)), x -> {}))
        .isFalse();
    assertThat(live("rs-2")).extracting(RollStepTest::uid).isEqualTo(uid(successor));

    informer.set(successor); // the informer caught up: the roll recorded the old instance's UID
    assertThat(
            step.execute(
                client, policy(), cachedPod, null, new DeletePod("rs-2", uid(old)), x -> {}))
        .isTrue();
    assertThat(live("rs-2")).extracting(RollStepTest::uid).isEqualTo(uid(successor));
  }

  @Test
  void anOperatorThatLostItsLeaderLeaseSendsNothing() throws Exception {
    Pod pod = create("rs-3");
    informer.set(pod);
    SimulatedHBase hbase = new SimulatedHBase(java.time.Instant::now);
    BlockCachePolicy fenced = policy();
    fenced.getMetadata().setName("fenced");
    leading.set(false); // lost between the roller's decision and its actions

    assertThat(
            step.execute(
                client, fenced, cachedPod, hbase, new DeletePod("rs-3", uid(pod)), x -> {}))
        .isFalse();
    assertThat(live("rs-3")).as("the pod is not deleted").isNotNull();
    assertThat(step.execute(client, fenced, cachedPod, hbase, new SwitchBalancer(false), x -> {}))
        .isFalse();
    assertThat(hbase.balancerOn).as("HBase's balancer not switched").isTrue();
    assertThat(client.v1().events().inNamespace("default").list().getItems())
        .as("no event either")
        .noneMatch(e -> "fenced".equals(e.getInvolvedObject().getName()));

    leading.set(true); // the same instance leading again (a test only: a real one exits)
    assertThat(step.execute(client, fenced, cachedPod, hbase, new SwitchBalancer(false), x -> {}))
        .isTrue();
    assertThat(hbase.balancerOn).isFalse();
  }

  @Test
  void aDecisionIsNotActedOnOnceItIsOlderThanAMinute() {
    SimulatedHBase hbase = new SimulatedHBase(java.time.Instant::now);
    // each look at the clock: 40 s later (a master answering slowly)
    AtomicLong clock = new AtomicLong();
    RollStep slow =
        new RollStep(
            new HBaseClusters((settings, login) -> null),
            new MetricsCollector(),
            new Events(Clock.systemUTC()),
            () -> true,
            () -> clock.addAndGet(Duration.ofSeconds(40).toNanos()));

    assertThat(
            slow.executeAll(
                client,
                policy(),
                cachedPod,
                hbase,
                List.of(
                    new SwitchBalancer(false), new SwitchBalancer(true), new SwitchBalancer(false)),
                0))
        .as("not all done: the third action would have started 80 s after the decision")
        .isFalse();
    assertThat(hbase.balancerOn).as("the first two actions went out, not the third").isTrue();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(client.v1().events().inNamespace("default").list().getItems())
                    .as("an ActionFailed event says what was not sent")
                    .anyMatch(
                        e ->
                            "ActionFailed".equals(e.getReason())
                                && e.getMessage().contains("decided more than 60 s before")));
  }

  @Test
  void anActionHBaseRefusesForWantOfAPermissionSaysAccessDenied() {
    SimulatedHBase hbase = new SimulatedHBase(java.time.Instant::now);
    hbase.adminDenied = true;
    AtomicReference<String> refused = new AtomicReference<>();
    BlockCachePolicy p = policy();
    p.getMetadata().setName("refused");
    assertThat(
            step.executeAll(
                client,
                p,
                cachedPod,
                hbase,
                List.of(new SwitchBalancer(false)),
                System.nanoTime(),
                refused::set))
        .as("not done")
        .isFalse();
    assertThat(refused.get())
        .as("the refusal, for the Degraded condition")
        .contains("refused by HBase", "'RA'", "action=ADMIN");
    assertThat(hbase.balancerOn).as("nothing switched").isTrue();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(
                        client.v1().events().inNamespace("default").list().getItems().stream()
                            .filter(e -> "refused".equals(e.getInvolvedObject().getName()))
                            .toList())
                    .as("an AccessDenied event, not ActionFailed")
                    .singleElement()
                    .satisfies(e -> assertThat(e.getReason()).isEqualTo("AccessDenied")));
  }

  @Test
  void aMasterOfAnotherLineThanThePolicysGivesAWarning() {
    BlockCachePolicy p = policy();
    p.getMetadata().setName("line");
    p.setSpec(new dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec()); // planned for 2.6
    java.time.Instant now = java.time.Instant.now();
    var same =
        new dev.hbase.cache.operator.hbase.ClusterSnapshot(
            now, true, null, List.of(), List.of(), 0, null, List.of(), true, Map.of(), "2.6.4");
    var other =
        new dev.hbase.cache.operator.hbase.ClusterSnapshot(
            now, true, null, List.of(), List.of(), 0, null, List.of(), true, Map.of(), "2.5.13");
    step.checkLine(client, p, same);
    step.checkLine(client, p, other);
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(
                        client.v1().events().inNamespace("default").list().getItems().stream()
                            .filter(e -> "line".equals(e.getInvolvedObject().getName()))
                            .toList())
                    .singleElement()
                    .satisfies(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("HBaseVersionMismatch");
                          assertThat(e.getType()).isEqualTo("Warning");
                          assertThat(e.getMessage())
                              .contains("the HMaster reports HBase 2.5.13")
                              .contains("set spec.hbase.version to 2.5");
                        }));
  }

  static String uid(Pod p) {
    return p.getMetadata().getUid();
  }
}
