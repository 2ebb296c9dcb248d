package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.AdviceScenarios.ADVICE_POLICY;
import static dev.hbase.cache.e2e.RollObserver.ROLL_TIMEOUT;
import static dev.hbase.cache.e2e.RootOwnedVolumes.ROOT_OWNED_CLASS;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.MetricsSpec;
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
@Order(8)
class NamespaceInstallScenario extends KindScenario {
  @Test
  @Order(20)
  @Tag("namespace")
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
          // the suite's PersistentFile policy again, on the cache volumes step 2 made: its first
          // roll under the new operator
          BlockCachePolicy p =
              client
                  .resources(BlockCachePolicy.class)
                  .load(repo.resolve("examples/persistent-file.yaml").toFile())
                  .item();
          p.getMetadata().setNamespace(cluster.ns);
          p.getSpec().setMetrics(new MetricsSpec().setInterval("10s"));
          p.getSpec().getStorage().setStorageClassName(ROOT_OWNED_CLASS);
          client.resource(p).create();
          ns.createUnwatchedPolicy(p);
          NamespaceInstall.awaitTaken(cluster, Duration.ofMinutes(2));
          BlockCachePolicy done =
              cluster.awaitRollDone(
                  "PersistentFile again, under the namespace-scoped operator", null, ROLL_TIMEOUT);
          report.line(
              "- examples/persistent-file.yaml again: rolled to Idle (revision %s)",
              done.getStatus().getRollout().getRevision());
          // "caches kept" needs caches to keep: the pods step 16 left keep their L2 (the deleted
          // policy's configuration), but a pod restarted before its L2 holds blocks has nothing to
          // retain (seen on CI when the advice step's Lru pods came first: the restart roll began
          // with rs-0's L2 sampled empty, so no retainedFraction)
          everyServerHoldsRegions();
          awaitEveryPodCached(Duration.ofMinutes(5));
          // and a roll with the usual checks
          RollObserver roll = observeRoll("restart annotation, namespace-scoped operator");
          cluster.editPolicy(
              x -> {
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
          summary.add(
              "namespace-only install by a namespace admin (no cluster-scoped object): a roll with one down at most, caches kept,"
                  + " 0 failed reads; a policy in an unwatched namespace left alone");
        });
  }
}
