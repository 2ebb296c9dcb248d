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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the kind suite's scenario classes share, one for the whole run: {@link KindSuite} keeps it
 * in the root {@link ExtensionContext.Store}, sets it up before the first scenario class and JUnit
 * closes it after the last one. {@link #setUp}: the client, the cluster, the report, the JMX
 * sampler, the pod watch, the workload client, the host's Prometheus; {@link #close}: the reader's
 * log, the operator's log, the policy's events, the table of the scenario classes' results, the
 * summary and the step times. Between the two, what the classes hand on: each class's {@link
 * ScenarioOutcome} (a failed step stops its own class only), the needs that could not be
 * established ({@link #unestablished}), what the preconditions compare with ({@link #baseline},
 * {@link #tableLoaded}, {@link #prometheusFollowing}), {@link #readerStart}, {@link #lastRollEnd},
 * the summary and step times.
 *
 * <p>Offline (a directory given: ScenarioIsolationTest), it has a report there and nothing else: no
 * cluster is read.
 */
final class Suite implements ExtensionContext.Store.CloseableResource {
  final Path repo = Path.of(System.getProperty("e2e.repo", "..")).toAbsolutePath().normalize();
  final Path target;
  final Instant suiteStart = Instant.now();
  final List<String> summary = new ArrayList<>();

  /** The scenario classes in run order ({@link KindSuite#scenarios}). */
  final List<Class<?>> scenarios;

  /** The tag expression the run selected its classes by, as the report says it. */
  final String tags;

  /** Null, or the directory of a run without a cluster. */
  private final Path offline;

  /** Each scenario class that began, by simple name, in run order. */
  final Map<String, ScenarioOutcome> outcomes = new LinkedHashMap<>();

  /** The needs that could not be established, by name: which class tried, and why it failed. */
  final Map<String, String> unestablished = new LinkedHashMap<>();

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
  Instant readerStart;
  Instant lastRollEnd;

  /**
   * The suite's policy as the API server returned it when the suite created it (step 2, or a
   * precondition): the spec the suite's policy must have for {@link Needs#suitePolicy}, but for its
   * tuning.writerThreads, which the roll steps change. Null until then.
   */
  dev.hbase.cache.api.v1alpha1.BlockCachePolicy baseline;

  /** The table the reader reads was loaded (step 3, or a precondition). */
  boolean tableLoaded;

  /** Since when the host's Prometheus follows the suite's operator chart (step 1, or a need). */
  Instant prometheusFollowing;

  /**
   * The suite's policy ({@link Cluster#POLICY}) as it was when a step deleted it (step 16, or the
   * namespace step when step 16 did not run): the namespace step gives it back to the operator it
   * installs, so that operator takes over pods this very spec configured.
   */
  dev.hbase.cache.api.v1alpha1.BlockCachePolicy deletedSuitePolicy;

  /**
   * The deleted policy's pods were all Ready on its configuration once it was gone: its roll done
   * when deleted idle, or (step 16, deleted mid-roll) every pod Ready, those its roll had restarted
   * differing only in tuning.writerThreads.
   */
  boolean deletedSuitePolicyIdle;

  /**
   * The scenario class that began last, by its place in {@link #scenarios}, and the step that began
   * last in it, by its {@code @Order}: {@link KindSuite} checks the run order.
   */
  int lastScenarioPlace;

  String lastScenario;
  int lastStepOrder;
  String lastStep;
  private boolean setUpDone;
  private Throwable setUpFailure;

  Suite(List<Class<?>> scenarios, Path offline, String tags) {
    this.scenarios = List.copyOf(scenarios);
    this.offline = offline;
    this.tags = tags;
    this.target = offline != null ? offline : repo.resolve("e2e/target");
  }

  /** A run without a cluster (ScenarioIsolationTest): nothing printed. */
  boolean offline() {
    return offline != null;
  }

  /** A scenario class begins: its outcome, kept for the report's class table. */
  synchronized ScenarioOutcome begin(String name, List<String> classTags) {
    ScenarioOutcome o = new ScenarioOutcome(name, classTags, Instant.now());
    outcomes.put(name, o);
    return o;
  }

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
    if (offline != null) {
      beside = new Beside(null);
      report = new Report(target.resolve("e2e-report.md"), false);
      report.line("offline: no cluster (ScenarioIsolationTest); tags selected: %s", tags);
      return;
    }
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
    report.line(
        "tags selected: %s; scenario classes in run order: %s",
        tags, scenarios.stream().map(Class::getSimpleName).toList());
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
      report.section("Scenario classes");
      ScenarioOutcome.table(scenarios.stream().map(Class::getSimpleName).toList(), outcomes, tags)
          .forEach(report::line);
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
