package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.BlockCacheOperator;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What stops or holds a roll on a real API server: a pod that never gets Ready, a policy made
 * invalid mid-roll, the policy deleted mid-roll, an identity HBase refuses the roll's actions, and
 * a plan that cannot work refused before it touches anything. (Who takes a roll over:
 * RollTakeoverIT.)
 */
@EnableKubeAPIServer
class RollFaultsIT extends OperatorHarness {
  @Test
  void aPodThatNeverGetsReadyBlocksTheRoll() {
    cluster("4Gi", false);
    kube.neverReady.add("rs-1"); // first in line: fewest regions
    operator(null);
    policy("blocked", "  mode: Lru\n  rollout:\n    podReadyTimeout: 30s\n");
    await().atMost(Duration.ofSeconds(90)).until(() -> condition("blocked", "Degraded", "True"));
    BlockCachePolicy p = get("blocked");
    assertThat(p.getStatus().getRollout().getPhase()).isEqualTo(Phase.Blocked);
    assertThat(p.getStatus().getRollout().getMessage()).contains("rs-1").contains("not Ready");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e -> "RollBlocked".equals(e.getReason()) && e.getMessage().contains("rs-1")));
    await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(8)).until(() -> true);
    assertThat(kube.deletes).containsExactly("rs-1");

    // the cause goes away: the roll finishes
    kube.neverReady.clear();
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("blocked"));
    assertThat(condition("blocked", "Degraded", "False")).isTrue();
    assertThat(kube.deleteCount)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
  }

  @Test
  void aPolicyMadeInvalidMidRollGivesTheBalancerBackAndTheRollResumesWhenValid() {
    firstPodRestarting("held");
    assertThat(hbase.balancerOn).isFalse();
    mergePatch("held", "{\"spec\":{\"memory\":{\"heap\":\"64Gi\"}}}");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                condition("held", "Valid", "False")
                    && condition("held", "Degraded", "True")
                    && hbase.balancerOn);
    BlockCachePolicy held = get("held");
    assertThat(held.getStatus().getRollout().getPhase()).isEqualTo(Phase.Blocked);
    assertThat(held.getStatus().getRollout().getMessage()).contains("held while the policy");
    eventually(() -> assertThat(events()).anyMatch(e -> "RollHeld".equals(e.getReason())));
    await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(15)).until(() -> true);
    assertThat(kube.deletes).as("nothing restarted while invalid").hasSize(1);
    assertThat(hbase.balancerOn).as("the balancer stays as it was before the roll").isTrue();

    mergePatch("held", "{\"spec\":{\"memory\":{\"heap\":null}}}");
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("held"));
    assertThat(kube.deletes).as("each pod restarted once").hasSize(3);
    assertThat(hbase.balancerOn).isTrue();
    assertThat(hbase.snapshot().live()).noneMatch(x -> x.decommissioned());
    assertThat(condition("held", "Degraded", "False")).isTrue();
  }

  @Test
  void deletingThePolicyMidRollRestoresTheBalancerAndClearsMarks() {
    firstPodRestarting("gone");
    assertThat(hbase.balancerOn).isFalse();
    assertThat(hbase.marks()).hasSize(1);
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("gone").delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> get("gone") == null);
    assertThat(hbase.balancerOn).isTrue();
    assertThat(sts()).isNotNull();
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> true);
    assertThat(kube.deletes).hasSize(1); // nothing restarted after the delete
    // the restarting pod came back unmarked; only its dead instance may keep a mark
    await().atMost(Duration.ofSeconds(20)).until(() -> hbase.registered("rs-1"));
    assertThat(hbase.snapshot().live()).noneMatch(x -> x.decommissioned());
  }

  @Test
  void anObjectNotOwnedMidRollGivesTheBalancerBackAndTheRollResumesOnceItIs() {
    firstPodRestarting("taken");
    assertThat(hbase.balancerOn).isFalse();
    // someone else's data in the derived ConfigMap: the operator no longer owns it
    derivedBinaryData("taken", Map.of("theirs", "AA=="));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> condition("taken", "Degraded", "True") && hbase.balancerOn);
    assertThat(get("taken").getStatus().getConditions())
        .anyMatch(x -> "Degraded".equals(x.getType()) && "ObjectNotOwned".equals(x.getReason()));
    await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(15)).until(() -> true);
    assertThat(kube.deletes).as("nothing restarted while not owned").hasSize(1);
    assertThat(hbase.balancerOn).as("held: the balancer as it was before the roll").isTrue();

    derivedBinaryData("taken", null);
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("taken"));
    assertThat(kube.deletes).as("each pod restarted once").hasSize(3);
    assertThat(hbase.balancerOn).isTrue();
    assertThat(hbase.snapshot().live()).noneMatch(x -> x.decommissioned());
  }

  @Test
  void aPolicyDeletedWhileTheMasterIsAwayStaysUntilHBaseIsGivenBack() {
    firstPodRestarting("owed");
    assertThat(hbase.balancerOn).isFalse();
    hbase.masterReachable = false; // the HMaster failing over, scaled to 0
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("owed").delete();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> condition("owed", "GiveBackPending", "True"));
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "GiveBackPending".equals(e.getReason())
                            && e.getMessage().contains("cache.hbase.dev/abandon-give-back")));
    // every update of a deleting policy runs its cleanup: the give-back is still tried at most
    // once per 30 s (each try asks the master for a snapshot)
    int callsBefore = hbase.snapshots;
    for (int i = 0; i < 5; i++) {
      mergePatch("owed", "{\"metadata\":{\"annotations\":{\"touched\":\"" + i + "\"}}}");
      await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> true);
    }
    assertThat(hbase.snapshots - callsBefore)
        .as("give-back tries in 10 s of five updates")
        .isLessThanOrEqualTo(2);
    assertThat(get("owed")).as("kept while HBase is owed its balancer").isNotNull();
    assertThat(hbase.balancerOn).isFalse();

    hbase.masterReachable = true;
    await().atMost(Duration.ofSeconds(90)).until(() -> get("owed") == null);
    assertThat(hbase.balancerOn).as("given back before the finalizer went").isTrue();
    await().atMost(Duration.ofSeconds(20)).until(() -> hbase.registered("rs-1"));
    assertThat(hbase.snapshot().live()).noneMatch(x -> x.decommissioned());
    assertThat(kube.deletes).hasSize(1);
  }

  @Test
  void aGiveBackRetriedForAMarkDoesNotSwitchTheBalancerOnAgainOverAnAdministrator() {
    cluster("4Gi", false);
    hbase.unmovable.add("r10"); // rs-1 (the first, one region) drained but never empty
    operator(null);
    policy("marked", "  mode: Lru\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> !hbase.decommissioned.isEmpty() && !hbase.balancerOn);
    hbase.recommissionFails = true; // its mark stays for now
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("marked").delete();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> condition("marked", "GiveBackPending", "True"));
    assertThat(hbase.balancerOn).as("given back at the first try").isTrue();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> get("marked").getStatus().getRollout().getBalancerWasOn() == null);
    // an administrator switches it off after the delete: the retries for the mark leave it so
    hbase.balancerOn = false;
    await().during(Duration.ofSeconds(40)).atMost(Duration.ofSeconds(45)).until(() -> true);
    assertThat(hbase.balancerOn).as("left off by the retries").isFalse();
    assertThat(get("marked")).as("kept for the mark").isNotNull();

    hbase.recommissionFails = false;
    await().atMost(Duration.ofSeconds(60)).until(() -> get("marked") == null);
    assertThat(hbase.decommissioned).as("the mark cleared before the finalizer went").isEmpty();
    assertThat(hbase.balancerOn).as("still as the administrator left it").isFalse();
  }

  @Test
  void aStatusWipedMidRollStillEndsWithTheBalancerAsTheRollFoundIt() {
    firstPodRestarting("wiped");
    assertThat(hbase.balancerOn).isFalse();
    await().atMost(Duration.ofSeconds(10)).until(() -> balancerRecord() != null);
    assertThat(balancerRecord())
        .as("the policy's uid")
        .isEqualTo(get("wiped").getMetadata().getUid());
    // the status lost mid-roll, as by kubectl edit --subresource=status or a restore without it
    wipeStatus("wiped");
    await()
        .atMost(Duration.ofSeconds(120))
        .until(
            () -> {
              var st = get("wiped").getStatus();
              return st != null
                  && st.getRollout() != null
                  && st.getRollout().getPhase() == Phase.Idle
                  && st.getRollout().getUpdated() != null
                  && st.getRollout().getUpdated() == 3;
            });
    assertThat(hbase.balancerOn).as("on after the roll, as it found it").isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> balancerRecord() == null);
  }

  @Test
  void aPolicyMadeInvalidWhileItsStatusWasWipedStillGivesTheBalancerBack() {
    // the hold read the status alone: a status lost mid-roll, then the policy made invalid before
    // any roll step wrote a new one, left the balancer off for as long as the policy stayed so
    cluster("4Gi", false);
    kube.readyAfter = Duration.ofSeconds(5);
    BlockCacheOperator first = operator(null);
    policy("heldwiped", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> kube.deletes.size() == 1);
    assertThat(hbase.balancerOn).isFalse();
    await().atMost(Duration.ofSeconds(10)).until(() -> balancerRecord() != null);
    first.stop();
    wipeStatus("heldwiped");
    mergePatch("heldwiped", "{\"spec\":{\"memory\":{\"heap\":\"64Gi\"}}}");
    operator(null);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> condition("heldwiped", "Valid", "False") && hbase.balancerOn);
  }

  @Test
  void aPolicyDeletedAfterItsStatusWasWipedMidDrainStillClearsTheMark() {
    // found by the roller's model check (RollerModelCheckTest): the status was the only record of
    // a drained server, so a policy deleted after losing it left that server marked for good
    cluster("4Gi", false);
    hbase.unmovable.add("r10"); // rs-1 (the first, one region) drained but never empty
    operator(null);
    policy("wipedmid", "  mode: Lru\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> !hbase.decommissioned.isEmpty() && !hbase.balancerOn);
    String marked = hbase.decommissioned.iterator().next().toString();
    await().atMost(Duration.ofSeconds(10)).until(() -> annotation(BalancerRecord.MARKS) != null);
    assertThat(annotation(BalancerRecord.MARKS))
        .as("the policy's uid, then the server it drains")
        .isEqualTo(get("wipedmid").getMetadata().getUid() + " " + marked);
    hbase.masterReachable = false; // the roll cannot start over from the wiped status
    wipeStatus("wipedmid");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                get("wipedmid").getStatus() != null
                    && get("wipedmid").getStatus().getRollout() != null
                    && get("wipedmid").getStatus().getRollout().getInFlight().isEmpty());
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("wipedmid").delete();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> condition("wipedmid", "GiveBackPending", "True"));
    hbase.masterReachable = true;
    await().atMost(Duration.ofSeconds(90)).until(() -> get("wipedmid") == null);
    assertThat(hbase.snapshot().live())
        .as("no live server left marked")
        .noneMatch(x -> x.decommissioned());
    assertThat(hbase.balancerOn).as("the balancer as the roll found it").isTrue();
    assertThat(annotation(BalancerRecord.MARKS)).as("the record gone with the policy").isNull();
  }

  /**
   * What the roll changed in HBase, as the status says the operator last saw it (the figures of the
   * metrics and alerts on what is not given back): the balancer off and the drained server marked
   * mid-drain; at the end the balancer on, and only a mark that is not the roll's (an old
   * instance's, left by someone else); and, because the operator keeps asking while it sees one, no
   * mark once that one is cleared.
   */
  @Test
  void whatTheRollChangedInHBaseIsInTheStatusUntilItIsGivenBack() {
    cluster("4Gi", false);
    hbase.unmovable.add("r10"); // rs-1 (the first, one region) drained but never empty
    operator(null);
    policy("seen", "  mode: Lru\n");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> !hbase.decommissioned.isEmpty() && !hbase.balancerOn);
    String marked = hbase.decommissioned.iterator().next().toString();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(seen("seen"))
                    .as("mid-drain")
                    .isNotNull()
                    .satisfies(
                        c -> {
                          assertThat(c.getBalancerOn()).isFalse();
                          assertThat(c.getDecommissioned()).containsExactly(marked);
                          assertThat(c.getSince()).isNotNull();
                        }));
    hbase.unmovable.clear();
    // once rs-1 is back and the roll has gone on to the next pod: an administrator marks rs-1's
    // new instance (a server of the target that no roll holds)
    await().atMost(Duration.ofSeconds(90)).until(() -> kube.deletes.size() >= 2);
    dev.hbase.cache.operator.hbase.ServerId other;
    synchronized (hbase) {
      other = hbase.servers.get("rs-1").id;
      hbase.decommissioned.add(other);
    }
    await()
        .atMost(Duration.ofSeconds(120))
        .until(
            () -> {
              var st = get("seen").getStatus();
              return st != null
                  && st.getRollout() != null
                  && st.getRollout().getPhase() == Phase.Idle
                  && st.getRollout().getUpdated() != null
                  && st.getRollout().getUpdated() == 3;
            });
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(seen("seen").getBalancerOn()).as("given back").isTrue();
              assertThat(seen("seen").getDecommissioned())
                  .as("only the administrator's mark")
                  .containsExactly(other.toString());
            });
    synchronized (hbase) {
      hbase.decommissioned.remove(other); // the administrator recommissions it
    }
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () ->
                assertThat(seen("seen").getDecommissioned())
                    .as("seen again: the operator asks while it last saw a mark")
                    .isEmpty());
  }

  private dev.hbase.cache.api.v1alpha1.status.ClusterSeen seen(String policy) {
    var st = get(policy).getStatus();
    return st == null || st.getRollout() == null ? null : st.getRollout().getCluster();
  }

  /**
   * The policy's status replaced by an empty one, as by {@code kubectl edit --subresource=status}
   * or a restore without it; again on a conflict (the operator wrote it meanwhile).
   */
  private void wipeStatus(String name) {
    await()
        .atMost(Duration.ofSeconds(20))
        .ignoreException(io.fabric8.kubernetes.client.KubernetesClientException.class)
        .until(
            () -> {
              BlockCachePolicy wiped = get(name);
              wiped.setStatus(new dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus());
              client.resource(wiped).updateStatus();
              return true;
            });
  }

  private String annotation(String key) {
    var a = client.apps().statefulSets().inNamespace(ns).withName(STS).get().getMetadata();
    return a.getAnnotations() == null ? null : a.getAnnotations().get(key);
  }

  /** The target StatefulSet's record of the balancer (BalancerRecord), or null. */
  private String balancerRecord() {
    var a = client.apps().statefulSets().inNamespace(ns).withName(STS).get().getMetadata();
    return a.getAnnotations() == null ? null : a.getAnnotations().get(BalancerRecord.ANNOTATION);
  }

  @Test
  void theAbandonAnnotationLetsAPolicyOwingHBaseGoWithNothingSent() {
    firstPodRestarting("stuck");
    hbase.masterReachable = false;
    client.resources(BlockCachePolicy.class).inNamespace(ns).withName("stuck").delete();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> condition("stuck", "GiveBackPending", "True"));
    mergePatch(
        "stuck",
        "{\"metadata\":{\"annotations\":{\"cache.hbase.dev/abandon-give-back\":\"true\"}}}");
    await().atMost(Duration.ofSeconds(20)).until(() -> get("stuck") == null);
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "GiveBackAbandoned".equals(e.getReason())
                            && e.getMessage().contains("the HBase master did not answer")));
    hbase.masterReachable = true;
    assertThat(hbase.balancerOn).as("nothing sent once let go").isFalse();
  }

  @Test
  void anIdentityHBaseRefusesTheRollsActionsIsDegradedAndNothingRestarts() {
    cluster("4Gi", false);
    hbase.adminDenied = true; // the identity may read the cluster's state, not switch or move
    operator(null);
    policy("refused", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> condition("refused", "Degraded", "True"));
    var degraded =
        Conditions.find(get("refused").getStatus().getConditions(), "Degraded").orElseThrow();
    assertThat(degraded.getReason()).isEqualTo("AccessDenied");
    assertThat(degraded.getMessage()).contains("'RA'").contains("action=ADMIN");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e -> "AccessDenied".equals(e.getReason()) && "Warning".equals(e.getType())));
    await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(8)).until(() -> true);
    assertThat(kube.deletes).as("no pod restarted while refused").isEmpty();
    assertThat(hbase.balancerOn).as("the balancer as it was").isTrue();

    // the permission granted: the roll goes on and the condition clears
    hbase.adminDenied = false;
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("refused"));
    assertThat(condition("refused", "Degraded", "False")).isTrue();
    assertThat(hbase.balancerOn).isTrue();
  }

  @Test
  void aPlanThatCannotWorkTouchesNothing() {
    cluster("2Gi", false);
    String rv = sts().getMetadata().getResourceVersion();
    operator(null);
    policy("too-big", "  mode: Offheap\n  memory:\n    bucketCache: 8Gi\n");

    await().atMost(Duration.ofSeconds(30)).until(() -> condition("too-big", "Valid", "False"));
    var valid = Conditions.find(get("too-big").getStatus().getConditions(), "Valid").orElseThrow();
    assertThat(valid.getReason()).isEqualTo("PlanRefused");
    assertThat(valid.getMessage()).contains("memory limit 2Gi").contains("raise the limit");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "PlanRefused".equals(e.getReason())
                            && "Warning".equals(e.getType())
                            && e.getMessage().contains("2Gi")));
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> true);
    assertThat(sts().getMetadata().getResourceVersion()).isEqualTo(rv);
    assertThat(client.configMaps().inNamespace(ns).withName("too-big-rs-site").get()).isNull();
    assertThat(kube.deletes).isEmpty();
  }

  /**
   * Issue 50, point 6: the derived ConfigMap holds the files of every plan a pod still runs, and is
   * bounded (900 KiB). A base edit mid-roll that would take it over the bound (a 305 KiB file
   * changed, while a pod of the plan before still runs the old one) is refused: nothing is written,
   * no key a pod runs is dropped, the roll is held and HBase given back (its balancer on), Degraded
   * and a Warning say why. The base put back, the roll goes on.
   */
  @Test
  void aBaseEditMidRollThatWouldTakeTheDerivedConfigMapOverItsBoundIsRefused() {
    cluster("4Gi", false);
    baseFile("big.txt", "a".repeat(305 * 1024));
    kube.readyAfter = Duration.ofSeconds(5);
    operator(null);
    policy("bulky", "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> kube.deletes.size() == 1);
    String revision =
        sts()
            .getSpec()
            .getTemplate()
            .getMetadata()
            .getAnnotations()
            .get(dev.hbase.cache.operator.render.Desired.HASH_ANNOTATION);
    assertThat(hbase.balancerOn).isFalse();

    baseFile("big.txt", "b".repeat(305 * 1024));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                reason("bulky", "Degraded", "True").equals("SiteConfigTooLarge")
                    && hbase.balancerOn);
    assertThat(get("bulky").getStatus().getRollout().getPhase()).isEqualTo(Phase.Blocked);
    assertThat(conditionMessage("bulky", "Degraded"))
        .contains(
            ns + "/bulky-rs-site", "above the operator's bound of 900 KiB", "Nothing was written");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(
                    e ->
                        "SiteConfigTooLarge".equals(e.getReason())
                            && "Warning".equals(e.getType())));
    await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(8)).until(() -> true);
    var data = client.configMaps().inNamespace(ns).withName("bulky-rs-site").get().getData();
    assertThat(data.get("big.txt")).as("the derived files as they were").startsWith("a");
    assertThat(data.values()).noneMatch(v -> v.startsWith("b"));
    assertThat(
            sts()
                .getSpec()
                .getTemplate()
                .getMetadata()
                .getAnnotations()
                .get(dev.hbase.cache.operator.render.Desired.HASH_ANNOTATION))
        .isEqualTo(revision);
    assertThat(kube.deletes).as("no pod restarted while refused").hasSize(1);

    baseFile("big.txt", "a".repeat(305 * 1024));
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("bulky"));
    assertThat(condition("bulky", "Degraded", "False")).isTrue();
    assertThat(kube.deleteCount)
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
  }

  /** Sets a file of the base ConfigMap. */
  private void baseFile(String name, String content) {
    client
        .configMaps()
        .inNamespace(ns)
        .withName("hbase-site")
        .edit(
            cm -> {
              cm.getData().put(name, content);
              return cm;
            });
  }

  /** An Lru policy on a 4Gi cluster, its roll under way: the first pod drained and deleted. */
  private void firstPodRestarting(String name) {
    cluster("4Gi", false);
    kube.readyAfter = Duration.ofSeconds(5);
    operator(null);
    policy(name, "  mode: Lru\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> kube.deletes.size() == 1);
  }

  /** Sets the binary data of the policy's derived ConfigMap (someone else's, when not null). */
  private void derivedBinaryData(String policy, Map<String, String> data) {
    client
        .configMaps()
        .inNamespace(ns)
        .withName(policy + "-rs-site")
        .edit(
            cm -> {
              cm.setBinaryData(data);
              return cm;
            });
  }
}
