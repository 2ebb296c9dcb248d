package dev.hbase.cache.operator.controller;

import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.metrics.CacheProbe;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubeapitest.junit.KubeConfig;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operator's memory beside a namespace flooded with objects no policy names (issue 49): the
 * operator in its own process from its jar ({@link BridgedOperator}) under the chart's JVM options
 * ({@code -Dbench.operatorJvm}, the Makefile's BENCH_OPERATOR_JVM), 50 policies on StatefulSets of
 * two simulated RegionServers each (rollouts paused: no roll, the policies reconcile and scrape),
 * then 320 ConfigMaps of 1 MiB ({@code -Dbench.floodConfigMaps}, {@code
 * -Dbench.floodConfigMapBytes}) in a namespace without a policy, then the operator restarted with
 * them there. Per step: the heap after a full GC, RSS and its peak, whether the process lives. Not
 * a test (run by hand: {@code -Dit.test=CacheMemoryBench}); the figures go to
 * target/bench/cache-memory.json and a {@code CACHE MEMORY} line.
 */
@EnableKubeAPIServer
class CacheMemoryBench {
  static KubernetesClient client;
  @KubeConfig static String kubeConfigYaml;

  static final List<String> OPERATOR_JVM =
      Arrays.stream(System.getProperty("bench.operatorJvm", "").trim().split("\\s+"))
          .filter(x -> !x.isEmpty())
          .toList();

  static final int POLICIES = Integer.getInteger("bench.policies", 50);
  static final int REPLICAS = 2;
  static final int FLOOD = Integer.getInteger("bench.floodConfigMaps", 320);

  /** Each flood ConfigMap's size (its one value a little less), bytes. */
  static final int FLOOD_BYTES = Integer.getInteger("bench.floodConfigMapBytes", 1 << 20);

  static final Duration SETTLE = Duration.ofSeconds(Integer.getInteger("bench.settleSeconds", 60));
  static final Path OUT = Path.of("target/bench");

  final Map<String, SimulatedHBase> byQuorum = new ConcurrentHashMap<>();
  final Map<String, SimulatedHBase> bySubnet = new ConcurrentHashMap<>();
  final List<AutoCloseable> kubes = new ArrayList<>();

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
    Files.createDirectories(OUT);
    List<String> namespaces = new ArrayList<>();
    for (int c = 0; c < POLICIES; c++) {
      namespaces.add(cluster(c));
    }
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("date", Instant.now().toString());
    report.put("jvm", String.join(" ", OPERATOR_JVM));
    report.put("policies", POLICIES);
    report.put("regionServers", POLICIES * REPLICAS);
    report.put("floodConfigMaps", FLOOD);
    report.put("floodConfigMapBytes", FLOOD_BYTES);
    try (HBaseBridge bridge = new HBaseBridge(byQuorum::get, probe())) {
      Operator op = new Operator(bridge, 1);
      try {
        report.put("started", op.started);
        for (String ns : namespaces) {
          policy(ns);
        }
        await()
            .atMost(Duration.ofMinutes(10))
            .pollInterval(Duration.ofSeconds(2))
            .until(() -> namespaces.stream().allMatch(CacheMemoryBench::reconciled));
        Thread.sleep(SETTLE.toMillis());
        report.put("policiesIdle", op.measure());
        write(report);

        // the flood: a namespace without a policy, 320 MiB of ConfigMaps by default
        client
            .resource(
                new NamespaceBuilder().withNewMetadata().withName("noisy").endMetadata().build())
            .create();
        String blob = "x".repeat(Math.max(1, FLOOD_BYTES - 256));
        Instant t0 = Instant.now();
        for (int i = 0; i < FLOOD; i++) {
          client
              .resource(
                  new ConfigMapBuilder()
                      .withNewMetadata()
                      .withName("blob-" + i)
                      .withNamespace("noisy")
                      .endMetadata()
                      .addToData("blob", blob)
                      .build())
              .create();
        }
        report.put("floodSeconds", Duration.between(t0, Instant.now()).toSeconds());
        Thread.sleep(SETTLE.toMillis());
        report.put("flooded", op.measure());
        write(report);
      } finally {
        op.close();
      }
      // a restart with the flood there: the first list of every watched namespace
      op = new Operator(bridge, 2);
      try {
        Thread.sleep(SETTLE.toMillis());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("started", op.started);
        m.putAll(op.measure());
        report.put("restartedBesideTheFlood", m);
      } finally {
        op.close();
      }
    } finally {
      for (AutoCloseable k : kubes) {
        k.close();
      }
    }
    write(report);
    System.out.println("CACHE MEMORY " + Serialization.asJson(report));
  }

  static void write(Map<String, Object> report) throws IOException {
    new com.fasterxml.jackson.databind.ObjectMapper()
        .enable(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT)
        .writeValue(OUT.resolve("cache-memory.json").toFile(), report);
  }

  /**
   * {@link BridgedOperator} from the operator's jar, as {@link OperatorUnderTest#process} starts
   * it, but held here: its RSS is sampled from its first moment (a process that dies of {@code
   * OutOfMemoryError} takes its peak with it), and one that dies while starting is a result.
   */
  final class Operator implements AutoCloseable {
    final Process process;
    final Path log;
    final boolean started;
    final Thread sampler;
    long largestRssKiB;

    Operator(HBaseBridge bridge, int run) throws Exception {
      Path jar = Path.of("../target/hbase-cache-operator.jar");
      log = OUT.resolve("cache-memory-" + run + ".log");
      Path kubeconfig = OUT.resolve("cache-memory.kubeconfig");
      Files.writeString(kubeconfig, kubeConfigYaml);
      int port;
      try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
        port = socket.getLocalPort();
      }
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(OPERATOR_JVM);
      cmd.addAll(
          List.of(
              "-cp",
              jar.toAbsolutePath() + ":" + Path.of("target/test-classes").toAbsolutePath(),
              BridgedOperator.class.getName(),
              bridge.url(),
              Integer.toString(port)));
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
      pb.redirectOutput(log.toFile());
      pb.environment().put("KUBECONFIG", kubeconfig.toAbsolutePath().toString());
      process = pb.start();
      sampler = new Thread(this::sample, "rss-sampler");
      sampler.setDaemon(true);
      sampler.start();
      Instant deadline = Instant.now().plusSeconds(180);
      boolean up = false;
      while (process.isAlive() && Instant.now().isBefore(deadline)) {
        if (Files.readString(log).contains("BRIDGED OPERATOR STARTED")) {
          up = true;
          break;
        }
        Thread.sleep(200);
      }
      started = up;
    }

    private void sample() {
      while (process.isAlive()) {
        long kib = OperatorUnderTest.Proc.statusKiB(process.pid(), "VmRSS");
        synchronized (this) {
          largestRssKiB = Math.max(largestRssKiB, kib);
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    /** The figures now; the largest RSS seen since the last call. */
    Map<String, Object> measure() throws IOException, InterruptedException {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("alive", process.isAlive());
      synchronized (this) {
        m.put("largestRssSeenMiB", largestRssKiB >> 10);
        largestRssKiB = 0;
      }
      if (process.isAlive()) {
        m.putAll(OperatorUnderTest.Proc.memory(process.pid()));
      } else {
        m.put("exitCode", process.exitValue());
        m.put(
            "lastLogLine",
            Files.readAllLines(log).stream()
                .filter(l -> !l.isBlank())
                .reduce((a, b) -> b)
                .orElse(""));
      }
      return m;
    }

    @Override
    public void close() throws Exception {
      try (var in = process.getOutputStream()) {
        in.close(); // BridgedOperator stops when its standard input closes
      } catch (IOException e) {
        // gone already
      }
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
      sampler.interrupt();
    }
  }

  /** The policy's status shows a plan: it was reconciled (its rollout is paused). */
  static boolean reconciled(String ns) {
    BlockCachePolicy p =
        client.resources(BlockCachePolicy.class).inNamespace(ns).withName("cache").get();
    return p != null && p.getStatus() != null && p.getStatus().getPlan() != null;
  }

  String cluster(int c) {
    String ns = "mem-" + c;
    client
        .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
        .create();
    String quorum = "zk." + ns;
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("hbase-site")
                .withNamespace(ns)
                .endMetadata()
                .addToData(
                    "hbase-site.xml",
                    "<configuration>\n<property><name>hbase.zookeeper.quorum</name><value>"
                        + quorum
                        + "</value></property>\n</configuration>\n")
                .build())
        .create();
    client
        .resource(
            new StatefulSetBuilder()
                .withNewMetadata()
                .withName("rs")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withReplicas(REPLICAS)
                .withServiceName("rs")
                .withNewSelector()
                .addToMatchLabels("app", "rs")
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .addToLabels("app", "rs")
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("regionserver")
                .withImage("hbase:2.6.4")
                .withNewResources()
                .addToLimits("memory", new Quantity("4Gi"))
                .addToRequests("memory", new Quantity("4Gi"))
                .endResources()
                .addNewVolumeMount()
                .withName("config")
                .withMountPath("/etc/hbase")
                .endVolumeMount()
                .endContainer()
                .addNewVolume()
                .withName("config")
                .withNewConfigMap()
                .withName("hbase-site")
                .endConfigMap()
                .endVolume()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build())
        .create();
    SimulatedHBase hbase = new SimulatedHBase(Instant::now);
    Map<String, List<String>> regions = new LinkedHashMap<>();
    for (int i = 0; i < REPLICAS; i++) {
      regions.put("rs-" + i, List.of("r" + c + "x" + i));
    }
    FakeKube kube = new FakeKube(client, ns, "rs", hbase, regions);
    kube.tick = Duration.ofSeconds(1);
    kube.subnet = "10.9." + c + ".";
    byQuorum.put(quorum, hbase);
    bySubnet.put(kube.subnet, hbase);
    kubes.add(kube.start());
    return ns;
  }

  static void policy(String ns) {
    String doc =
        "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata:\n  name: cache\n"
            + "  namespace: "
            + ns
            + "\nspec:\n  targetRef:\n    name: rs\n  hbaseSiteConfigMap: hbase-site\n"
            + "  mode: Lru\n  rollout:\n    paused: true\n";
    client.resource(Serialization.unmarshal(doc, BlockCachePolicy.class)).create();
  }

  CacheProbe probe() {
    return new CacheProbe() {
      @Override
      public CacheSample scrape(String host, int infoPort) throws IOException {
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
}
