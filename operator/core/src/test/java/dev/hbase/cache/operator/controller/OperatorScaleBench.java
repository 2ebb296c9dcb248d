package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.BlockCacheOperator;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.metrics.CacheProbe;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubeapitest.junit.KubeConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.FileInputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code make bench-operator}: the operator at 3, 52 and 200 RegionServers (1 StatefulSet of 3, 13
 * and 50 of 4, one policy each) on a real kube-apiserver and etcd. Kubelet and HBase are simulated
 * as in {@link RollIT} ({@link FakeKube}, {@link SimulatedHBase}: a pod is Ready about a second
 * after its create, its /jmx answers come from memory); the operator is the production {@link
 * BlockCacheOperator} with its default metrics interval, watching all namespaces, in this JVM. Per
 * scale point: the first roll of every StatefulSet (all policies created at once), then an idle
 * window: API requests by verb per minute (counted on the operator's own client), reconcile time
 * p50/p99 (the operator's own JOSDK histogram, as Prometheus would compute it), scrapes per minute,
 * CPU of this JVM and of kube-apiserver + etcd, heap after GC and RSS. At the largest point, one
 * RegionServer whose /jmx takes 10 s: what it does to the other policies' reconciles. Not a test
 * (run only by the make target); the report goes to target/bench/operator.{json,md}.
 */
@EnableKubeAPIServer
class OperatorScaleBench {
  /** Status writes per restarted pod a roll may cost: judged here, reported by RollIT. */
  static final double STATUS_WRITES_PER_RESTART_BUDGET = 5.0;

  static KubernetesClient client;
  @KubeConfig static String kubeConfigYaml;

  /** JVM options of the operator's own process (the points marked {@code p}): the chart's. */
  static final List<String> OPERATOR_JVM =
      Arrays.stream(System.getProperty("bench.operatorJvm", "").trim().split("\\s+"))
          .filter(x -> !x.isEmpty())
          .toList();

  /**
   * The scale points: {@code <StatefulSets>x<replicas>}, {@code p} at the end for the operator in a
   * process of its own; {@code noisy}: the noisy-neighbour row ({@link NoisyNeighbourPoint}), alone
   * with {@code -Dbench.points=noisy} ({@code make bench-operator
   * BENCH_ARGS=-Dbench.points=noisy}).
   */
  static final String POINTS = System.getProperty("bench.points", "1x3,13x4,50x4,50x4p,noisy");

  static final Duration IDLE = Duration.ofSeconds(Integer.getInteger("bench.idleSeconds", 120));
  static final Duration SLOW = Duration.ofSeconds(Integer.getInteger("bench.slowSeconds", 60));
  static final int REGIONS_PER_SERVER = 5;
  static final Path OUT = Path.of("target/bench");

  @BeforeAll
  static void crd() throws Exception {
    try (var in = new FileInputStream("../../crds/blockcachepolicies.cache.hbase.dev-v1.yml")) {
      var crd = client.apiextensions().v1().customResourceDefinitions().load(in).item();
      client.resource(crd).serverSideApply();
      client
          .apiextensions()
          .v1()
          .customResourceDefinitions()
          .withName(crd.getMetadata().getName())
          .waitUntilCondition(CrdValidationTest::established, 30, TimeUnit.SECONDS);
    }
  }

  @Test
  void benchmark() throws Exception {
    List<Map<String, Object>> points = new ArrayList<>();
    Map<String, Object> noisy = null;
    List<String> specs = Arrays.asList(POINTS.split(","));
    // the one slow RegionServer: at the last point whose operator runs in this JVM
    int slowAt = -1;
    for (int i = 0; i < specs.size(); i++) {
      if (!specs.get(i).endsWith("p") && !specs.get(i).equals("noisy")) {
        slowAt = i;
      }
    }
    for (int i = 0; i < specs.size(); i++) {
      if (specs.get(i).equals("noisy")) {
        noisy = new NoisyNeighbourPoint(i + 1).run();
        continue;
      }
      boolean ownProcess = specs.get(i).endsWith("p");
      String[] p = specs.get(i).replace("p", "").split("x");
      points.add(
          new Point(i + 1, Integer.parseInt(p[0]), Integer.parseInt(p[1]), ownProcess)
              .run(i == slowAt && !SLOW.isZero()));
    }
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("date", Instant.now().toString());
    report.put("machine", machine());
    report.put("kubernetes", client.getKubernetesVersion().getGitVersion());
    report.put("idleSeconds", IDLE.toSeconds());
    report.put("points", points);
    if (noisy != null) {
      report.put("noisyNeighbour", noisy);
    }
    Files.createDirectories(OUT);
    new ObjectMapper()
        .enable(SerializationFeature.INDENT_OUTPUT)
        .writeValue(OUT.resolve("operator.json").toFile(), report);
    System.out.println("OPERATOR BENCH " + Serialization.asJson(report));
  }

  /** One scale point: its namespaces, simulated clusters, operator and measurements. */
  static final class Point {
    final int run;
    final int clusters;
    final int replicas;
    final boolean ownProcess;
    final List<String> namespaces = new ArrayList<>();
    final Map<String, SimulatedHBase> byQuorum = new ConcurrentHashMap<>();
    final Map<String, SimulatedHBase> bySubnet = new ConcurrentHashMap<>();
    final List<FakeKube> kubes = new ArrayList<>();
    final Counting counting = new Counting();
    volatile String slowIp;

    Point(int run, int clusters, int replicas, boolean ownProcess) {
      this.run = run;
      this.clusters = clusters;
      this.replicas = replicas;
      this.ownProcess = ownProcess;
    }

    Map<String, Object> run(boolean slowServer) throws Exception {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("statefulSets", clusters);
      r.put("regionServers", clusters * replicas);
      r.put("policies", clusters);
      r.put("operatorOwnProcess", ownProcess);
      for (int c = 0; c < clusters; c++) {
        cluster(c);
      }
      await()
          .atMost(Duration.ofMinutes(5))
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> kubes.stream().allMatch(k -> k.allReadyAndRegistered(replicas)));
      kubes.forEach(k -> k.maxDown = 0);
      // the simulation alone (simulated kubelets and HBase, their clients): what the operator's
      // heap is measured against
      long simulationHeap = heapAfterGcMiB();
      r.put("simulationHeapAfterGcMiB", simulationHeap);

      HBaseBridge bridge = null;
      OperatorUnderTest op;
      if (ownProcess) {
        bridge = new HBaseBridge(byQuorum::get, probe());
        op =
            OperatorUnderTest.process(
                kubeConfigYaml,
                bridge.url(),
                OPERATOR_JVM,
                OUT.resolve("operator-process-" + run + ".log"));
      } else {
        BlockCachePolicyReconciler reconciler =
            new BlockCachePolicyReconciler(
                Clock.systemUTC(),
                (settings, login) -> byQuorum.get(settings.get("hbase.zookeeper.quorum")),
                probe());
        op =
            OperatorUnderTest.inThisJvm(
                new BlockCacheOperator(counting.client, Set.of(), null, reconciler));
      }
      try {
        // the first roll: every policy created at once, every StatefulSet rolled
        Usage u0 = Usage.now(op);
        Map<String, Long> c0 = counting.snapshot();
        Histogram h0 = Histogram.of(op.metrics(), null);
        Instant t0 = Instant.now();
        ReconcileSampler sampler = new ReconcileSampler(50);
        try {
          for (String ns : namespaces) {
            policy(ns);
          }
          await()
              .atMost(Duration.ofMinutes(30))
              .pollInterval(Duration.ofSeconds(2))
              .until(() -> namespaces.stream().allMatch(Point::idleAndApplied));
        } finally {
          sampler.close();
        }
        Duration roll = Duration.between(t0, Instant.now());
        r.put("rollSeconds", roll.toMillis() / 1000.0);
        r.put("podsRestarted", kubes.stream().mapToInt(k -> k.deletes.size()).sum());
        r.put("mostDownInOneStatefulSet", kubes.stream().mapToInt(k -> k.maxDown).max().orElse(0));
        Map<String, Object> rolling =
            window(c0, counting.snapshot(), roll, u0, Usage.now(op), h0, op, null);
        if (!ownProcess) {
          rolling.put("reconcileThreads", sampler.report(12, (Long) rolling.get("reconciles")));
        }
        r.put("rolling", rolling);
        assertThat((int) r.get("podsRestarted")).isEqualTo(clusters * replicas);

        settle();
        // idle: what a cluster with nothing to do costs
        u0 = Usage.now(op);
        c0 = counting.snapshot();
        h0 = Histogram.of(op.metrics(), null);
        int s0 = scrapes();
        Thread.sleep(IDLE.toMillis());
        Map<String, Object> idle =
            window(c0, counting.snapshot(), IDLE, u0, Usage.now(op), h0, op, null);
        idle.put("scrapesPerMinute", round((scrapes() - s0) * 60.0 / IDLE.toSeconds()));
        r.put("idle", idle);
        if (ownProcess) {
          // the operator's process alone: its heap, RSS (now and at most so far) and NMT
          r.put("operatorProcess", OperatorUnderTest.Proc.memory(op.pid()));
        }
        long heap = heapAfterGcMiB();
        r.put("heapAfterGcMiB", heap);
        // what the operator holds, at most: the simulation's own state only grows meanwhile (a
        // heap measured after the operator's stop would still count what its objects reach)
        r.put("operatorHeapAtMostMiB", heap - simulationHeap);
        r.put(
            "heapCommittedMiB",
            ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted() >> 20);
        r.put(
            "nonHeapCommittedMiB",
            ManagementFactory.getMemoryMXBean().getNonHeapMemoryUsage().getCommitted() >> 20);
        r.put("rssMiB", Usage.rssKiB() >> 10);
        r.put("nativeMemoryCommittedMiB", nativeMemoryMiB());
        r.put("threads", Thread.activeCount());

        // a roll users start every day: a spec change (tuning.writerThreads) on every policy at
        // once; no ConfigMap, budget or volume template to create, only the roll itself
        u0 = Usage.now(op);
        c0 = counting.snapshot();
        h0 = Histogram.of(op.metrics(), null);
        int deletes0 = kubes.stream().mapToInt(k -> k.deletes.size()).sum();
        kubes.forEach(k -> k.maxDown = 0);
        t0 = Instant.now();
        sampler = new ReconcileSampler(50);
        StatusChanges changes = new StatusChanges(client);
        try {
          for (String ns : namespaces) {
            client
                .resources(BlockCachePolicy.class)
                .inNamespace(ns)
                .withName("cache")
                .edit(
                    p -> {
                      p.getSpec().setTuning(new TuningSpec().setWriterThreads(4));
                      return p;
                    });
          }
          await()
              .atMost(Duration.ofMinutes(30))
              .pollInterval(Duration.ofSeconds(2))
              .until(
                  () ->
                      kubes.stream().mapToInt(k -> k.deletes.size()).sum() - deletes0
                              >= clusters * replicas
                          && namespaces.stream().allMatch(Point::idleAndApplied));
        } finally {
          sampler.close();
          changes.close();
        }
        Duration specRoll = Duration.between(t0, Instant.now());
        Map<String, Object> second =
            window(c0, counting.snapshot(), specRoll, u0, Usage.now(op), h0, op, null);
        second.put("rollSeconds", specRoll.toMillis() / 1000.0);
        second.put(
            "podsRestarted", kubes.stream().mapToInt(k -> k.deletes.size()).sum() - deletes0);
        second.put(
            "mostDownInOneStatefulSet", kubes.stream().mapToInt(k -> k.maxDown).max().orElse(0));
        if (!ownProcess) {
          second.put("reconcileThreads", sampler.report(12, (Long) second.get("reconciles")));
        }
        second.put("statusChanges", changes.report(clusters * replicas, 10));
        // the budget (was asserted in RollIT, a functional test): a restart writes the roll's state
        // about four times (admitted, deleted, reloading, back); progress alone waits for those
        assertThat((Double) changes.report(clusters * replicas, 10).get("statusWritesPerRestart"))
            .as("status writes per restart (budget 5): %s", second.get("statusChanges"))
            .isLessThanOrEqualTo(STATUS_WRITES_PER_RESTART_BUDGET);
        r.put("specRoll", second);
        if (ownProcess) {
          // the most it held at once, over both rolls and the idle window
          second.put(
              "operatorProcessRssMiB", OperatorUnderTest.Proc.statusKiB(op.pid(), "VmRSS") >> 10);
          second.put(
              "operatorProcessPeakRssMiB",
              OperatorUnderTest.Proc.statusKiB(op.pid(), "VmHWM") >> 10);
        }
        assertThat((int) second.get("podsRestarted")).isEqualTo(clusters * replicas);

        if (slowServer) {
          // one RegionServer's /jmx answers after 10 s: the other policies' reconciles
          String slowNs = namespaces.get(0);
          slowIp = kubes.get(0).ip(0);
          u0 = Usage.now(op);
          c0 = counting.snapshot();
          h0 = Histogram.of(op.metrics(), slowNs);
          Histogram own0 = Histogram.only(op.metrics(), slowNs);
          Thread.sleep(SLOW.toMillis());
          Map<String, Object> slow =
              window(c0, counting.snapshot(), SLOW, u0, Usage.now(op), h0, op, slowNs);
          Histogram own = Histogram.only(op.metrics(), slowNs).minus(own0);
          slow.put("slowPolicyReconciles", own.count);
          slow.put("slowPolicyReconcileP50Ms", own.quantileMs(0.5));
          r.put("oneSlowServer", slow);
          slowIp = null;
        }
      } finally {
        cleanUp(op);
        if (bridge != null) {
          bridge.close();
        }
      }
      System.out.println("OPERATOR POINT " + Serialization.asJson(r));
      return r;
    }

    private Map<String, Object> window(
        Map<String, Long> c0,
        Map<String, Long> c1,
        Duration d,
        Usage u0,
        Usage u1,
        Histogram h0,
        OperatorUnderTest op,
        String excludeNs) {
      Map<String, Object> w = new LinkedHashMap<>();
      double minutes = d.toMillis() / 60000.0;
      Map<String, Object> byVerb = new TreeMap<>();
      long writes = 0;
      for (var e : c1.entrySet()) {
        long n = e.getValue() - c0.getOrDefault(e.getKey(), 0L);
        if (n > 0) {
          byVerb.put(e.getKey(), round(n / minutes));
          if (Counting.WRITES.contains(e.getKey())) {
            writes += n;
          }
        }
      }
      w.put("seconds", d.toSeconds());
      w.put("requestsPerMinuteByVerb", byVerb);
      w.put("writesPerMinute", round(writes / minutes));
      Histogram h = Histogram.of(op.metrics(), excludeNs).minus(h0);
      w.put("reconciles", h.count);
      w.put("reconcileP50Ms", h.quantileMs(0.5));
      w.put("reconcileP99Ms", h.quantileMs(0.99));
      Histogram patches = u1.statusPatches().minus(u0.statusPatches());
      w.put("statusPatches", patches.count);
      w.put("apiServerStatusPatchP50Ms", patches.quantileMs(0.5));
      w.put("apiServerStatusPatchP99Ms", patches.quantileMs(0.99));
      double wall = d.toMillis() / 1000.0;
      w.put("jvmCpuCores", round((u1.jvmCpuNanos - u0.jvmCpuNanos) / 1e9 / wall));
      if (op.ownProcess()) {
        w.put("requestsCounted", false); // another process's client: see the in-JVM points
      }
      w.put("apiServerAndEtcdCpuCores", round((u1.apiTicks - u0.apiTicks) / 100.0 / wall));
      w.put("rssMiB", Usage.rssKiB() >> 10);
      w.put("loadAverage", Usage.loadAverage());
      return w;
    }

    void cluster(int c) {
      String ns = "scale-" + run + "-" + c;
      namespaces.add(ns);
      String quorum = "zk." + ns;
      FakeKube.tenant(client, ns, quorum, replicas);
      SimulatedHBase hbase = new SimulatedHBase(Instant::now);
      hbase.reportDelay = Duration.ofMillis(300);
      Map<String, List<String>> regions = new LinkedHashMap<>();
      for (int i = 0; i < replicas; i++) {
        List<String> rs = new ArrayList<>();
        for (int k = 0; k < REGIONS_PER_SERVER; k++) {
          rs.add("r" + c + "x" + i + "x" + k);
        }
        regions.put("rs-" + i, rs);
      }
      FakeKube kube = new FakeKube(client, ns, "rs", hbase, regions);
      kube.tick = Duration.ofSeconds(1); // 50 of them: 150 API requests/s, not 1000
      kube.subnet = "10." + run + "." + c + ".";
      byQuorum.put(quorum, hbase);
      bySubnet.put(kube.subnet, hbase);
      kubes.add(kube.start());
    }

    /** Scrapes go to the simulated cluster of the pod's subnet; {@link #slowIp} answers late. */
    CacheProbe probe() {
      return new CacheProbe() {
        @Override
        public CacheSample scrape(String host, int infoPort) throws IOException {
          if (host.equals(slowIp)) {
            try {
              Thread.sleep(10_000);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IOException(e);
            }
          }
          return at(host).probe().scrape(host, infoPort);
        }

        @Override
        public Long gcTimeMillis(String host, int infoPort) throws IOException {
          return at(host).probe().gcTimeMillis(host, infoPort);
        }

        private SimulatedHBase at(String host) throws IOException {
          SimulatedHBase h = bySubnet.get(host.substring(0, host.lastIndexOf('.') + 1));
          if (h == null) {
            throw new IOException("connection refused: " + host);
          }
          return h;
        }
      };
    }

    void policy(String ns) {
      String doc =
          "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata:\n"
              + "  name: cache\n  namespace: "
              + ns
              + "\nspec:\n  targetRef:\n    name: rs\n  hbaseSiteConfigMap: hbase-site\n"
              + "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n";
      client.resource(Serialization.unmarshal(doc, BlockCachePolicy.class)).create();
    }

    static boolean idleAndApplied(String ns) {
      BlockCachePolicy p =
          client.resources(BlockCachePolicy.class).inNamespace(ns).withName("cache").get();
      return p != null
          && p.getStatus() != null
          && p.getStatus().getRollout() != null
          && p.getStatus().getRollout().getPhase() == Phase.Idle
          && Conditions.find(p.getStatus().getConditions(), "Ready")
              .map(c -> "True".equals(c.getStatus()))
              .orElse(false);
    }

    /** Until no policy's status has changed for a metrics interval (30 s) and 5 s. */
    void settle() {
      Map<String, String> seen = new ConcurrentHashMap<>();
      long[] since = {System.nanoTime()};
      await()
          .atMost(Duration.ofMinutes(5))
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () -> {
                for (var p :
                    client.resources(BlockCachePolicy.class).inAnyNamespace().list().getItems()) {
                  String key = p.getMetadata().getNamespace();
                  String rv = p.getMetadata().getResourceVersion();
                  if (!rv.equals(seen.put(key, rv))) {
                    since[0] = System.nanoTime();
                  }
                }
                return System.nanoTime() - since[0] > Duration.ofSeconds(35).toNanos();
              });
    }

    private int scrapes() {
      return byQuorum.values().stream().mapToInt(h -> h.scrapes).sum();
    }

    /** Policies deleted while the operator runs (it removes its finalizer), then the rest. */
    void cleanUp(OperatorUnderTest op) {
      try {
        for (String ns : namespaces) {
          client.resources(BlockCachePolicy.class).inNamespace(ns).withName("cache").delete();
        }
        await()
            .atMost(Duration.ofMinutes(5))
            .until(
                () ->
                    namespaces.stream()
                        .allMatch(
                            ns ->
                                client
                                        .resources(BlockCachePolicy.class)
                                        .inNamespace(ns)
                                        .withName("cache")
                                        .get()
                                    == null));
      } finally {
        op.close();
        kubes.forEach(FakeKube::close);
        counting.client.close();
        for (String ns : namespaces) {
          client.apps().statefulSets().inNamespace(ns).delete();
          client.pods().inNamespace(ns).delete();
          client.persistentVolumeClaims().inNamespace(ns).delete();
          client.configMaps().inNamespace(ns).delete();
        }
      }
    }
  }

  /** Every request the operator's client sends, by verb (LIST and WATCH told from GET). */
  static final class Counting {
    static final Set<String> WRITES = Set.of("CREATE", "UPDATE", "PATCH", "DELETE");
    final Map<String, AtomicLong> byVerb = new ConcurrentHashMap<>();
    final KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(OperatorScaleBench.client.getConfiguration())
            .withHttpClientBuilderConsumer(
                b ->
                    b.addOrReplaceInterceptor(
                        "count",
                        new Interceptor() {
                          @Override
                          public void before(
                              BasicBuilder builder, HttpRequest request, RequestTags tags) {
                            byVerb
                                .computeIfAbsent(verb(request), k -> new AtomicLong())
                                .incrementAndGet();
                          }
                        }))
            .build();

    Map<String, Long> snapshot() {
      Map<String, Long> m = new TreeMap<>();
      byVerb.forEach((k, v) -> m.put(k, v.get()));
      return m;
    }

    static String verb(HttpRequest request) {
      switch (request.method()) {
        case "POST":
          return "CREATE";
        case "PUT":
          return "UPDATE";
        case "PATCH":
          return "PATCH";
        case "DELETE":
          return "DELETE";
        default:
          break;
      }
      String query = request.uri().getRawQuery();
      if (query != null && query.contains("watch=true")) {
        return "WATCH";
      }
      // /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]] or /apis/GROUP/VERSION/...
      List<String> s =
          new ArrayList<>(Arrays.asList(request.uri().getPath().replaceAll("^/+", "").split("/")));
      s = s.subList(s.get(0).equals("api") ? 2 : 3, s.size());
      if (s.size() >= 2 && s.get(0).equals("namespaces") && s.size() > 2) {
        s = s.subList(2, s.size());
      }
      return s.size() == 1 ? "LIST" : "GET";
    }
  }

  /**
   * The operator's reconcile-time histogram ({@code
   * operator_sdk_controllers_execution_reconcile_seconds}) summed by bucket over its series, as
   * {@code histogram_quantile(q, sum by (le) (...))} reads it.
   */
  static final class Histogram {
    static final Pattern BUCKET =
        Pattern.compile(
            "^operator_sdk_controllers_execution_reconcile_seconds_bucket\\{(.*)\\} (\\S+)$");
    static final Pattern LE = Pattern.compile("le=\"([^\"]+)\"");
    final TreeMap<Double, Double> buckets = new TreeMap<>();
    long count;

    /** Every series, but those of {@code excludeNs} when given. */
    static Histogram of(String scrape, String excludeNs) {
      return parse(
          scrape, labels -> excludeNs == null || !labels.contains("\"" + excludeNs + "\""));
    }

    static Histogram only(String scrape, String ns) {
      return parse(scrape, labels -> labels.contains("\"" + ns + "\""));
    }

    static final Pattern API_BUCKET =
        Pattern.compile("^apiserver_request_duration_seconds_bucket\\{(.*)\\} (\\S+)$");

    /** The API server's request duration for one verb on one resource (and subresource). */
    static Histogram apiServer(String scrape, String verb, String resource, String subresource) {
      return parse(
          scrape,
          API_BUCKET,
          labels ->
              labels.contains("verb=\"" + verb + "\"")
                  && labels.contains("resource=\"" + resource + "\"")
                  && labels.contains("subresource=\"" + subresource + "\""));
    }

    private static Histogram parse(String scrape, java.util.function.Predicate<String> keep) {
      return parse(scrape, BUCKET, keep);
    }

    private static Histogram parse(
        String scrape, Pattern bucket, java.util.function.Predicate<String> keep) {
      Histogram h = new Histogram();
      for (String line : scrape.split("\n")) {
        Matcher m = bucket.matcher(line);
        if (m.matches() && keep.test(m.group(1))) {
          Matcher le = LE.matcher(m.group(1));
          if (le.find()) {
            double bound =
                le.group(1).equals("+Inf")
                    ? Double.POSITIVE_INFINITY
                    : Double.parseDouble(le.group(1));
            h.buckets.merge(bound, Double.parseDouble(m.group(2)), Double::sum);
          }
        }
      }
      h.count = Math.round(h.buckets.getOrDefault(Double.POSITIVE_INFINITY, 0.0));
      return h;
    }

    Histogram minus(Histogram before) {
      Histogram d = new Histogram();
      buckets.forEach((b, n) -> d.buckets.put(b, n - before.buckets.getOrDefault(b, 0.0)));
      d.count = count - before.count;
      return d;
    }

    /** Linear interpolation within the bucket, as Prometheus does; null without observations. */
    Double quantileMs(double q) {
      if (count <= 0) {
        return null;
      }
      double rank = q * count;
      double lower = 0;
      double below = 0;
      for (var e : buckets.entrySet()) {
        if (e.getValue() >= rank) {
          if (e.getKey().isInfinite()) {
            return round(lower * 1000);
          }
          double inBucket = e.getValue() - below;
          double f = inBucket <= 0 ? 1 : (rank - below) / inBucket;
          return round((lower + (e.getKey() - lower) * f) * 1000);
        }
        lower = e.getKey();
        below = e.getValue();
      }
      return round(lower * 1000);
    }
  }

  /** CPU of this JVM, and of kube-apiserver and etcd (clock ticks from /proc). */
  record Usage(long jvmCpuNanos, long apiTicks, Histogram statusPatches) {
    /** The operator's process CPU (this JVM's when it runs here). */
    static Usage now(OperatorUnderTest op) {
      return new Usage(op.cpuNanos(), apiServerTicks(), apiServerStatusPatches());
    }

    /**
     * The API server's own time for the status patches (all of them are the operator's): its {@code
     * apiserver_request_duration_seconds} histogram, from request received to response written,
     * without the client's side or the network.
     */
    static Histogram apiServerStatusPatches() {
      try {
        return Histogram.apiServer(
            client.raw(client.getMasterUrl().toString().replaceAll("/$", "") + "/metrics"),
            "APPLY", // the API server's verb for a server-side apply patch
            "blockcachepolicies",
            "status");
      } catch (RuntimeException e) {
        return new Histogram();
      }
    }

    static long apiServerTicks() {
      long ticks = 0;
      try (var dirs = Files.list(Path.of("/proc"))) {
        for (Path d : (Iterable<Path>) dirs::iterator) {
          if (!d.getFileName().toString().matches("\\d+")) {
            continue;
          }
          try {
            String stat = Files.readString(d.resolve("stat"));
            String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
            if (comm.equals("kube-apiserver") || comm.equals("etcd")) {
              String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
              ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
            }
          } catch (IOException | RuntimeException e) {
            // gone meanwhile
          }
        }
      } catch (IOException e) {
        return 0;
      }
      return ticks;
    }

    static long rssKiB() {
      return OperatorUnderTest.Proc.statusKiB(ProcessHandle.current().pid(), "VmRSS");
    }

    static String loadAverage() {
      try {
        return Files.readString(Path.of("/proc/loadavg")).split(" ", 4)[0];
      } catch (IOException e) {
        return "?";
      }
    }
  }

  /**
   * What the JVM has committed, by Native Memory Tracking's categories (MiB; empty without {@code
   * -XX:NativeMemoryTracking=summary}): where the RSS goes beyond the heap.
   */
  static Map<String, Long> nativeMemoryMiB() {
    Map<String, Long> out = new LinkedHashMap<>();
    try {
      String summary =
          (String)
              ManagementFactory.getPlatformMBeanServer()
                  .invoke(
                      new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"),
                      "vmNativeMemory",
                      new Object[] {new String[] {"summary"}},
                      new String[] {String[].class.getName()});
      out.putAll(parseNativeMemory(summary));
    } catch (Exception e) {
      out.put("unavailable: " + e, 0L);
    }
    return out;
  }

  /** {@code VM.native_memory summary}'s committed memory by category, MiB. */
  static Map<String, Long> parseNativeMemory(String summary) {
    Map<String, Long> out = new LinkedHashMap<>();
    Matcher m =
        Pattern.compile(
                "^(?:Total|-\\s+(.+?)) ?\\(?(?:: )?reserved=\\d+KB, committed=(\\d+)KB",
                Pattern.MULTILINE)
            .matcher(summary);
    while (m.find()) {
      out.put(m.group(1) == null ? "Total" : m.group(1).trim(), Long.parseLong(m.group(2)) >> 10);
    }
    return out;
  }

  /** The heap in use after a full collection, MiB. */
  static long heapAfterGcMiB() throws InterruptedException {
    System.gc();
    Thread.sleep(1000);
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20;
  }

  static double round(double v) {
    return Math.round(v * 10) / 10.0;
  }

  static Map<String, Object> machine() throws IOException {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cores", Runtime.getRuntime().availableProcessors());
    m.put(
        "memoryGiB",
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize()
            >> 30);
    m.put("java", System.getProperty("java.runtime.version"));
    m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    m.put("maxHeapMiB", Runtime.getRuntime().maxMemory() >> 20);
    m.put(
        "gc",
        ManagementFactory.getGarbageCollectorMXBeans().stream()
            .map(java.lang.management.GarbageCollectorMXBean::getName)
            .toList());
    m.put("jvmArguments", ManagementFactory.getRuntimeMXBean().getInputArguments());
    return m;
  }
}
