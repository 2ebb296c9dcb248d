package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static dev.hbase.cache.e2e.Cluster.RS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the kind suite's scenario classes share, one for the whole run: {@link KindSuite} keeps it
 * in the root {@link ExtensionContext.Store}, sets it up before the first scenario class and JUnit
 * closes it after the last one. {@link #setUp} and {@link #close} are what the suite's single class
 * did in its {@code @BeforeAll} and {@code @AfterAll}: the client, the cluster, the report, the JMX
 * sampler, the pod watch, the workload client, the host's Prometheus; at the end the reader's log,
 * the operator's log, the policy's events, the summary and the step times. Between the two, the
 * state the steps hand on: {@link #failed} (a failed step skips every later one, in every class),
 * {@link #readerStart}, {@link #lastRollEnd}, the summary and step times.
 */
final class Suite implements ExtensionContext.Store.CloseableResource {
  final Path repo = Path.of(System.getProperty("e2e.repo", "..")).toAbsolutePath().normalize();
  final Path target = repo.resolve("e2e/target");
  final Instant suiteStart = Instant.now();
  final List<String> summary = new ArrayList<>();

  /**
   * Each step's wall time as "| step | s | result |" rows, for the summary's table (where the
   * suite's time goes).
   */
  final List<String> stepTimes = new ArrayList<>();

  /**
   * Regions per pod around each roll, "| roll | at its end | at the next roll's start |" rows
   * ({@link KindScenario#regionsPerPod}): where HBase's balancer left them between rolls.
   */
  final List<String> balanceRows = new ArrayList<>();

  /**
   * The last roll's label, its regions per pod at its end and when it ended (not {@link
   * #lastRollEnd}: step 6's balancer runs move that on); its row in {@link #balanceRows} is written
   * when the next roll starts, or at the suite's end.
   */
  record RollEnd(String label, String regions, Instant end) {
    String row(String next) {
      return String.format("| %s | %s | %s |", label, regions, next);
    }
  }

  RollEnd rollBeforeNext;

  Settings settings;
  KubernetesClient client;
  Cluster cluster;
  Report report;
  PodWatch watch;
  JmxSampler sampler;
  Prometheus prometheus;
  Workload workload;
  Beside beside;
  boolean failed;
  Instant readerStart;
  Instant lastRollEnd;

  /**
   * The suite's policy ({@link Cluster#POLICY}) as it was when a step deleted it (step 16, or the
   * namespace step when step 16 did not run): the namespace step gives it back to the operator it
   * installs, so that operator takes over pods this very spec configured.
   */
  dev.hbase.cache.api.v1alpha1.BlockCachePolicy deletedSuitePolicy;

  /**
   * The scenario class and the step that began last, by their {@code @Order}: {@link KindSuite}
   * checks the run order.
   */
  int lastScenarioOrder;

  String lastScenario;
  int lastStepOrder;
  String lastStep;
  private boolean setUpDone;
  private Throwable setUpFailure;

  /** {@link #setUp} the first time; after a failed one, every later class fails with its cause. */
  synchronized void setUpOnce() throws Exception {
    if (setUpFailure != null) {
      throw new IllegalStateException(
          "the suite's set-up failed before the first scenario class: " + setUpFailure,
          setUpFailure);
    }
    if (setUpDone) {
      return;
    }
    try {
      setUp();
      setUpDone = true;
    } catch (Throwable t) {
      setUpFailure = t;
      throw t;
    }
  }

  private void setUp() throws Exception {
    beside = Beside.fromEnvironment();
    settings = Settings.load(repo);
    client =
        new KubernetesClientBuilder().withConfig(Config.autoConfigure(settings.context())).build();
    cluster = new Cluster(client, settings);
    report = new Report(target.resolve("e2e-report.md"));
    report.line(
        "cluster context `%s`, HBase namespace `%s`, operator release `%s` in namespace `%s`, images `%s`, `%s` (e2e/kind/lib.sh)",
        settings.context(),
        cluster.ns,
        settings.operatorRelease(),
        cluster.opNs,
        settings.hbaseImage(),
        settings.operatorImage());
    assertThat(cluster.regionServers())
        .as("charts/hbase installed in %s (e2e/e2e.sh does it)", cluster.ns)
        .isNotNull();
    Path jar = target.resolve("workload/workload.jar");
    if (!Files.exists(jar)) {
      Shell.Result r = Shell.run(repo, 300, List.of("e2e/workload/build.sh"));
      assertThat(r.code()).as("e2e/workload/build.sh: %s", r.output()).isZero();
    }
    workload = new Workload(client, cluster.ns, settings.hbaseImage(), jar, settings);
    watch = new PodWatch(client, cluster.ns, RS, REPLICAS);
    List<String> pods = new ArrayList<>();
    for (int i = 0; i < REPLICAS; i++) {
      pods.add(Cluster.pod(i));
    }
    // every 2 s: the kind chart's HBase refreshes /jmx every second (metricsPeriodSeconds)
    sampler = new JmxSampler(client, cluster.ns, pods, Duration.ofSeconds(2));
    Path bin = repo.resolve("bin/prometheus");
    if (!Files.isExecutable(bin)) {
      Shell.Result r = Shell.run(repo, 300, List.of("e2e/kind/tools.sh", "prometheus"));
      assertThat(r.code()).as("e2e/kind/tools.sh prometheus: %s", r.output()).isZero();
    }
    // scrapes nothing until step 1 has installed the chart's ServiceMonitor, PodMonitor and
    // PrometheusRule
    prometheus = Prometheus.start(bin, target.resolve("prometheus"), client.getConfiguration());
  }

  /** After the last scenario class (JUnit closes the root store's resources when the run ends). */
  @Override
  public void close() throws Exception {
    try {
      if (report == null) {
        return; // setUp failed before there was a report
      }
      if (readerStart != null) {
        String log = KindScenario.safe(() -> workload.log(KindScenario.READER));
        if (log != null) {
          Files.writeString(target.resolve("reader.log"), log);
          Workload.Stats all = Workload.stats(log, readerStart, Instant.now());
          report.section("Reader over the whole run");
          report.line("- %s", all.summary());
          all.errors().stream().limit(20).forEach(e -> report.line("  - `%s`", e));
        }
        KindScenario.safe(
            () -> {
              workload.delete(KindScenario.READER);
              return null;
            });
      }
      if (sampler != null) {
        Files.writeString(target.resolve("jmx-samples.csv"), sampler.csv());
      }
      String opLog = cluster == null ? null : KindScenario.safe(cluster::operatorLogs);
      if (opLog != null) {
        Files.writeString(target.resolve("operator.log"), opLog);
        long forbidden = opLog.lines().filter(l -> l.toLowerCase().contains("forbidden")).count();
        report.line(
            "- the log of the operator installed last (the namespace-scoped one after step 18): %d lines, %d mention `forbidden` (saved to e2e/target/operator.log)",
            opLog.lines().count(), forbidden);
      }
      String events = cluster == null ? null : KindScenario.safe(cluster::allPolicyEvents);
      if (events != null) {
        Files.writeString(target.resolve("policy-events.txt"), events);
      }
      report.section("Summary");
      summary.forEach(s -> report.line("- %s", s));
      report.line(
          "- suite wall time: %d s", Duration.between(suiteStart, Instant.now()).toSeconds());
      if (rollBeforeNext != null) {
        balanceRows.add(rollBeforeNext.row("(no later roll)"));
      }
      report.section("Regions per pod around each roll");
      report.line(
          "All regions each RegionServer holds (/jmx), pods in ordinal order; a figure, not asserted:"
              + " between two rolls HBase's balancer may run (its period is HBase's 5 min on the kind chart;"
              + " step 6 runs it three times), and the steps that are not rolls (stops, scale-downs,"
              + " the spread some steps begin with) move regions too. A roll whose step failed before its"
              + " measurement has no row.");
      report.line("| roll | once its windows of reads were over | at the next roll's start |");
      report.line("|---|---|---|");
      balanceRows.forEach(report::line);
      if (balanceRows.isEmpty()) {
        report.line("| none | | |");
      }
      report.section("Where the suite's time went");
      report.line(
          "The last column: the parts of .ci/run seen running beside the step (sampled every 5 s;"
              + " none outside .ci/run) and the highest 1-minute load average on this machine's"
              + " %d cores meanwhile. The step's figures were measured under that load.",
          Runtime.getRuntime().availableProcessors());
      report.line(
          "| step | wall time | reader: reads / failed / seconds with no successful read / worst second's p99 | result | beside it |");
      report.line("|---|---:|---|---|---|");
      stepTimes.forEach(report::line);
    } finally {
      if (beside != null) {
        beside.close();
      }
      if (sampler != null) {
        sampler.close();
      }
      if (prometheus != null) {
        prometheus.close();
      }
      if (watch != null) {
        watch.close();
      }
      if (client != null) {
        client.close();
      }
    }
  }
}
