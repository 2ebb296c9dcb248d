package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static dev.hbase.cache.e2e.Cluster.condition;
import static dev.hbase.cache.e2e.Cluster.isTrue;
import static dev.hbase.cache.e2e.RollObserver.ROLL_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.JvmSpec;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Steps 12-14 (tags {@code refusals}, {@code fault}): what the operator refuses or cannot roll: a
 * second policy on the same StatefulSet, a policy that cannot be planned, a pod that cannot start.
 */
@Tag("refusals")
@Tag("fault")
class PolicyRefusalScenarios extends FaultScenario {
  /**
   * Its start: the suite's operator and policy as created (step 13 reverts to its 640Mi and expects
   * no roll), the reader, HBase given back.
   */
  @Override
  List<Need> needs() {
    return List.of(
        Needs.HBASE_UP, Needs.SUITE_OPERATOR, Needs.suitePolicy(), Needs.READER, Needs.GIVEN_BACK);
  }

  @Test
  @Order(1)
  void aSecondPolicyOnTheSameStatefulSetIsRefusedAndTouchesNothing() {
    step(
        "12. a second policy on the same StatefulSet: Valid=False reason Conflict, nothing touched",
        () -> {
          StatefulSet sts = cluster.regionServers();
          Map<Integer, String> uids = cluster.podUids();
          BlockCachePolicy second = Serialization.clone(cluster.policy());
          second.setMetadata(
              new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
                  .withName("second")
                  .withNamespace(cluster.ns)
                  .build());
          second.setStatus(null);
          second.getSpec().getTuning().setWriterThreads(3);
          client.resource(second).create();
          try {
            AtomicReference<Condition> valid = new AtomicReference<>();
            await("policy second: Valid=False")
                .atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofSeconds(1))
                .until(
                    () -> {
                      BlockCachePolicy p =
                          client
                              .resources(BlockCachePolicy.class)
                              .inNamespace(cluster.ns)
                              .withName("second")
                              .get();
                      Condition v =
                          p == null || p.getStatus() == null ? null : condition(p, "Valid");
                      valid.set(v);
                      return v != null && "False".equals(v.getStatus());
                    });
            report.line(
                "- policy `second` (same targetRef, writerThreads 3): Valid=False reason %s: %s",
                valid.get().getReason(), valid.get().getMessage());
            assertThat(valid.get().getReason()).isEqualTo("Conflict");
            assertThat(valid.get().getMessage()).contains(Cluster.POLICY);
            nothingChangesFor(
                "the second policy leaves the StatefulSet and the pods alone",
                Duration.ofSeconds(20),
                () ->
                    !Objects.equals(
                            cluster.regionServers().getMetadata().getGeneration(),
                            sts.getMetadata().getGeneration())
                        ? "StatefulSet spec changed"
                        : !cluster.podUids().equals(uids)
                            ? "pods restarted"
                            : client
                                        .configMaps()
                                        .inNamespace(cluster.ns)
                                        .withName("second-rs-site")
                                        .get()
                                    != null
                                ? "a ConfigMap second-rs-site"
                                : client
                                            .policy()
                                            .v1()
                                            .podDisruptionBudget()
                                            .inNamespace(cluster.ns)
                                            .withName("second-regionservers")
                                            .get()
                                        != null
                                    ? "a PodDisruptionBudget second-regionservers"
                                    : null);
            assertThat(isTrue(cluster.policy(), "Ready"))
                .as("the first policy stays Ready")
                .isTrue();
            summary.add(
                "second policy on the StatefulSet: Valid=False/Conflict naming "
                    + Cluster.POLICY
                    + ", nothing touched");
          } finally {
            client
                .resources(BlockCachePolicy.class)
                .inNamespace(cluster.ns)
                .withName("second")
                .delete();
          }
        });
  }

  @Test
  @Order(2)
  void aPolicyThatCannotBePlannedChangesNothing() {
    step(
        "13. a policy that cannot be planned changes nothing",
        () -> {
          StatefulSet sts = cluster.regionServers();
          String cmRv = cluster.derivedConfigMap().getMetadata().getResourceVersion();
          Map<Integer, String> uids = cluster.podUids();
          watch.reset();
          Instant t0 = Instant.now();
          cluster.editPolicy(x -> x.getSpec().getMemory().setBucketCache(new Quantity("64Gi")));
          AtomicReference<Condition> valid = new AtomicReference<>();
          await("Valid=False")
              .atMost(Duration.ofMinutes(3))
              .pollInterval(Duration.ofSeconds(1))
              .until(
                  () -> {
                    BlockCachePolicy p = cluster.policy();
                    Condition v = condition(p, "Valid");
                    valid.set(v);
                    return v != null
                        && "False".equals(v.getStatus())
                        && Objects.equals(
                            v.getObservedGeneration(), p.getMetadata().getGeneration());
                  });
          report.line(
              "- memory.bucketCache 640Mi -> 64Gi (storage.size 2Gi): Valid=False after %d s, reason %s: %s",
              Duration.between(t0, Instant.now()).toSeconds(),
              valid.get().getReason(),
              valid.get().getMessage());
          assertThat(valid.get().getReason()).isEqualTo("PlanRefused");
          nothingChangesFor(
              "the refused policy leaves the StatefulSet, the derived ConfigMap and the pods alone",
              NOTHING_CHANGES,
              () ->
                  !cluster
                          .regionServers()
                          .getMetadata()
                          .getResourceVersion()
                          .equals(sts.getMetadata().getResourceVersion())
                      ? "StatefulSet changed"
                      : !cluster.derivedConfigMap().getMetadata().getResourceVersion().equals(cmRv)
                          ? "derived ConfigMap changed"
                          : !cluster.podUids().equals(uids)
                              ? "pods restarted"
                              : watch.maxDown() > 0 ? "a RegionServer went down" : null);
          StatefulSet after = cluster.regionServers();
          String cmRvAfter = cluster.derivedConfigMap().getMetadata().getResourceVersion();
          report.line(
              "- %d s later: StatefulSet resourceVersion %s -> %s, generation %d -> %d; derived ConfigMap resourceVersion %s -> %s; pods restarted: %s",
              NOTHING_CHANGES.toSeconds(),
              sts.getMetadata().getResourceVersion(),
              after.getMetadata().getResourceVersion(),
              sts.getMetadata().getGeneration(),
              after.getMetadata().getGeneration(),
              cmRv,
              cmRvAfter,
              !cluster.podUids().equals(uids));
          assertThat(after.getMetadata().getResourceVersion())
              .as("StatefulSet resourceVersion")
              .isEqualTo(sts.getMetadata().getResourceVersion());
          assertThat(cmRvAfter).as("derived ConfigMap resourceVersion").isEqualTo(cmRv);
          assertThat(cluster.podUids()).as("pod UIDs").isEqualTo(uids);
          assertThat(watch.maxDown()).as("RegionServers down while refused").isZero();

          // back to the valid spec: same revision, so nothing rolls
          Instant t1 = Instant.now();
          cluster.editPolicy(x -> x.getSpec().getMemory().setBucketCache(new Quantity("640Mi")));
          await("Valid=True, Ready=True again")
              .atMost(Duration.ofMinutes(3))
              .pollInterval(Duration.ofSeconds(1))
              .until(
                  () -> {
                    BlockCachePolicy p = cluster.policy();
                    return isTrue(p, "Valid")
                        && isTrue(p, "Ready")
                        && Objects.equals(
                            condition(p, "Valid").getObservedGeneration(),
                            p.getMetadata().getGeneration());
                  });
          nothingChangesFor(
              "no pod restarts after the revert",
              NO_ROLL_AFTER_REVERT,
              () -> cluster.podUids().equals(uids) ? null : "pods restarted");
          report.line(
              "- reverted to 640Mi: Valid=True, Ready=True after %d s; no pod restarted (%s)",
              Duration.between(t1, Instant.now()).toSeconds(), cluster.podUids().equals(uids));
          assertThat(cluster.podUids()).as("pod UIDs after the revert").isEqualTo(uids);
          summary.add(
              "refused policy: Valid=False/PlanRefused, StatefulSet resourceVersion and pods unchanged, revert rolled nothing");
        });
  }

  @Test
  @Order(3)
  void aPodThatCannotStartBlocksTheRollUntilTheSpecIsReverted() {
    step(
        "14. a pod that cannot start blocks the roll (Degraded); reverting recovers",
        () -> {
          Map<Integer, String> uids = cluster.podUids();
          String oldRevision = cluster.revision();
          watch.reset();
          Instant t0 = Instant.now();
          cluster.editPolicy(
              x -> {
                x.getSpec().setJvm(new JvmSpec().setExtraOptions(List.of("-Xss1k")));
                x.getSpec().getRollout().setPodReadyTimeout("30s");
              });
          AtomicReference<BlockCachePolicy> blocked = new AtomicReference<>();
          await("phase Blocked, Degraded=True")
              .atMost(Duration.ofMinutes(10))
              .pollInterval(Duration.ofSeconds(2))
              .until(
                  () -> {
                    BlockCachePolicy p = cluster.policy();
                    blocked.set(p);
                    return p.getStatus().getRollout() != null
                        && p.getStatus().getRollout().getPhase() == RolloutStatus.Phase.Blocked
                        && isTrue(p, "Degraded");
                  });
          long toBlock = Duration.between(t0, Instant.now()).toSeconds();
          Condition degraded = condition(blocked.get(), "Degraded");
          report.line(
              "- jvm.extraOptions [-Xss1k] (allowed, but below the JVM's minimum stack: the JVM does not start), podReadyTimeout 30s: Blocked after %d s; Degraded=True %s: %s",
              toBlock, degraded.getReason(), degraded.getMessage());
          List<Event> ev = cluster.policyEvents(Set.of("RollBlocked"), l -> !l.isEmpty());
          assertThat(ev).as("RollBlocked event").isNotEmpty();
          report.line("- event RollBlocked: %s", ev.get(ev.size() - 1).getMessage());
          nothingChangesFor(
              "no pod but the broken one touched while Blocked",
              BLOCKED_HOLDS,
              () ->
                  restarted(watch.uids()) > 1
                      ? "another pod restarted"
                      : watch.maxDown() > 1 ? "two RegionServers down at once" : null);
          Map<Integer, Set<String>> seen = watch.uids();
          long restarted = restarted(seen);
          report.line(
              "- %d s later: phase %s; pods restarted since the change: %d (UIDs per ordinal %s)",
              BLOCKED_HOLDS.toSeconds(),
              cluster.policy().getStatus().getRollout().getPhase(),
              restarted,
              sizes(seen));
          assertThat(restarted).as("only the broken pod was restarted").isEqualTo(1);
          assertThat(cluster.policy().getStatus().getRollout().getPhase())
              .isEqualTo(RolloutStatus.Phase.Blocked);
          assertThat(watch.maxDown()).as("RegionServers down at once").isLessThanOrEqualTo(1);

          Instant t1 = Instant.now();
          cluster.editPolicy(
              x -> {
                x.getSpec().setJvm(null);
                x.getSpec().getRollout().setPodReadyTimeout("10m");
              });
          BlockCachePolicy done = cluster.awaitRollDone("recovery", null, ROLL_TIMEOUT);
          long toRecover = Duration.between(t1, Instant.now()).toSeconds();
          assertThat(done.getStatus().getRollout().getRevision())
              .as("back to the old revision")
              .isEqualTo(oldRevision);
          assertThat(isTrue(done, "Degraded")).as("Degraded").isFalse();
          Map<Integer, String> now = cluster.podUids();
          int changed = 0;
          for (int i = 0; i < REPLICAS; i++) {
            if (!now.get(i).equals(uids.get(i))) {
              changed++;
            }
          }
          report.line(
              "- reverted: Idle, Ready=True, Degraded=False after %d s; pods with a new UID: %d (the broken one); max down at once %d",
              toRecover, changed, watch.maxDown());
          assertThat(changed).isEqualTo(1);
          assertThat(watch.maxDown()).isLessThanOrEqualTo(1);
          Workload.Stats s = Workload.stats(workload.log(READER), t0, Instant.now());
          report.line("- reader from the bad change to recovery: %s", s.summary());
          summary.add(
              String.format(
                  "bad JVM flag: Blocked + Degraded after %d s, 1 pod touched; revert recovered in %d s; reads failed: %d",
                  toBlock, toRecover, s.fail()));
        });
  }
}
