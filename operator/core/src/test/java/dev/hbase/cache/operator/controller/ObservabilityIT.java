package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.BlockCacheOperator;
import dev.hbase.cache.operator.metrics.ChartQueries;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * What the operator shows and what it costs the API server: the health and Prometheus endpoints
 * (the framework's and the policy's figures), a stuck scrape or stalled clients that do not hold
 * the health probe, no writes from an idle policy, and a pods informer that sees only the
 * StatefulSet's pods.
 */
@EnableKubeAPIServer
class ObservabilityIT extends OperatorHarness {
  @Test
  void healthAndPrometheusEndpoints() throws Exception {
    cluster("4Gi", false);
    BlockCacheOperator op = operator(null);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    op.serveHttp(port, 0, client);
    policy("metrics", "  mode: MetaOnly\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> condition("metrics", "Valid", "True"));
    HttpClient http = HttpClient.newHttpClient();
    String base = "http://127.0.0.1:" + port;
    String probes = "http://127.0.0.1:" + op.probePort();
    assertThat(
            http.send(
                    HttpRequest.newBuilder(URI.create(probes + "/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(200);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                http.send(
                            HttpRequest.newBuilder(URI.create(probes + "/readyz")).build(),
                            HttpResponse.BodyHandlers.ofString())
                        .statusCode()
                    == 200);
    // the probes are on their own listener only
    assertThat(
            http.send(
                    HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(404);
    String metrics =
        http.send(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertThat(metrics).contains("reconciliations").contains("jvm_memory_used_bytes");
    // reconcile time as a histogram (its p99 in Prometheus); the failure counters appear with
    // the first failure
    assertThat(metrics)
        .contains("operator_sdk_controllers_execution_reconcile_seconds_bucket")
        .contains("operator_sdk_controllers_execution_reconcile_success_total")
        // the namespaces' share of the reconcile threads: none turned away here
        .contains("hbase_cache_operator_reconciles_turned_away_total 0.0")
        // the HBase connections' buffers, their limit, and none closed for them here
        .contains("hbase_cache_operator_hbase_buffers_bytes ")
        .contains("hbase_cache_operator_hbase_buffers_limit_bytes ")
        .contains("hbase_cache_operator_hbase_connections_closed_for_buffers_total 0.0");
    // the policy's status as gauges, once its figures are in the status
    String l = "namespace=\"" + ns + "\",policy=\"metrics\",statefulset=\"rs\"";
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        http.send(
                                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                                HttpResponse.BodyHandlers.ofString())
                            .body()
                            .lines())
                    .contains(
                        "hbase_cache_policy_info{" + l + ",mode=\"MetaOnly\"} 1",
                        "hbase_cache_condition{" + l + ",type=\"Valid\",status=\"True\"} 1",
                        "hbase_cache_roll_phase{" + l + ",phase=\"Idle\"} 1",
                        "hbase_cache_roll_pods{" + l + "} 3",
                        "hbase_cache_roll_pods_updated{" + l + "} 3",
                        "hbase_cache_regionserver_ready{" + l + ",pod=\"rs-0\"} 1",
                        "hbase_cache_regionserver_up_to_date{" + l + ",pod=\"rs-2\"} 1"));
    var scrape =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(scrape.headers().firstValue("Content-Type"))
        .hasValue("text/plain; version=0.0.4; charset=utf-8");
    // the framework's figures the chart's dashboard queries are there (a failure counter appears
    // with the first failure: its success twin, registered with it, stands for it here)
    assertThat(ChartQueries.metricNames())
        .filteredOn(n -> n.startsWith("operator_sdk_"))
        .isNotEmpty()
        .allMatch(n -> scrape.body().contains(n.replace("_failed_total", "_success_total") + "{"));
    assertThat(scrape.body()).containsPattern("hbase_cache_capacity_bytes\\{" + l + "\\} [1-9]");
  }

  /**
   * Writes to the API server as the operator sends them (method and path), leases excluded: a
   * client with an interceptor, on the test API server.
   */
  static final class CountingClient {
    final List<String> writes = java.util.Collections.synchronizedList(new ArrayList<>());
    final KubernetesClient client =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(OperatorHarness.client.getConfiguration())
            .withHttpClientBuilderConsumer(
                b ->
                    b.addOrReplaceInterceptor(
                        "count",
                        new io.fabric8.kubernetes.client.http.Interceptor() {
                          @Override
                          public void before(
                              io.fabric8.kubernetes.client.http.BasicBuilder builder,
                              io.fabric8.kubernetes.client.http.HttpRequest request,
                              io.fabric8.kubernetes.client.http.Interceptor.RequestTags tags) {
                            if (!"GET".equals(request.method())
                                && !request.uri().getPath().contains("/leases")) {
                              writes.add(request.method() + " " + request.uri().getPath());
                            }
                          }
                        }))
            .build();
  }

  @Test
  void anIdlePolicyMakesNoWritesToTheApiServer() {
    cluster("4Gi", true);
    CountingClient counting = new CountingClient();
    closeAfter.add(counting.client::close);
    operator(null, counting.client);
    policy("idle", "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n");
    await().atMost(Duration.ofSeconds(120)).until(() -> idleAndApplied("idle"));
    assertThat(counting.writes)
        .as("the roll itself writes")
        .anyMatch(w -> w.startsWith("PATCH") && w.contains("/statefulsets/"));

    // The last pod may turn Ready after the last metrics sample of the roll: its first sample adds
    // its cache to status.cache (one write). Wait until the status has not changed for one
    // metrics interval (10 s) + 1 s; an operator that keeps writing never gets there.
    String[] seen = {get("idle").getMetadata().getResourceVersion()};
    long[] since = {System.nanoTime()};
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              String rv = get("idle").getMetadata().getResourceVersion();
              if (!rv.equals(seen[0])) {
                seen[0] = rv;
                since[0] = System.nanoTime();
              }
              return System.nanoTime() - since[0] > Duration.ofSeconds(11).toNanos();
            });
    String settled = Serialization.asJson(get("idle").getStatus());

    // reconciles while idle (metrics interval 10 s: each one scrapes every pod): none writes.
    // Nine scrapes after the clear are three reconciles that began after it; the reconciles of one
    // policy run one at a time, so the first two had finished, writes and all. (It was a fixed
    // 25 s, about two and a half intervals, which a loaded machine could fill with fewer.)
    counting.writes.clear();
    int scrapes = hbase.scrapes;
    await("three reconciles' scrapes while idle")
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> hbase.scrapes - scrapes >= 9);
    assertThat(hbase.scrapes - scrapes)
        .as("reconciles ran meanwhile (each scrapes 3 pods)")
        .isGreaterThanOrEqualTo(6);
    assertThat(idleAndApplied("idle")).isTrue();
    assertThat(counting.writes)
        .as(
            "writes while idle; status before: %s%nstatus now: %s",
            settled, Serialization.asJson(get("idle").getStatus()))
        .isEmpty();
  }

  @Test
  void thePodsInformerWatchesOnlyStatefulSetPods() {
    cluster("4Gi", false);
    // a pod of the namespace that no StatefulSet made, named like one of ours
    client
        .resource(
            new io.fabric8.kubernetes.api.model.PodBuilder()
                .withNewMetadata()
                .withName(STS + "-7")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("c")
                .withImage("busybox")
                .endContainer()
                .endSpec()
                .build())
        .create();
    client
        .apps()
        .statefulSets()
        .inNamespace(ns)
        .withName(STS)
        .edit(
            s -> {
              s.getSpec().setReplicas(8);
              return s;
            });
    kube.neverReady.addAll(List.of("rs-3", "rs-4", "rs-5", "rs-6", "rs-7"));
    operator(null);
    policy("labels", "  mode: Lru\n");
    // rs-3..rs-6 are created by the fake StatefulSet controller (labelled) and never Ready;
    // rs-7 exists but is not the StatefulSet's: the status lists only the labelled pods
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                get("labels").getStatus() != null
                    && get("labels").getStatus().getRollout() != null
                    && get("labels").getStatus().getRollout().getTotal() != null
                    && get("labels").getStatus().getRollout().getTotal() == 8);
    assertThat(get("labels").getStatus().getRollout().getProgress()).endsWith("/8");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> get("labels").getStatus().getRegionServers().size() == 7);
    assertThat(get("labels").getStatus().getRegionServers())
        .extracting(r -> r.getPod())
        .doesNotContain(STS + "-7");
  }

  /**
   * A slow scrape (here: the policies' figures take forever) holds neither /healthz nor /readyz,
   * and neither do clients that send a byte and stall, on either port: the probes have a listener
   * of their own ({@link dev.hbase.cache.operator.ProbeServer}). On the shared 4-thread pool they
   * had before, 6 such clients made /healthz take 3.4-3.9 s against the chart's 3 s probe timeout;
   * measured now: 3-4 ms beside 6 stalled clients on the HTTP port and 100 on the probe port.
   */
  @Test
  void aStuckScrapeDoesNotHoldTheHealthProbe() throws Exception {
    namespaceWithoutTarget();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch entered = new CountDownLatch(2);
    var reconciler =
        new BlockCachePolicyReconciler(
            Clock.systemUTC(), (settings, login) -> hbase, hbase.probe()) {
          @Override
          public List<BlockCachePolicy> policies() {
            entered.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return List.of();
          }
        };
    BlockCacheOperator op = new BlockCacheOperator(client, Set.of(ns), null, reconciler);
    op.start();
    closeAfter.add(0, op::stop);
    closeAfter.add(0, release::countDown);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    op.serveHttp(port, 0, client);
    int probePort = op.probePort();
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    String base = "http://127.0.0.1:" + port;
    String probes = "http://127.0.0.1:" + probePort;
    List<CompletableFuture<HttpResponse<String>>> stuck =
        List.of(
            http.sendAsync(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()),
            http.sendAsync(
                HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()));
    // both scrapes inside the handler (a fixed sleep raced on a slow machine)
    assertThat(entered.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    var third =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/metrics"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(third.statusCode()).as("a third scrape while two are stuck").isEqualTo(503);
    var health =
        http.send(
            HttpRequest.newBuilder(URI.create(probes + "/healthz"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(stuck).noneMatch(CompletableFuture::isDone);
    release.countDown();
    for (var f : stuck) {
      assertThat(f.get().statusCode()).isEqualTo(200);
    }

    // clients that send a byte of a request and stall: as many as the HTTP server has threads and
    // more, and a hundred on the probes' port (more than it holds open: the oldest are closed)
    for (int i = 0; i < BlockCacheOperator.SCRAPES + 4; i++) {
      stall(port);
    }
    for (int i = 0; i < 100; i++) {
      stall(probePort);
    }
    Thread.sleep(500);
    for (String path : List.of("/healthz", "/readyz")) {
      long t0 = System.nanoTime();
      var probe =
          http.send(
              HttpRequest.newBuilder(URI.create(probes + path))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      System.out.println(
          "OBSERVABILITY " + path + " beside stalled clients: " + took.toMillis() + " ms");
      assertThat(probe.statusCode()).isEqualTo(200);
      // the chart's probes time out after 3 s: well under it, far over what it takes
      assertThat(took).isLessThan(Duration.ofMillis(1500));
    }
  }

  /** A client that sends one byte of a request to the port and holds the connection. */
  private void stall(int port) throws java.io.IOException {
    var socket = new java.net.Socket("127.0.0.1", port);
    socket.getOutputStream().write('G');
    socket.getOutputStream().flush();
    closeAfter.add(socket);
  }
}
