package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.BlockCacheOperator;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.InfoPortServer;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.metrics.CacheProbe;
import dev.hbase.cache.operator.metrics.ScrapePool;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * One tenant's info ports cannot freeze the operator for the others (issue 49, point 1), on a real
 * API server. Namespace {@code noisy} has 16 Ready pods whose info port (a local socket server, the
 * operator's production {@link JmxScraper} asking it) sends the headers of a 1 GB body and then a
 * byte every 2 s (pods 0-7), or a body of no declared length at that pace (pods 8-15); namespace
 * {@code quiet} has one pod with a healthy info port ({@link SimulatedHBase}'s figures). Before the
 * fix the noisy pods' scrapes held all 16 threads of the one scrape pool forever (the JDK's request
 * timeout stops at the headers, and the scrape's {@code join()} had no limit): the quiet policy's
 * next reconcile waited behind them, and its spec change never reached {@code status.plan} (seen on
 * the code before the fix: not within this test's 30 s; the control, before the noisy policy, 0.6
 * s).
 *
 * <p>Now the noisy namespace holds at most its share of the pool ({@link ScrapePool#SHARE} asks at
 * once), each ask ends at its deadline, a reconcile waits for info servers at most its budget, and
 * the noisy policy says which pods stall in its Degraded condition. Measured on 2 cores under load,
 * three runs: the quiet policy's spec change in its plan in 0.4-1.1 s beside the noisy tenant,
 * 0.2-0.7 s before it (the bound: 30 s).
 */
@EnableKubeAPIServer
class NoisyNeighbourIT extends OperatorHarness {
  /** The quiet policy's change must reach its plan within this: many times what it takes. */
  static final Duration PLAN_BOUND = Duration.ofSeconds(30);

  @Test
  void aStallingTenantHoldsOnlyItsShareAndTheQuietPolicyGoesOn() throws Exception {
    try (InfoPortServer hugeHeaders =
            InfoPortServer.trickling(1_000_000_000L, Duration.ofSeconds(2));
        InfoPortServer trickle = InfoPortServer.trickling(null, Duration.ofSeconds(2))) {
      SimulatedHBase quietHBase = tenant("quiet", 1, "10.2.0.");
      SimulatedHBase noisyHBase = tenant("noisy", 16, "10.1.0.");
      Map<String, SimulatedHBase> byQuorum = Map.of("zk.quiet", quietHBase, "zk.noisy", noisyHBase);
      JmxScraper real = new JmxScraper(Duration.ofSeconds(5)); // as production makes it
      AtomicInteger noisyInFlight = new AtomicInteger();
      AtomicInteger noisyMostInFlight = new AtomicInteger();
      CacheProbe probe =
          new CacheProbe() {
            @Override
            public CacheSample scrape(String host, int port) throws IOException {
              if (!host.startsWith("10.1.0.")) {
                return quietHBase.probe().scrape(host, port);
              }
              int ordinal = Integer.parseInt(host.substring("10.1.0.".length())) - 10;
              // every noisy pod's info port: one of this test's socket servers on loopback
              noisyMostInFlight.accumulateAndGet(noisyInFlight.incrementAndGet(), Math::max);
              try {
                return real.scrape("127.0.0.1", ordinal < 8 ? hugeHeaders.port() : trickle.port());
              } finally {
                noisyInFlight.decrementAndGet();
              }
            }
          };
      var reconciler =
          new BlockCachePolicyReconciler(
              Clock.systemUTC(),
              (settings, login) -> byQuorum.get(settings.get("hbase.zookeeper.quorum")),
              probe);
      BlockCacheOperator op =
          new BlockCacheOperator(client, Set.of("quiet", "noisy"), null, reconciler);
      op.start();
      closeAfter.add(0, op::stop);

      ns = "quiet";
      create("quiet");
      await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("cache"));
      Duration control = planChange("768Mi");
      System.out.println("NOISY quiet plan change alone: " + control.toMillis() + " ms");
      await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("cache"));

      ns = "noisy";
      create("noisy");
      // the noisy pods are being asked: their connections held, the pool's share taken
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> trickle.requests.get() >= 2 && hugeHeaders.requests.get() >= 2);
      // past the quiet policy's metrics interval (10 s): its next scrapes fall in the stall
      int quietScrapes = quietHBase.scrapes;
      Thread.sleep(15_000);

      ns = "quiet";
      Duration beside = planChange("640Mi");
      System.out.println(
          "NOISY quiet plan change beside the noisy tenant: " + beside.toMillis() + " ms");
      await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("cache"));
      assertThat(reason("cache", "Degraded", "False")).isEqualTo("AsPlanned");
      assertThat(quietHBase.scrapes)
          .as("the quiet pod's info port asked while the noisy namespace's stalled")
          .isGreaterThan(quietScrapes);

      // the noisy policy names its stalled pods and where they were asked
      ns = "noisy";
      await()
          .atMost(Duration.ofSeconds(90))
          .untilAsserted(
              () -> {
                assertThat(reason("cache", "Degraded", "True")).isEqualTo("InfoServerStalled");
                assertThat(conditionMessage("cache", "Degraded"))
                    .containsPattern("rs-\\d+ \\(10\\.1\\.0\\.\\d+:16030\\)");
              });
      System.out.println("NOISY noisy policy: " + conditionMessage("cache", "Degraded"));
      assertThat(noisyMostInFlight.get())
          .as("the noisy namespace's asks in flight at once (its share of the pool)")
          .isLessThanOrEqualTo(ScrapePool.SHARE);
    }
  }

  /** Changes the quiet policy's bucketCache; how long until status.plan shows it. */
  private Duration planChange(String bucketCache) {
    Instant t0 = Instant.now();
    mergePatch("cache", "{\"spec\":{\"memory\":{\"bucketCache\":\"" + bucketCache + "\"}}}");
    await()
        .atMost(PLAN_BOUND)
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              BlockCachePolicy p = get("cache");
              return p.getStatus() != null
                  && p.getStatus().getPlan() != null
                  && bucketCache.equals(p.getStatus().getPlan().getBucketCacheSize());
            });
    return Duration.between(t0, Instant.now());
  }

  private void create(String namespace) {
    String doc =
        "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata:\n  name: cache\n"
            + "  namespace: "
            + namespace
            + "\nspec:\n  targetRef:\n    name: rs\n  hbaseSiteConfigMap: hbase-site\n"
            + "  mode: Offheap\n  memory:\n    bucketCache: 512Mi\n"
            + "  metrics:\n    interval: 10s\n";
    client.resource(Serialization.unmarshal(doc, BlockCachePolicy.class)).create();
  }

  /** A namespace with its base hbase-site, a StatefulSet of {@code replicas} and Ready pods. */
  private SimulatedHBase tenant(String namespace, int replicas, String subnet) {
    FakeKube.tenant(client, namespace, "zk." + namespace, replicas);
    SimulatedHBase hbase = new SimulatedHBase(Instant::now);
    Map<String, List<String>> regions = new LinkedHashMap<>();
    for (int i = 0; i < replicas; i++) {
      regions.put(STS + "-" + i, new ArrayList<>(List.of(namespace + "-r" + i)));
    }
    FakeKube k = new FakeKube(client, namespace, STS, hbase, regions);
    k.subnet = subnet;
    closeAfter.add(k.start());
    await().atMost(Duration.ofSeconds(60)).until(() -> k.allReadyAndRegistered(replicas));
    k.maxDown = 0;
    return hbase;
  }
}
