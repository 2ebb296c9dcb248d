package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.AdviceScenarios.ADVICE_POLICY;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Step 18 (tag {@code namespace}, make e2e-namespace): the operator chart in namespace-only mode,
 * installed by a namespace admin in place of the suite's cluster-wide operator. Only the sizing
 * advice (step 19) runs after it, under its operator.
 */
@Tag("namespace")
class NamespaceInstallScenario extends KindScenario {
  /**
   * Its start: the suite's cluster-wide operator (which it replaces), its policy or the pods its
   * deletion left, the reader, HBase given back.
   */
  @Override
  List<Need> needs() {
    return List.of(
        Needs.HBASE_UP,
        Needs.SUITE_OPERATOR,
        Needs.SUITE_POLICY_OR_ITS_PODS,
        Needs.READER,
        Needs.GIVEN_BACK);
  }

  @Test
  @Order(1)
  void aNamespaceAdminInstallsTheOperatorForTheirNamespaceOnly() {
    step(
        "18. the chart in namespace-only mode, installed by a namespace admin: a roll under it, a policy elsewhere left alone",
        () -> {
          NamespaceInstall ns = new NamespaceInstall(client, cluster, settings, report);
          // the policies of earlier steps go with the operator that made them (the suite's own when
          // step 16, which deletes it, did not run: make e2e-namespace; the advice step's when it
          // ran before this one)
          for (String name : List.of(ADVICE_POLICY, Cluster.POLICY)) {
            deletePolicy(name);
          }
          // its log (steps 1-17) apart from the log of the operator installed last, which the suite
          // saves as operator.log at its end
          ns.replaceTheClusterWideOperator(target.resolve("operator-cluster-wide.log"));
          // the suite's policy again, exactly as it was when deleted: the pods still run its
          // configuration and hold its caches (same L2 size: nothing to reset). Created paused, so
          // that the new operator's first roll (a new policy UID under a new operator: a takeover)
          // is the measured one, from pods whose L2 holds blocks. Before, the step created
          // examples/persistent-file.yaml (an L2 size other than step 15's), waited 68 s for the
          // reset caches to refill, then rolled a second time to measure.
          BlockCachePolicy p = again(suite.deletedSuitePolicy);
          p.getSpec().getRollout().setPaused(true);
          Map<Integer, String> uids = cluster.podUids();
          client.resource(p).create();
          ns.createUnwatchedPolicy(p);
          NamespaceInstall.awaitTaken(cluster, Duration.ofMinutes(2));
          // a server with no regions has no blocks to keep (HBase leaves one so after a stop that
          // was not the operator's: step 15's restarts of rs-0); the moved regions are scanned
          // once on their new server
          everyServerHoldsRegions();
          awaitEveryPodCached(Duration.ofMinutes(5));
          // a policy taken over paused restarts nothing: the roll below is the new operator's first
          assertThat(cluster.podUids())
              .as("RegionServer pods while the policy was paused under the new operator")
              .isEqualTo(uids);
          // the takeover roll, with the usual checks: unpaused, and a restart annotation so that
          // it rolls every pod whatever the new operator renders
          RollObserver roll = observeRoll("takeover by the namespace-scoped operator");
          cluster.editPolicy(
              x -> {
                x.getSpec().getRollout().setPaused(false);
                var a =
                    new java.util.HashMap<String, String>(
                        x.getMetadata().getAnnotations() == null
                            ? Map.of()
                            : x.getMetadata().getAnnotations());
                a.put(BlockCachePolicy.RESTART_ANNOTATION, Instant.now().toString());
                x.getMetadata().setAnnotations(a);
              });
          RollMeasurement m = record(roll.awaitDone());
          assertOneAtATimeWithTheCacheKept(m);
          assertEveryPodHomeWithin(m);
          ns.assertUnwatchedPolicyLeftAlone();
          report.line(
              "- the suite's policy as step 16 deleted it, created paused (taken over, no pod restarted), then unpaused: the roll above");
          summary.add(
              "namespace-only install by a namespace admin (no cluster-scoped object): a roll with one down at most, caches kept,"
                  + " 0 failed reads; a policy in an unwatched namespace left alone");
        });
  }

  /**
   * The suite's policy as a step deleted it, to create again: its spec, name and labels; without
   * its status, finalizers, UID and version.
   */
  private BlockCachePolicy again(BlockCachePolicy deleted) {
    assertThat(deleted).as("the suite's policy, deleted by step 16 or by this step").isNotNull();
    BlockCachePolicy p = io.fabric8.kubernetes.client.utils.Serialization.clone(deleted);
    p.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(deleted.getMetadata().getName())
            .withNamespace(cluster.ns)
            .withLabels(deleted.getMetadata().getLabels())
            .build());
    p.setStatus(null);
    return p;
  }
}
